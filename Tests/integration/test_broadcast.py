"""Broadcast events (docs/PROTOCOL.md, *broadcast*): handed to the room's other members as is, in order with the room's
patches, never stored; limits by size, member rate and room rate; roles; the server API's; a cluster's nodes."""
from __future__ import annotations

import json
import time

import pytest

from api_client import API, API_KEY, error
from auth_tokens import mint_token
from redis_server import cluster, redis_server  # noqa: F401  (fixtures)

SECRET = "b" * 32


@pytest.fixture
def configured(start_server, tmp_path):
    def start(broadcast=None, *args):
        template = {"controls": {"q": {"kind": "stepper", "min": 0, "max": 100, "value": 0}}}
        if broadcast is not None:
            template["broadcast"] = broadcast
        path = tmp_path / f"config-{time.monotonic_ns()}.json"
        path.write_text(json.dumps({"templates": {"t": template}, "rooms": {"r": {"template": "t"}}}))
        return start_server("--config", str(path), "--api-key", API_KEY, *args)
    return start


def broadcasts(client, count: int, timeout: float = 5) -> list[dict]:
    return [client.recv(lambda m: m["type"] == "broadcast", timeout=timeout) for _ in range(count)]


def test_a_broadcast_reaches_the_others_as_is_in_order_with_patches_and_is_not_state(configured):
    s = configured()
    ann, bob = s.client(), s.client()
    ann.join("r", name="Ann")
    version = bob.join("r", name="Bob")["version"]
    ann.send({"type": "broadcast", "room": "r", "event": {"cursor": [0.5, 0.25]}, "id": "b1"})
    ack = ann.recv(lambda m: m.get("id") == "b1")
    assert ack == {"type": "ack", "id": "b1", "room": "r", "version": version}
    got = bob.recv(lambda m: m["type"] == "broadcast")
    assert got == {"type": "broadcast", "room": "r", "from": ann.session, "name": "Ann", "event": {"cursor": [0.5, 0.25]}}
    ann.expect_silence(lambda m: m["type"] == "broadcast", 0.3)  # the sender does not get its own

    # In order with the room's patches, both ways; any JSON value, null included; no id: no ack.
    ann.send({"type": "intent", "id": "i1", "room": "r", "control": "q", "intent": "next"})
    ann.send({"type": "broadcast", "room": "r", "event": None})
    ann.send({"type": "broadcast", "room": "r", "event": "after"})
    ann.send({"type": "intent", "id": "i2", "room": "r", "control": "q", "intent": "next"})
    seen = []
    while len(seen) < 4:
        m = bob.recv(lambda m: m["type"] in ("patch", "broadcast"))
        seen.append(("patch", m["version"]) if m["type"] == "patch" else ("broadcast", m["event"]))
    assert seen == [("patch", version + 1), ("broadcast", None), ("broadcast", "after"), ("patch", version + 2)], seen
    ann.expect_silence(lambda m: m["type"] == "ack" and m.get("id") not in ("i1", "i2"), 0.2)  # a broadcast without id: no ack

    # Not stored: a later member, a resume and the history know nothing of it.
    carl = s.client()
    snapshot = carl.join("r")
    assert snapshot["version"] == version + 3, "two intents and Carl's join: the broadcasts took no version"
    carl.expect_silence(lambda m: m["type"] == "broadcast", 0.3)
    patches = API(s).get(f"/rooms/r/patches?after={version}").json()["patches"]
    assert [p["cause"]["kind"] for p in patches] == ["intent", "intent", "join"]


def test_every_bad_broadcast_is_refused_with_its_code(configured):
    s = configured({"maxBytes": 64, "perSecond": 2, "burst": 3, "roomPerSecond": 4})
    ann, bob = s.client(), s.client()
    ann.join("r")
    bob.join("r")
    ann.send({"type": "broadcast", "room": "r", "id": "x"}, validate=False)
    missing = ann.recv(lambda m: m.get("id") == "x")
    assert missing["code"] == "invalid_message" and "event" in missing["message"]
    ann.send({"type": "broadcast", "room": "other", "event": 1, "id": "y"})
    assert ann.recv(lambda m: m.get("id") == "y")["code"] == "not_joined"
    ann.send({"type": "broadcast", "room": "r", "event": "x" * 100, "id": "big"})
    big = ann.recv(lambda m: m.get("id") == "big")
    assert big["code"] == "too_large" and "64 bytes" in big["message"], big

    # The member's burst of 3, then its rate; the room's burst of 8 across members.
    codes = []
    for i in range(5):
        ann.send({"type": "broadcast", "room": "r", "event": i, "id": f"a{i}"})
        codes.append(ann.recv(lambda m, i=i: m.get("id") == f"a{i}")["type"])
    assert codes == ["ack", "ack", "ack", "error", "error"], codes
    limited = [m for m in ann.log if m.get("id") == "a3"][0]
    assert limited["code"] == "rate_limited" and "2 broadcasts per second" in limited["message"]
    assert ann.intent("q", "next", room="r")["type"] == "ack", "rate-limited broadcasts do not close the connection"
    assert len(broadcasts(bob, 3)) == 3
    bob.expect_silence(lambda m: m["type"] == "broadcast", 0.2)


def test_the_room_rate_bounds_all_members_together(configured):
    s = configured({"perSecond": 5, "burst": 5, "roomPerSecond": 5})
    members = [s.client() for _ in range(3)]
    for c in members:
        c.join("r")
    outcomes = []
    for n, c in enumerate(members):
        for i in range(5):
            c.send({"type": "broadcast", "room": "r", "event": i, "id": f"m{n}-{i}"})
            reply = c.recv(lambda m, n=n, i=i: m.get("id") == f"m{n}-{i}")
            outcomes.append(reply["type"] if reply["type"] == "ack" else reply["code"])
    assert outcomes.count("ack") == 10, outcomes  # the room's burst: twice roomPerSecond
    refused = [m for c in members for m in c.log if m.get("code") == "rate_limited"]
    assert refused and all("room r carries at most 5" in m["message"] for m in refused)


def test_roles_decide_who_may_broadcast(configured):
    s = configured({"roles": ["host"]}, "--auth", "required", "--auth-secret", SECRET)
    host, guest = s.client(), s.client()
    host.join("r", token=mint_token(SECRET, "--role", "editor", "--role", "host", "--room", "r"))
    guest.join("r", token=mint_token(SECRET, "--role", "editor", "--room", "r"))
    host.send({"type": "broadcast", "room": "r", "event": "go", "id": "h"})
    assert host.recv(lambda m: m.get("id") == "h")["type"] == "ack"
    guest.send({"type": "broadcast", "room": "r", "event": "me too", "id": "g"})
    refused = guest.recv(lambda m: m.get("id") == "g")
    assert refused["code"] == "forbidden" and "needs role host" in refused["message"], refused


def test_viewers_may_not_by_default_and_a_template_may_turn_broadcasts_off(configured):
    s = configured(None, "--auth", "required", "--auth-secret", SECRET)
    viewer = s.client()
    viewer.join("r", token=mint_token(SECRET, "--role", "viewer", "--room", "r"))
    viewer.send({"type": "broadcast", "room": "r", "event": "hi", "id": "v"})
    assert viewer.recv(lambda m: m.get("id") == "v")["code"] == "forbidden"

    off = configured(False)
    ann = off.client()
    ann.join("r")
    ann.send({"type": "broadcast", "room": "r", "event": "hi", "id": "o"})
    refused = ann.recv(lambda m: m.get("id") == "o")
    assert refused["code"] == "forbidden" and "no broadcasts" in refused["message"]
    # The backend still may.
    assert API(off).post("/rooms/r/broadcast", {"event": "from the backend"}).status_code == 200
    assert ann.recv(lambda m: m["type"] == "broadcast")["from"] == "server"


def test_the_server_api_broadcasts_to_every_member(configured):
    s = configured({"maxBytes": 32, "perSecond": 1, "burst": 1, "roomPerSecond": 1})
    ann, bob = s.client(), s.client()
    ann.join("r")
    bob.join("r")
    api = API(s)
    response = api.post("/rooms/r/broadcast", {"event": {"notice": "5 min"}})
    assert response.status_code == 200, response.text
    assert set(response.json()) == {"room", "epoch", "version"}
    for c in (ann, bob):
        assert c.recv(lambda m: m["type"] == "broadcast") == {"type": "broadcast", "room": "r", "from": "server", "event": {"notice": "5 min"}}
    assert error(api.post("/rooms/r/broadcast", {"event": "x" * 40}))["code"] == "too_large"
    assert api.post("/rooms/r/broadcast", {"event": "x" * 40}).status_code == 413
    assert api.post("/rooms/r/broadcast", {"notice": 1}).status_code == 400
    assert api.post("/rooms/r/broadcast", {"event": 2}).status_code == 200  # the room's burst is 2
    limited = api.post("/rooms/r/broadcast", {"event": 3})
    assert limited.status_code == 429 and error(limited)["code"] == "rate_limited"
    assert api.post("/rooms/nowhere/broadcast", {"event": 1}).status_code == 404


def test_a_cluster_hands_broadcasts_to_every_node(cluster, tmp_path):  # noqa: F811
    n0, n1, n2 = cluster(3, "--api-key", API_KEY)
    ann, bob, carl = n0.client(), n1.client(), n2.client()
    for c, name in ((ann, "Ann"), (bob, "Bob"), (carl, "Carl")):
        c.join("team", name=name)
    ann.intent("quantity", "next", room="team")
    bob.send({"type": "broadcast", "room": "team", "event": {"typing": True}, "id": "t"})
    assert bob.recv(lambda m: m.get("id") == "t")["type"] == "ack"
    for c in (ann, carl):
        got = c.recv(lambda m: m["type"] == "broadcast")
        assert got == {"type": "broadcast", "room": "team", "from": bob.session, "name": "Bob", "event": {"typing": True}}
    bob.expect_silence(lambda m: m["type"] == "broadcast", 0.3)
    assert API(n2).post("/rooms/team/broadcast", {"event": "all"}).status_code == 200
    for c in (ann, bob, carl):
        assert c.recv(lambda m: m["type"] == "broadcast")["from"] == "server"
