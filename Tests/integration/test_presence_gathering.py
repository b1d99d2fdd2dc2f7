"""Presence in a busy room (issue 38: 500 members at 18 updates a second each made 4.5 million deliveries a second and
slowed every other room): a room of more than 8 members sends at most one presence patch per 1 ms per member, each
member's latest data in it, and the acks after it (docs/PROTOCOL.md, `presence`). Over real sockets, checked against
the protocol schema; the exact instants are the runtime's unit tests' (PresenceGatheringTests)."""
from __future__ import annotations


def test_a_busy_rooms_presence_updates_are_gathered_and_every_member_sees_everyones_latest_data(start_server):
    server = start_server("--rate", "100000", "--burst", "100000")
    members = [server.client() for _ in range(40)]  # interval: 40 ms
    for i, m in enumerate(members):
        m.join(name=f"m{i}")
    watcher = members[0]
    # Three updates from each member, sent back to back: 120 updates.
    for step in range(3):
        for i, m in enumerate(members):
            m.send({"type": "presence", "room": "demo", "data": {"x": step, "who": i}, "id": f"{i}-{step}"})
    acks = {}
    for i, m in enumerate(members):
        for step in range(3):
            ack = m.recv(lambda msg, i=i, step=step: msg.get("id") == f"{i}-{step}")
            assert ack["type"] == "ack", ack
            acks[(i, step)] = ack["version"]
    last = max(acks.values())
    state = watcher.wait_version(last)["state"]
    datas = sorted((p["data"]["who"], p["data"]["x"]) for p in state["presence"].values())
    assert datas == [(i, 2) for i in range(40)], "every member's latest data"
    patches = [p for p in watcher.patches["demo"] if p["cause"]["kind"] == "presence"]
    assert len(patches) < 60, f"{len(patches)} presence patches for 120 updates: not gathered"
    gathered = [p for p in patches if "sessions" in p["cause"]]
    assert gathered, "several members' updates in one patch"
    for p in gathered:
        assert "id" not in p["cause"] and "session" not in p["cause"] and len(p["cause"]["sessions"]) >= 2
    # Each member's last ack comes after the patch that set its last data: at that patch's version or later.
    for i, m in enumerate(members):
        carried = [p["version"] for p in patches
                   if any(o["path"] == f"/presence/{m.session}/data/x" and o.get("value") == 2 for o in p["ops"])]
        assert carried and carried[0] <= acks[(i, 2)], (i, carried, acks[(i, 2)])
