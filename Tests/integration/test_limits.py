"""Limits: rate, connections, rooms, slow consumers. Each refusal is typed and others keep being served."""
import json
import threading
import struct
import time

import pytest
from websockets.exceptions import ConnectionClosed

from livecontrols_client import Client
from rawws import RawClient, encode_frame


def closed_with(client, timeout=10):
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            client.ws.recv(timeout=timeout)
    return closed.value.rcvd.code if closed.value.rcvd else None


def test_rate_limit_refuses_with_a_typed_error_then_closes_on_abuse(start_server):
    s = start_server("--rate", "0.001", "--burst", "5")  # refills one token every 1,000 s: no timing in the test
    c = s.client()
    c.join()  # 1 token
    for i in range(4):
        c.send({"type": "intent", "id": i, "room": "demo", "control": "quantity", "intent": "next"})
    c.send({"type": "intent", "id": "over", "room": "demo", "control": "quantity", "intent": "next"})
    err = c.recv(lambda m: m.get("id") == "over")
    assert err["type"] == "error" and err["code"] == "rate_limited"
    other = s.client()
    assert other.join()["type"] == "snapshot"
    # "over" was refusal 1 of the 50 a connection may get, each answered; the message after them closes it.
    # Flood them in one go (issue 17: the close came on refusal 50, and discarded error replies still queued); a
    # client that goes on sending past the close is the next test.
    for i in range(50):
        c.send({"type": "intent", "id": f"x{i}", "room": "demo", "control": "quantity", "intent": "next"})
    refused = []
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            message = json.loads(c.ws.recv(timeout=10))
            if message.get("code") == "rate_limited":
                refused.append(message["id"])
    assert closed.value.rcvd and closed.value.rcvd.code == 1008
    assert refused == [f"x{i}" for i in range(49)], "every refusal before the close is answered, in order"
    assert other.intent("quantity", "next")["type"] == "ack"


def test_a_client_that_floods_past_the_close_still_gets_every_refusal_then_1008(start_server):
    """Issue 17: a client that goes on sending (here 2,000 intents in one write, never reading) still reads, once it
    does, every refusal in order and then the close frame with 1008 — what it sent after the close is dropped."""
    s = start_server("--rate", "0.001", "--burst", "5")
    c = RawClient(s.port)
    c.send_text({"type": "join", "room": "demo"})
    while c.read_json()["type"] != "snapshot":
        pass  # the welcome first
    blob = b"".join(encode_frame(0x1, json.dumps({"type": "intent", "id": f"x{i}", "room": "demo", "control": "quantity",
                                                  "intent": "next"}).encode()) for i in range(2_000))
    try:
        c.sock.sendall(blob)
    except OSError:
        pass  # the server may have closed before it read all of it: what it had answered is still to be read
    replies = []
    while True:
        opcode, payload = c.read_frame()
        if opcode == 8:
            assert struct.unpack("!H", payload[:2])[0] == 1008
            break
        replies.append(json.loads(payload))
    assert [m["id"] for m in replies if m["type"] == "ack"] == [f"x{i}" for i in range(4)], "the burst's four tokens"
    errors = [(m["code"], m["id"]) for m in replies if m["type"] == "error"]
    assert errors == [("rate_limited", f"x{i}") for i in range(4, 54)], "50 refusals, in order, then the close"
    assert s.client().join()["type"] == "snapshot", "the server goes on serving"


def test_a_steady_flood_at_four_times_the_rate_is_closed_with_1008(start_server):
    """Issue 38: 200 messages a second against 50 get one in four through, so refusals never came 50 in a row and the
    connection was kept for good (13,016 refusals, no close). Counted net of a drain of 5 a second, it is closed."""
    s = start_server()  # the defaults: 50/s, bursts of 100, 50 refusals
    c = RawClient(s.port)
    c.send_text({"type": "join", "room": "demo"})
    while c.read_json()["type"] != "snapshot":
        pass
    closed = threading.Event()
    codes = []

    def read():
        try:
            while True:
                opcode, payload = c.read_frame()
                if opcode == 8:
                    codes.append(struct.unpack("!H", payload[:2])[0])
                    break
        except Exception:
            pass
        closed.set()

    threading.Thread(target=read, daemon=True).start()
    started = time.monotonic()
    i = 0
    while not closed.is_set() and time.monotonic() - started < 10:
        try:
            c.send_text({"type": "intent", "id": i, "room": "demo", "control": "quantity", "intent": "set", "args": {"value": i % 10}})
        except OSError:
            break
        i += 1
        time.sleep(max(0.0, started + i / 200 - time.monotonic()))  # paced at 200 a second
    assert closed.wait(5) and codes == [1008], f"after {i} messages in {time.monotonic() - started:.1f} s: {codes}"
    assert time.monotonic() - started < 4, "the burst lasts 0.67 s; the count passes 50 about 0.35 s later"
    assert s.client().join()["type"] == "snapshot", "the server goes on serving"


def test_connection_limit_closes_the_extra_connection_with_1013(start_server):
    s = start_server("--max-connections", "2")
    a, b = s.client(), s.client()
    extra = RawClient(s.port)
    with pytest.raises(ConnectionAbortedError) as closed:
        extra.read_json()
    assert closed.value.args[0] == 1013
    a.close()
    # A place is free again.
    s.client().join()
    b.join()


def test_room_limit_refuses_new_rooms_with_room_limit(start_server):
    s = start_server("--max-rooms", "2")
    c = s.client()
    assert c.join("second")["type"] == "snapshot"  # demo + second
    err = c.join("third", id="j")
    assert err["type"] == "error" and err["code"] == "room_limit" and err["id"] == "j"
    assert c.join("demo")["type"] == "snapshot"


def drive(driver: Client, n: int) -> int:
    """Sends `n` pipelined `set` intents; returns the room version the last one was acked at."""
    for i in range(n):
        driver.send({"type": "intent", "id": i, "room": "demo", "control": "quantity", "intent": "set", "args": {"value": i % 90}})
    last = driver.recv(lambda m: m.get("id") == n - 1, timeout=60)
    assert last["type"] == "ack", last
    return last["version"]


def test_slow_consumer_gets_a_fresh_snapshot_and_never_a_gap(start_server):
    s = start_server("--rate", "100000", "--burst", "100000", "--room-queue", "100000", "--outbox-messages", "256", "--slow-consumer-timeout-ms", "60000")
    stuck = RawClient(s.port, recv_buffer=4096)
    assert stuck.read_json()["type"] == "welcome"
    stuck.send_text({"type": "join", "room": "demo", "name": "stuck"})
    fast, driver = s.client(), s.client()
    fast.join()
    driver.join()
    # 40,000 patches (~6 MB) is more than the kernel buffers between server and client can hold.
    target = drive(driver, 40000)  # the stuck client reads nothing meanwhile
    fast.wait_version(target, timeout=60)
    driver.wait_version(target, timeout=60)
    # The fast client never saw a gap (Client checks each patch is version + 1, or a snapshot replaces all).
    assert fast.state() == driver.state()
    read_until_resynced(stuck, target)
    stuck.close()


def read_until_resynced(stuck: RawClient, target: int) -> None:
    """The stuck client reads: versions are continuous until a snapshot (no `id`) replaces its state."""
    state, version, saw_resync = None, None, False
    while version is None or version < target:
        m = stuck.read_json()
        if m["type"] == "snapshot":
            assert "id" not in m or state is None
            saw_resync = saw_resync or state is not None
            state, version = m["state"], m["version"]
        elif m["type"] == "patch":
            assert m["version"] == version + 1, f"gap: {version} -> {m['version']}"
            version = m["version"]
    assert saw_resync, "the slow consumer should have been resynced by a snapshot"


def test_slow_consumer_that_never_catches_up_is_closed(start_server):
    s = start_server("--rate", "100000", "--burst", "100000", "--room-queue", "100000", "--outbox-messages", "32", "--slow-consumer-timeout-ms", "500")
    stuck = RawClient(s.port, recv_buffer=4096)
    stuck.read_json()
    stuck.send_text({"type": "join", "room": "demo"})
    driver = s.client()
    driver.join()
    drive(driver, 40000)
    # Keep traffic flowing until the server gives up on the stuck client (sweeps run every second).
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if s.connections() == 1:
            break
        drive(driver, 50)
    else:
        pytest.fail("the stuck client was never closed")
    assert driver.intent("quantity", "next")["type"] == "ack"
    # What the client sees, as PROTOCOL.md says: what the kernel still held for it, then the end of the TCP
    # connection without a close frame (its library reports 1006).
    opcodes = []
    with pytest.raises((EOFError, ConnectionError)):
        while True:
            op, _ = stuck.read_frame()
            opcodes.append(op)
    assert opcodes and 8 not in opcodes, f"no close frame reaches a client that reads nothing: {sorted(set(opcodes))}"
    stuck.close()


def test_a_client_that_never_answers_pings_is_dropped(start_server):
    s = start_server("--ping-interval", "1", "--idle-timeout", "2")
    silent = RawClient(s.port)  # reads frames but never answers a ping
    silent.read_json()
    live = s.client()  # the websockets library answers pings by itself
    live.join()
    opcodes = []
    with pytest.raises((EOFError, ConnectionError, ConnectionAbortedError)):
        while True:
            op, _ = silent.read_frame()
            opcodes.append(op)
    assert 9 in opcodes, "the server pinged the idle client first"
    assert live.intent("quantity", "next")["type"] == "ack", "a client that answers pings stays"


def test_a_client_that_only_answers_pings_stays(start_server):
    """A quiet client that answers every ping (as browsers do) is never dropped: its pongs count as heard."""
    s = start_server("--ping-interval", "1", "--idle-timeout", "2")
    quiet = RawClient(s.port)
    quiet.read_json()  # welcome
    pings = 0
    while pings < 4:  # each ping comes after a second of silence: 4 pings span twice the idle timeout
        op, payload = quiet.read_frame()
        assert op != 8, f"closed: {payload!r}"
        if op == 9:
            pings += 1
            quiet.send_frame(0xA, payload)  # the pong echoes the ping's payload
    quiet.send_text({"type": "join", "room": "demo"})
    assert quiet.read_json()["type"] == "snapshot", "still connected after 4 answered pings"
    quiet.close()


def test_a_client_that_keeps_talking_is_not_dropped_for_ignoring_pings(start_server):
    """Any frame from the client shows it is alive, not only a pong (lws's own keepalive dropped it at the idle
    timeout however much it sent)."""
    s = start_server("--ping-interval", "1", "--idle-timeout", "2", "--rate", "100000", "--burst", "100000")
    talker = RawClient(s.port)  # never answers a ping; sends one intent after another
    talker.read_json()
    talker.send_text({"type": "join", "room": "demo"})
    end = time.monotonic() + 5  # 2.5 idle timeouts
    n = 0
    while time.monotonic() < end:
        n += 1
        talker.send_text({"type": "intent", "id": n, "room": "demo", "control": "quantity", "intent": "next"})
        while True:  # read up to this intent's answer (patches and presence come between)
            op, payload = talker.read_frame()
            assert op != 8, f"closed after {n} intents: {payload!r}"
            if op == 1 and json.loads(payload).get("id") == n:
                break
    talker.close()


def test_a_rooms_state_has_a_size_bound_with_a_typed_error(start_server, tmp_path):
    """Issue 18: one editor cannot grow a room past its template's maxStateBytes; shrinking it always works."""
    config = tmp_path / "bounded.json"
    config.write_text('{"templates": {"t": {"controls": {"notes": {"kind": "list", "values": []}}, "maxStateBytes": 8192}}}')
    server = start_server("--config", str(config))
    c = server.client()
    c.join()
    note = "x" * 3000
    assert c.intent("notes", "append", {"value": note})["type"] == "ack"
    assert c.intent("notes", "append", {"value": note})["type"] == "ack"
    refused = c.intent("notes", "append", {"value": note})
    assert refused["code"] == "too_large" and "maxStateBytes" in refused["message"]
    assert c.state()["controls"]["notes"]["count"] == 2
    assert c.intent("notes", "remove", {"id": "i2"})["type"] == "ack"
    assert c.intent("notes", "append", {"value": note})["type"] == "ack", "room again after a remove"
    c.close()


def test_a_close_that_cannot_be_sent_is_bounded_by_the_idle_timeout(start_server):
    """A close the server asked for (1008, rate-limit abuse) waits for the client's queue to drain first, behind a
    snapshot the client never reads; and the client keeps sending, so it is never silent. The connection is still
    dropped, about the idle timeout after the close began (3.1–3.8 s here; lws 4.1 also ends such a connection
    after 5 s on its own, so this checks the promise, not which of the two bounds acts first)."""
    s = start_server("--ping-interval", "1", "--idle-timeout", "2", "--slow-consumer-timeout-ms", "600000",
                     "--rate", "10", "--burst", "50")
    filler = s.client()
    filler.join()
    for i in range(40):  # a ~2.4 MB state: far more than the stuck client's socket buffers hold
        assert filler.intent("person", "append", {"value": {"name": "x" * 60_000, "age": i}})["type"] == "ack"
    stuck = RawClient(s.port, recv_buffer=4096)
    stuck.read_json()  # welcome; from here on it reads nothing
    stuck.send_text({"type": "join", "room": "demo"})
    deadline = time.monotonic() + 10
    while s.connections() == 2:
        assert time.monotonic() < deadline, "the closing connection was never dropped"
        try:
            for _ in range(10):  # 50 refusals in a row, and the server asks to close; then it is never silent
                stuck.send_text({"type": "presence", "room": "demo", "data": {}})
        except (BrokenPipeError, ConnectionResetError):
            pass  # dropped between the count and the send (seen in CI): the loop's next count shows it
    assert "closing connection that ignores the rate limit" in s.stderr()
    assert filler.intent("quantity", "next")["type"] == "ack"
