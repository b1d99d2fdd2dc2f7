"""Faults: abrupt disconnects of holders, connection churn, truncated frames. The server keeps serving."""
import os
import socket
import struct

from rawws import RawClient


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def abort(client: RawClient) -> None:
    """Close with a TCP reset: no close frame, no FIN handshake."""
    client.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    client.sock.close()


def test_a_thousand_abrupt_disconnects_of_holders_leave_no_hold_running(server):
    watcher = server.client()
    watcher.join(name="watcher")
    for i in range(1000):
        holder = RawClient(server.port)
        holder.read_json()  # welcome
        holder.send_text({"type": "join", "room": "demo"})
        holder.send_text({"type": "intent", "id": 1, "room": "demo", "control": "quantity", "intent": "set", "args": {"value": 50}})
        holder.send_text({"type": "intent", "id": 2, "room": "demo", "control": "quantity", "intent": "press",
                          "args": {"direction": "next" if i % 2 else "prev"}})
        while holder.read_json().get("id") != 2:  # the press was applied
            pass
        abort(holder)
    state = watcher.wait_state(lambda s: list(s["presence"]) == [watcher.session], timeout=30)
    assert state["controls"]["quantity"]["holding"] is None
    watcher.expect_silence(lambda m: m["type"] == "patch" and m["cause"]["kind"] == "tick", timeout=0.6)
    assert server.connections() == 1


def test_connect_disconnect_churn_leaves_rss_flat(server):
    cycles = int(os.environ.get("CHURN_CYCLES", "3000"))

    def churn(n):
        for i in range(n):
            c = RawClient(server.port)
            c.read_json()
            c.send_text({"type": "join", "room": f"churn-{i % 4}"})
            c.read_json()  # snapshot
            if i % 2:
                abort(c)
            else:
                c.close()

    churn(500)  # warm up: allocator pools, rooms, lws buffers
    before = rss_kib(server.proc.pid)
    churn(cycles)
    probe = server.client()
    probe.join("churn-0")
    probe.wait_state(lambda s: list(s["presence"]) == [probe.session], room="churn-0", timeout=30)
    after = rss_kib(server.proc.pid)
    assert after - before < 8 * 1024, f"RSS grew from {before} KiB to {after} KiB over {cycles} cycles"


def test_truncated_frame_then_hangup_does_not_disturb_others(server):
    other = server.client()
    other.join()
    c = RawClient(server.port)
    c.read_json()
    # A header promising 1,000 bytes, then 10 of them, then the socket goes away.
    c.sock.sendall(bytes([0x81, 0x80 | 126]) + struct.pack("!H", 1000) + os.urandom(4) + b"0123456789")
    abort(c)
    assert other.intent("quantity", "next")["type"] == "ack"


def test_frame_split_across_many_tcp_writes_is_read_whole(server):
    c = RawClient(server.port)
    c.read_json()
    payload = b'{"type":"join","room":"demo","name":"slow"}'
    mask = os.urandom(4)
    frame = bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    for byte in frame:
        c.sock.sendall(bytes([byte]))
    assert c.read_json()["type"] == "snapshot"
    c.close()
