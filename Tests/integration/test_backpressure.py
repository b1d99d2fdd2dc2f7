"""Backpressure on a room that is behind: a sender whose room's queue is full is not read until the room has
drained to half, so a burst waits in TCP and is applied, instead of being read and refused message by message."""
from __future__ import annotations

import json
import time

from rawws import RawClient

MEMBERS = 130  # past 128 subscribers a room runs intents on its own queue, where they can wait


def intent(i: int) -> str:
    return json.dumps({"type": "intent", "id": i, "room": "big", "control": "quantity", "intent": "set", "args": {"value": i % 50}})


def frame(text: str) -> bytes:
    """A masked client text frame (mask 0: the payload as it is), built in bulk for a burst."""
    payload = text.encode()
    assert len(payload) < 126
    return bytes([0x81, 0x80 | len(payload)]) + b"\0\0\0\0" + payload


def join(client: RawClient) -> None:
    client.send_text({"type": "join", "room": "big"})
    while client.read_json().get("type") != "snapshot":
        pass


def test_a_burst_into_a_full_room_waits_and_is_applied_rather_than_refused(start_server):
    s = start_server("--rate", "1000000", "--burst", "1000000", "--room-queue", "8", "--max-connections-per-address", "0",
                     "--room-creations-per-minute", "0")
    members = [RawClient(s.port) for _ in range(MEMBERS)]
    for m in members:
        m.read_json()  # welcome
        join(m)
    sender = members[0]
    burst = 2000
    # One write: far more intents than the room's queue holds. Without backpressure the server reads them in
    # pieces of its receive buffer and refuses all but the queue's worth of each piece with `overloaded`.
    sender.sock.sendall(b"".join(frame(intent(i)) for i in range(1, burst + 1)))
    answers: dict[int, str] = {}
    deadline = time.monotonic() + 60
    while len(answers) < burst and time.monotonic() < deadline:
        m = sender.read_json()
        if m.get("type") in ("ack", "error") and isinstance(m.get("id"), int):
            answers[m["id"]] = m["type"] if m["type"] == "ack" else m["code"]
    assert len(answers) == burst, f"every intent is answered ({len(answers)} of {burst})"
    refused = [i for i, a in answers.items() if a != "ack"]
    assert set(answers[i] for i in refused) <= {"overloaded"}
    assert len(refused) < burst // 10, f"{len(refused)} of {burst} refused: the burst should wait, not be refused"
    # Its connection is read again once the room has caught up: one more intent is applied at once.
    sender.send_text({"type": "intent", "id": "after", "room": "big", "control": "quantity", "intent": "next"})
    while (m := sender.read_json()).get("id") != "after":
        pass
    assert m["type"] == "ack"
    for m in members:
        m.close()
