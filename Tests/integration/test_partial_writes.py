"""A client that stops reading fills the kernel's buffers; the write that does not fit is taken in part. What the
socket did not take must still go out, whole and in order, before anything else (docs/ARCHITECTURE.md, "Writing").
"""
from __future__ import annotations

import json
import socket
import struct

from api_client import API_KEY
from rawws import RawClient

ITEM = "x" * 20_000


def stuck_client_and_driver(start_server):
    """A server without rate limits, a client of `demo` with a 4 KiB receive buffer that will not read, and a driver."""
    server = start_server("--rate", "100000", "--burst", "100000")
    stuck = RawClient(server.port, recv_buffer=4096)
    assert stuck.read_json()["type"] == "welcome"
    stuck.send_text({"type": "join", "room": "demo", "name": "stuck"})
    driver = server.client()
    driver.join()
    return server, stuck, driver


def test_what_a_full_socket_did_not_take_still_arrives_whole_and_in_order(start_server):
    # Each append is one ~40 KB patch (the item and its label), written to the stuck client as soon as it is made (one
    # intent at a time: a quiet room's direct write), so 150 of them (6 MB) pass what its socket and the server's can
    # hold: one write is cut short (with a 4 KiB receive buffer, the ~30th here, after ~1.4 KB of it), and every write
    # after it must wait behind the rest of that one.
    # (Checked: with the rest of a short write dropped, the client reads a frame header inside a message.)
    server, stuck, driver = stuck_client_and_driver(start_server)
    target = None
    for i in range(150):
        ack = driver.intent("person", "append", {"value": {"name": ITEM, "age": i}})
        assert ack["type"] == "ack", ack
        target = ack["version"]
    # A ping while the server still holds the rest of a write for this client: its pong must come between messages.
    stuck.send_frame(0x9, struct.pack("!I", 7))
    version, pongs, fragments = None, 0, None
    while version is None or version < target or pongs == 0:
        op, payload, fin = stuck.read_frame_fin()
        if op == 0xA:  # between messages, or between a message's fragments (RFC 6455 §5.4)
            pongs += 1
            continue
        assert op in (0, 1), f"unexpected opcode {op}: the stream was cut"
        assert (op == 1) == (fragments is None), "a message began inside another one: the stream was cut"
        fragments = (fragments or []) + [payload]
        if not fin:
            continue
        message = json.loads(b"".join(fragments))
        fragments = None
        if message["type"] == "snapshot":  # the join's, or a fresh one if the outbox overflowed (no gap either way)
            version = message["version"]
        elif message["type"] == "patch":
            assert message["version"] == version + 1, f"gap: {version} -> {message['version']}"
            version = message["version"]
            if any(o["path"].startswith("/controls/person/") for o in message["ops"]):
                assert ITEM in json.dumps(message["ops"]), "an item arrived changed"
    assert version == target
    assert pongs == 1
    assert driver.intent("quantity", "next")["type"] == "ack", "the server kept serving everyone else"
    stuck.close()


def test_a_client_that_half_closes_while_a_write_waits_for_it_does_not_stall_the_server(start_server):
    # libwebsockets 4.1 spins for good in one service pass when a connection holding the rest of a short write reads
    # its peer's end (FIN): it closes, the close waits for the write to flush, and it services the same socket again —
    # every client stalled, SIGTERM too (found by Benchmarks/fairness.py: 3,000 clients of a flooded room exiting at
    # once). The server stops reading such a connection until the rest has gone out.
    server, stuck, driver = stuck_client_and_driver(start_server)
    for i in range(150):
        assert driver.intent("person", "append", {"value": {"name": ITEM, "age": i}})["type"] == "ack"
    stuck.sock.shutdown(socket.SHUT_WR)  # FIN, and never read
    for i in range(20):
        assert driver.intent("quantity", "next")["type"] == "ack", "the server kept serving everyone else"
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert s.recv(64).startswith(b"HTTP/1.1 200")
    stuck.close()


def test_an_http_client_that_half_closes_while_its_answer_waits_does_not_stall_the_server(start_server):
    # The same for a large server API answer (6 MB of state) to a client that does not read it: lws 4.1 does not spin
    # there (it was checked), and this keeps it so.
    server = start_server("--rate", "100000", "--burst", "100000", "--api-key", API_KEY)
    driver = server.client()
    driver.join()
    for i in range(150):
        assert driver.intent("person", "append", {"value": {"name": ITEM, "age": i}})["type"] == "ack"
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(("127.0.0.1", server.port))
        s.sendall(b"GET /api/v1/rooms/demo HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + API_KEY.encode() + b"\r\n\r\n")
        s.recv(1)  # the answer has begun
        s.shutdown(socket.SHUT_WR)
        for i in range(5):
            assert driver.intent("quantity", "next")["type"] == "ack", "the server kept serving everyone else"
