"""The server API in cluster mode: any node answers for any room; deletes, disconnects and takeovers reach every node."""
from __future__ import annotations

import json
import time
import urllib.request

import pytest
from websockets.exceptions import ConnectionClosed

from api_client import API, API_KEY, error, intent
from redis_server import cluster, redis_server  # noqa: F401  (fixtures)
from test_api import patch_at


def test_in_cluster_mode_any_node_answers_for_any_room(cluster, connect):
    a_node, b_node = cluster(2, "--api-key", API_KEY)
    a, b = API(a_node), API(b_node)
    created = b.post("/rooms", {"room": "shared", "intents": [intent("quantity", "set", {"value": 7})]})
    assert created.status_code == 201, created.text
    assert created.json()["version"] == 0 and created.json()["state"]["controls"]["quantity"]["value"] == 7
    assert error(a.post("/rooms", {"room": "shared"}))["code"] == "room_exists"
    assert a.post("/rooms", {"room": "demo"}).status_code == 409, "the config's rooms exist from the start"
    ann = connect(a_node)
    joined = ann.join("shared")
    assert joined["state"]["controls"]["quantity"]["value"] == 7
    v = joined["version"]  # the join is a change too (presence)
    # Through the node that does not own the room: forwarded to the owner, answered once written.
    applied = a.intents("shared", intent("quantity", "next"), intent("quantity", "next"))
    assert applied.status_code == 200 and applied.json() == {"room": "shared", "epoch": created.json()["epoch"], "version": v + 1}
    patch = patch_at(ann, v + 1, "shared")
    assert patch["cause"]["kind"] == "server" and ann.state("shared")["controls"]["quantity"]["value"] == 9
    refused = a.intents("shared", intent("quantity", "set", {"value": 500}))
    assert refused.status_code == 422 and error(refused)["code"] == "out_of_range" and error(refused)["room"] == "shared"
    room = a.get("/rooms/shared").json()
    assert room["version"] == v + 1 and [m["session"] for m in room["members"]] == [ann.session]
    assert a.get("/rooms/shared/members").json()["members"][0]["session"] == ann.session
    history = a.get("/rooms/shared/patches", params={"after": v}).json()
    assert [p["version"] for p in history["patches"]] == [v + 1] and history["patches"][0]["ops"] == patch["ops"]
    listed = {r["room"]: r for r in a.get("/rooms").json()["rooms"]}
    b_id = json.loads(urllib.request.urlopen(b_node.http_url + "healthz").read())["cluster"]["node"]
    assert listed["shared"] == {"room": "shared", "template": "demo", "epoch": created.json()["epoch"], "version": v + 1,
                                "loaded": True, "members": 1, "node": b_id}, "the node that created it owns it"
    nodes = a.get("/nodes").json()
    a_id = next(n["node"] for n in nodes["nodes"] if n["self"])
    assert nodes["cluster"] is True and {n["node"] for n in nodes["nodes"]} == {a_id, b_id}
    assert sum(n["rooms"] for n in nodes["nodes"]) == sum(r["node"] is not None for r in listed.values())
    assert {r["room"] for r in b.get("/rooms").json()["rooms"]} == set(listed) == {"shared", "demo"}, "the config's rooms too"
    assert a.get("/rooms/demo").json()["room"] == "demo"
    assert a.post("/rooms/shared/reset").json()["version"] == v + 2
    assert ann.wait_state(lambda s: s["controls"]["quantity"]["value"] == 1, room="shared")
    missing = a.get("/rooms/nowhere")
    assert missing.status_code == 404 and error(missing)["code"] == "unknown_room"
    assert a.intents("nowhere", intent("quantity", "next")).status_code == 404


def test_in_cluster_mode_a_delete_or_disconnect_reaches_members_on_every_node(cluster, connect):
    a_node, b_node = cluster(2, "--api-key", API_KEY)
    a, b = API(a_node), API(b_node)
    assert b.post("/rooms", {"room": "brief"}).status_code == 201  # owned by b
    ann, bob = connect(a_node), connect(b_node)
    first = ann.join("brief")
    bob.join("brief")
    carl = connect(b_node)
    carl.join("brief")
    # Carl's connection is on b; asked through a.
    answer = a.delete(f"/rooms/brief/members/{carl.session}")
    assert answer.json()["disconnected"] is True, answer.text
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            carl.recv(timeout=5)
    assert closed.value.rcvd.code == 4001
    ann.wait_state(lambda s: carl.session not in s["presence"], room="brief")
    gone = a.delete(f"/rooms/brief/members/{carl.session}")
    assert gone.status_code == 404 and error(gone)["code"] == "not_found"
    unknown = a.delete("/rooms/nosuch/members/s000")
    assert unknown.status_code == 404 and error(unknown)["code"] == "unknown_room", unknown.text
    deleted = a.delete("/rooms/brief")
    assert deleted.status_code == 200 and deleted.json()["deleted"] is True
    for member in (ann, bob):
        notice = member.recv(lambda m: m["type"] == "error")
        assert notice["code"] == "room_deleted" and notice["room"] == "brief" and "id" not in notice
    assert ann.intent("quantity", "next", room="brief")["code"] == "not_joined"
    assert b.get("/rooms/brief").status_code == 404
    assert "brief" not in [r["room"] for r in a.get("/rooms").json()["rooms"]]
    again = ann.join("brief")
    assert again["type"] == "snapshot" and again["epoch"] != first["epoch"]
    assert a.delete("/rooms/demo").status_code == 409


def test_in_cluster_mode_the_api_takes_over_a_room_whose_owner_was_killed(cluster):
    a_node, b_node = cluster(2, "--api-key", API_KEY)
    a, b = API(a_node), API(b_node)
    created = a.post("/rooms", {"room": "kept", "intents": [intent("quantity", "set", {"value": 40})]}).json()
    assert b.intents("kept", intent("quantity", "next")).json()["version"] == 1
    a_node.proc.kill()  # SIGKILL: the lease lapses
    deadline = time.monotonic() + 10
    while True:
        answer = b.intents("kept", intent("quantity", "next"))
        if answer.status_code == 200:
            break
        assert answer.status_code == 503 and error(answer)["code"] == "unavailable", answer.text
        assert time.monotonic() < deadline, answer.text
        time.sleep(0.1)
    assert answer.json() == {"room": "kept", "epoch": created["epoch"], "version": 2}
    assert b.get("/rooms/kept").json()["state"]["controls"]["quantity"]["value"] == 42


def test_a_node_that_missed_a_deletion_tells_its_members_room_deleted(cluster, connect, redis_server):  # noqa: F811
    """A deletion's notice is published once; a node whose subscriber is away at that moment misses it. Its members
    still hear `room_deleted` (the deletion leaves a tombstone that the node's next maintenance pass reads), not
    `unavailable` as if Redis had lost the room — after which the page and LiveControlsKit would join again and make
    anew a room an administrator deleted."""
    import threading
    a_node, b_node = cluster(2, "--api-key", API_KEY)
    b = API(b_node)
    assert b.post("/rooms", {"room": "brief"}).status_code == 201  # owned by n1
    ann, bob = connect(a_node), connect(b_node)
    assert ann.join("brief")["type"] == "snapshot" and bob.join("brief")["type"] == "snapshot"
    stop = threading.Event()

    def keep_n0_unsubscribed():  # kills n0's subscriber connection whenever it comes back, until stopped
        while not stop.is_set():
            for line in str(redis_server.command("CLIENT", "LIST")).splitlines():
                if "name=livecontrols:n0:subscriber" in line:
                    redis_server.command("CLIENT", "KILL", "ID", line.split("id=", 1)[1].split(" ", 1)[0])
            stop.wait(0.002)
    killer = threading.Thread(target=keep_n0_unsubscribed)
    killer.start()
    try:
        a_node.wait_for_log("Redis subscriber lost its connection")
        assert b.delete("/rooms/brief").status_code == 200
    finally:
        stop.set()
        killer.join()
    for member in (bob, ann):
        told = member.recv(lambda m: m["type"] == "error" and "id" not in m, timeout=10)
        assert told["code"] == "room_deleted" and told["room"] == "brief", told
