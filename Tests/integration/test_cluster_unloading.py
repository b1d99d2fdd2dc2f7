"""Cluster mode and `--room-idle-seconds`: a node drops its view of a room no session there uses, the owner
hands an unused room back (lease released, state kept in Redis), and the next node that needs it takes it over
as it was."""
from __future__ import annotations

from redis_server import cluster, redis_server  # noqa: F401  (fixtures)
from test_room_unloading import metric


def test_an_unused_room_is_handed_back_and_taken_over_as_it_was(cluster, connect):
    n0, n1 = cluster(2, "--room-idle-seconds", "1")
    a = connect(n0)
    a.join("u1")  # n0 creates the room and owns it
    b = connect(n1)
    b.join("u1")  # n1 forwards to n0 (and remembers n0 as the owner)
    assert b.intent("quantity", "set", {"value": 42}, room="u1")["type"] == "ack"
    a.wait_state(lambda s: s["controls"]["quantity"]["value"] == 42, room="u1")
    epoch, version = b.rooms["u1"]["epoch"], b.version("u1")
    remembered = dict(b.rooms["u1"])
    assert metric(n0, "livecontrols_cluster_owned_rooms") == 1
    a.leave("u1")
    b.leave("u1")

    n0.wait_for_log("room handed back")  # the owner handed u1 back
    n1.wait_for_log("room view dropped")  # n1 dropped its view of u1
    assert metric(n0, "livecontrols_cluster_owned_rooms") == 0

    c = connect(n1)
    c.rooms["u1"], c.patches["u1"] = remembered, []
    resumed = c.join("u1", since={"epoch": epoch, "version": version})
    assert resumed["type"] == "resumed", "taken over from Redis: same epoch, the client resumes"
    assert c.state("u1")["controls"]["quantity"]["value"] == 42
    assert metric(n1, "livecontrols_cluster_owned_rooms") >= 1, "n1 took it over"
    assert c.intent("quantity", "next", room="u1")["type"] == "ack"


def test_a_room_in_use_anywhere_stays_with_its_owner(cluster, connect):
    n0, n1 = cluster(2, "--room-idle-seconds", "1")
    a = connect(n0)
    a.join("kept")
    b = connect(n1)
    b.join("kept")  # a member on n1 keeps the room in use
    a.leave("kept")
    a.join("other")  # a second room, unused once a leaves it: its hand-back shows the sweep ran
    a.leave("other")
    n0.wait_for_log("room handed back")
    epoch = b.rooms["kept"]["epoch"]
    ack = b.intent("quantity", "set", {"value": 3}, room="kept")
    assert ack["type"] == "ack"
    b.wait_version(ack["version"], room="kept")
    assert b.rooms["kept"]["epoch"] == epoch, "the same owner, the same lifetime"
    assert metric(n0, "livecontrols_cluster_relinquished_total") == 1, "only the unused room was handed back"
