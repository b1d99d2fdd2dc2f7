"""A client that stops reading fills the kernel's buffers; the write that does not fit is taken in part. What the
socket did not take must still go out, whole and in order, before anything else (docs/ARCHITECTURE.md, "Writing").
"""
from __future__ import annotations

import json
import struct

from rawws import RawClient

ITEM = "x" * 20_000


def test_what_a_full_socket_did_not_take_still_arrives_whole_and_in_order(start_server):
    # Each append is one ~40 KB patch (the item and its label), written to the stuck client as soon as it is made (one
    # intent at a time: a quiet room's direct write), so 150 of them (6 MB) pass what its socket and the server's can
    # hold: one write is cut short (with a 4 KiB receive buffer, the ~30th here, after ~1.4 KB of it), and every write
    # after it must wait behind the rest of that one.
    # (Checked: with the rest of a short write dropped, the client reads a frame header inside a message.)
    server = start_server("--rate", "100000", "--burst", "100000")
    stuck = RawClient(server.port, recv_buffer=4096)
    assert stuck.read_json()["type"] == "welcome"
    stuck.send_text({"type": "join", "room": "demo", "name": "stuck"})
    driver = server.client()
    driver.join()
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
