"""Messages larger than 64 KiB leave in fragments (RFC 6455 §5.4), so one large snapshot is never one huge write;
docs/PROTOCOL.md, *Transport*."""
from __future__ import annotations

import json
import struct

from rawws import RawClient

FRAGMENT = 65_536


def fill(client, items: int) -> None:
    for i in range(items):
        assert client.intent("person", "append", {"value": {"name": "x" * 60_000, "age": i}})["type"] == "ack"


def test_a_large_snapshot_arrives_in_fragments_of_at_most_64_kib(server, clients):
    filler = clients()
    filler.join()
    fill(filler, 5)  # a ~600 KB snapshot (each item's value and its label)
    raw = RawClient(server.port)
    raw.read_json()  # welcome
    raw.send_text({"type": "join", "room": "demo"})
    frames = []
    while True:
        op, payload, fin = raw.read_frame_fin()
        if op in (0, 1):
            frames.append((op, len(payload), fin))
            if fin:
                break
    assert len(frames) > 2, frames
    assert frames[0][0] == 1 and not frames[0][2], "a text frame without FIN begins the message"
    assert all(op == 0 for op, _, _ in frames[1:]), "continuations follow"
    assert all(not fin for _, _, fin in frames[:-1]) and frames[-1][2], "only the last has FIN"
    assert all(n == FRAGMENT for _, n, _ in frames[:-1]) and 0 < frames[-1][1] <= FRAGMENT
    raw.close()


def test_a_fragmented_snapshot_is_the_whole_snapshot(server, clients):
    filler = clients()
    filler.join()
    fill(filler, 3)
    raw = RawClient(server.port)
    raw.read_json()
    raw.send_text({"type": "join", "room": "demo"})
    snapshot = raw.read_json()  # put together from its fragments
    assert snapshot["type"] == "snapshot"
    assert snapshot["state"]["controls"] == clients().join()["state"]["controls"], "the same as a library client sees"
    raw.close()


def test_pings_are_answered_between_fragments_never_inside_one(server, clients):
    """A client that pings while a large message is on its way gets its pongs between fragments (control frames
    may come there, RFC 6455 §5.4), and the message still arrives whole."""
    filler = clients()
    filler.join()
    fill(filler, 10)  # ~1.2 MB: many fragments
    raw = RawClient(server.port, recv_buffer=8192)
    raw.read_json()
    raw.send_text({"type": "join", "room": "demo"})
    pongs, fragments, pings = 0, [], 0
    while True:
        if pings < 20:  # masked pings with a payload, while the snapshot is being written
            payload = struct.pack("!I", pings)
            raw.send_frame(0x9, payload)
            pings += 1
        op, payload, fin = raw.read_frame_fin()
        if op == 0xA:
            pongs += 1
            continue
        assert op in (0, 1), op
        fragments.append(payload)
        if fin:
            break
    assert len(fragments) > 10
    assert json.loads(b"".join(fragments))["type"] == "snapshot", "a pong inside a fragment would have broken it"
    raw.send_text({"type": "intent", "room": "demo", "control": "quantity", "intent": "next", "id": "after"})
    while True:
        op, payload, fin = raw.read_frame_fin()
        if op == 0xA:
            pongs += 1
        elif op == 1 and json.loads(payload).get("type") == "ack":
            break
    assert pongs >= 1, "pings answered (a ping that comes before the last one's pong may get no pong of its own, §5.5.3)"
    raw.close()
