"""Webhooks against the real server and a real receiver that verifies every request with the `standardwebhooks`
library: every event kind, order per room, retries, failures kept and retried, redelivery after kill -9."""
from __future__ import annotations

import json
import signal
import subprocess
import time

import pytest

from api_client import API, API_KEY, intent
from auth_tokens import mint_token
from livecontrols_server import BINARY
from redis_server import cluster, redis_server  # noqa: F401  (fixtures)
from webhook_receiver import Receiver, webhook_config


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.stop()


@pytest.fixture
def hooked(start_server, tmp_path):
    """A server whose config sends webhooks (`endpoints`, as the receiver's `endpoint()` makes them)."""
    def start(*endpoints, interval_ms=200, args=(), **extra):
        path = tmp_path / f"config-{time.monotonic_ns()}.json"
        path.write_text(json.dumps(webhook_config(*endpoints, interval_ms=interval_ms, **extra)))
        return start_server("--config", str(path), "--api-key", API_KEY, *args)
    return start


def types(events):
    return [e["type"] for e in events]


def test_every_event_kind_arrives_signed_with_its_data(hooked, receiver):
    s = hooked(receiver.endpoint(), args=("--room-idle-seconds", "1"))
    api = API(s)
    created = api.post("/rooms", {"room": "side"}).json()
    ann = s.client()
    ann.join("main", name="Ann")
    ann.intent("q", "press", {"direction": "next"}, room="main")
    ann.intent("q", "release", room="main")
    ann.intent("f", "set", {"element": "who", "field": "name", "value": "Ann"}, room="main")
    ann.intent("f", "finish", room="main")
    for _ in range(3):
        ann.intent("w", "next", room="main")
    api.post("/rooms/main/reset")
    ann.intent("w", "prev", room="main")
    ann.close()
    api.delete("/rooms/side")
    bob = s.client()
    bob.join("idle")
    bob.close()

    receiver.wait_for("room.unloaded")
    receiver.wait_for("member.left", 2)
    by_type = {t: receiver.of(t) for t in types(receiver.events)}
    assert not receiver.invalid, receiver.invalid
    assert {"room.created", "room.unloaded", "room.deleted", "member.joined", "member.left", "form.completed",
            "wizard.completed", "wizard.exited", "hold.ended", "room.changed"} <= set(by_type)

    side = [e for e in receiver.events if e["data"]["room"] == "side"]
    assert types(side) == ["room.created", "room.deleted"]
    assert side[0]["data"]["epoch"] == created["epoch"]
    joined = [e for e in by_type["member.joined"] if e["data"]["room"] == "main"][0]["data"]
    assert joined["session"] == ann.session and joined["name"] == "Ann"
    assert [e["data"]["reason"] for e in by_type["member.left"] if e["data"]["room"] == "main"] == ["disconnect"]
    assert by_type["hold.ended"][0]["data"]["reason"] in ("release", "reset")
    form = by_type["form.completed"][0]["data"]
    assert form["control"] == "f" and form["data"] == {"who": {"name": "Ann"}}
    assert form["cause"]["session"] == ann.session
    assert by_type["wizard.completed"][0]["data"]["step"] == "two"
    assert by_type["wizard.exited"][0]["data"]["control"] == "w"
    assert [e["data"]["room"] for e in by_type["room.unloaded"]] == ["idle"]
    event = receiver.events[0]
    assert event["id"].startswith("evt_") and event["timestamp"].endswith("Z")
    assert event["headers"]["webhook-signature"].startswith("v1,")


def test_room_changed_gathers_versions_in_order_without_gaps(hooked, receiver):
    s = hooked(receiver.endpoint(["room.changed"]), interval_ms=100)
    ann = s.client()
    ann.join("main")
    for value in range(1, 9):
        ann.intent("q", "set", {"value": value}, room="main")
    last = ann.version("main")
    receiver.wait(lambda events: events and events[-1]["data"]["toVersion"] >= last, what="the last version")
    ranges = [(e["data"]["fromVersion"], e["data"]["toVersion"]) for e in receiver.events]
    assert ranges[0][0] == 1
    for (_, before), (after, _) in zip(ranges, ranges[1:]):
        assert after == before + 1, f"a gap or an overlap: {ranges}"
    assert len(ranges) < last, "gathered, not one event per version"
    assert "q" in receiver.events[-1]["data"]["controls"]


def test_events_of_a_room_arrive_in_the_order_of_its_changes(hooked, receiver):
    s = hooked(receiver.endpoint(["member.*"]))
    clients = []
    for i in range(6):
        c = s.client()
        c.join("main", name=f"p{i}")
        clients.append(c)
    for c in clients:
        c.close()
    receiver.wait_for("member.left", 6)
    versions = [e["data"]["version"] for e in receiver.events]
    assert versions == sorted(versions) and len(set(versions)) == 12


def test_a_failed_attempt_is_retried_with_the_same_event_id(hooked, receiver):
    receiver.answers = [500, 503]
    s = hooked(receiver.endpoint(["member.joined"], retryMs=50))
    s.client().join("main")
    event = receiver.wait_for("member.joined")[0]
    assert receiver.attempts.count(event["id"]) == 3, receiver.attempts


def test_an_attempt_that_times_out_is_retried(hooked, receiver):
    receiver.delay = 1.0
    s = hooked(receiver.endpoint(["member.joined"], timeoutMs=300, retryMs=50))
    s.client().join("main")
    with receiver.changed:
        receiver.changed.wait_for(lambda: len(receiver.attempts) >= 2, 10)
    receiver.delay = 0
    event = receiver.wait_for("member.joined")[-1]
    assert receiver.attempts.count(event["id"]) >= 2


def test_a_tokens_failed_list_is_its_rooms_newest_not_what_is_left_of_everyones(hooked, receiver):
    secret = "failed-list-secret-0123456789abcdef"
    receiver.answers = [500] * 4
    s = hooked(receiver.endpoint(["member.joined"], maxAttempts=1), args=("--auth-secret", secret))
    for i, room in enumerate(("team-a", "other-1", "other-2", "other-3")):  # team-a's failure is the oldest
        s.client().join(room)
        s.wait_for_log("webhook delivery failed for good", count=i + 1)
    api = API(s)
    assert [f["event"]["room"] for f in api.get("/webhooks/failed", params={"limit": 1}).json()["failed"]] == ["other-3"]
    team = API(s, key=mint_token(secret, "--role", "admin", "--room", "team-*"))
    listed = team.get("/webhooks/failed", params={"limit": 1}).json()["failed"]
    assert [f["event"]["room"] for f in listed] == ["team-a"], "filtered before the limit"


def test_a_delivery_given_up_is_listed_and_sent_again_on_request(hooked, receiver):
    receiver.answers = [500, 500]
    s = hooked(receiver.endpoint(["member.joined"], maxAttempts=2, retryMs=20))
    api = API(s)
    s.client().join("main")
    s.wait_for_log("webhook delivery failed for good")  # woken by each log line: no polling
    failed = api.get("/webhooks/failed").json()["failed"]
    assert failed[0]["attempts"] == 2 and failed[0]["error"] == "HTTP 500"
    assert failed[0]["event"]["type"] == "member.joined" and failed[0]["endpoint"] == receiver.url
    assert receiver.events == []
    retried = api.post(f"/webhooks/failed/{failed[0]['event']['id']}/retry")
    assert retried.status_code == 200 and retried.json()["retried"] == 1
    assert receiver.wait_for("member.joined")[0]["id"] == failed[0]["event"]["id"]
    assert api.get("/webhooks/failed").json()["failed"] == []
    assert api.post(f"/webhooks/failed/{failed[0]['event']['id']}/retry").status_code == 404
    status = api.get("/webhooks").json()["endpoints"]
    assert status[0]["url"] == receiver.url and status[0]["pending"] == 0
    assert API(s, key=None).get("/webhooks/failed").status_code == 401


def test_pending_deliveries_survive_kill_9(hooked, receiver, tmp_path):
    receiver.answers = [500] * 1000  # nothing is accepted while the first server runs
    data = tmp_path / "data"
    first = hooked(receiver.endpoint(["member.*", "form.completed"], retryMs=5000), args=("--data-dir", str(data)))
    ann = first.client()
    ann.join("main", name="Ann")
    ann.intent("f", "set", {"element": "who", "field": "name", "value": "Ann"}, room="main")
    ann.intent("f", "finish", room="main")
    with receiver.changed:
        receiver.changed.wait_for(lambda: len(set(receiver.attempts)) >= 1, 10)
    tried = set(receiver.attempts)
    first.stop(signal.SIGKILL)
    receiver.answers = []
    hooked(receiver.endpoint(["member.*", "form.completed"], retryMs=5000), args=("--data-dir", str(data)))
    receiver.wait_for("form.completed")
    events = receiver.wait_for("member.left")  # the restart drops Ann (reason restart)
    assert types(receiver.events)[:2] == ["member.joined", "form.completed"], "sent after the restart, in order"
    assert tried <= {e["id"] for e in receiver.events}, "the same event ids as before the kill"
    assert events[0]["data"]["reason"] == "restart"


def test_a_dead_receiver_holds_up_neither_the_room_nor_another_endpoint(hooked, receiver):
    dead = Receiver()
    dead.delay = 5.0
    try:
        s = hooked(dead.endpoint(["member.joined"], timeoutMs=10000), receiver.endpoint(["member.joined"]))
        clients = [s.client() for _ in range(5)]
        started = time.monotonic()
        for c in clients:
            assert c.join("main")["type"] == "snapshot"
        receiver.wait_for("member.joined", 5, timeout=3)
        assert time.monotonic() - started < 3, "the live endpoint was not held up by the dead one"
    finally:
        dead.stop()


def test_webhooks_in_the_config_are_checked(tmp_path, receiver):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(webhook_config({"url": receiver.url, "events": ["*"], "secret": "plain"})))
    result = subprocess.run([BINARY, "--port", "0", "--config", str(bad)], capture_output=True, text=True, timeout=30)
    assert result.returncode != 0 and "/webhooks/0/secret" in result.stderr


@pytest.fixture
def hooked_cluster(cluster, tmp_path):
    """`hooked_cluster(n, *endpoints)`: n cluster nodes whose config sends webhooks."""
    def start(n, *endpoints, interval_ms=200):
        path = tmp_path / f"config-{time.monotonic_ns()}.json"
        path.write_text(json.dumps(webhook_config(*endpoints, interval_ms=interval_ms)))
        return cluster(n, "--config", str(path), "--api-key", API_KEY)
    return start


def test_in_cluster_mode_the_owner_sends_each_event_once_in_order(hooked_cluster, receiver):
    a_node, b_node = hooked_cluster(2, receiver.endpoint(["member.*", "form.completed", "room.changed"]))
    ann = a_node.client()
    ann.join("main", name="Ann")  # a owns the room
    bob = b_node.client()
    bob.join("main", name="Bob")
    bob.intent("f", "set", {"element": "who", "field": "name", "value": "Bob"}, room="main")
    bob.intent("f", "finish", room="main")
    bob.close()
    receiver.wait_for("member.left")
    completed = receiver.wait_for("form.completed")[0]
    assert completed["data"]["data"] == {"who": {"name": "Bob"}}
    changed = receiver.wait_for("room.changed")[0]["data"]
    assert changed["fromVersion"] == 1 and "f" in changed["controls"]
    member_events = [e for e in receiver.events if e["type"].startswith("member.")]
    assert [(e["type"], e["data"]["session"]) for e in member_events] == [
        ("member.joined", ann.session), ("member.joined", bob.session), ("member.left", bob.session)]
    versions = [e["data"]["version"] for e in member_events + [completed]]
    assert sorted(versions) == [e["data"]["version"] for e in receiver.events if e["type"] != "room.changed"]
    # A marker instead of a pause: Ann's leave is sent after every earlier event of the room; a second sender of any
    # of them would show up as a second attempt of its id.
    ann.close()
    receiver.wait_for("member.left", 2)
    assert len(receiver.attempts) == len(set(receiver.attempts)) == len(receiver.events), receiver.attempts
    assert receiver.invalid == []


def test_in_cluster_mode_a_takeover_sends_what_the_killed_owner_had_not(hooked_cluster, receiver):
    receiver.answers = [500] * 1000  # nothing is accepted while the first owner runs
    endpoint = receiver.endpoint(["member.*", "form.completed"], retryMs=5000)
    a_node, b_node = hooked_cluster(2, endpoint)
    ann = a_node.client()
    ann.join("main", name="Ann")
    ann.intent("f", "set", {"element": "who", "field": "name", "value": "Ann"}, room="main")
    ann.intent("f", "finish", room="main")
    with receiver.changed:
        receiver.changed.wait_for(lambda: len(set(receiver.attempts)) >= 1, 10)
    tried = set(receiver.attempts)
    a_node.proc.kill()  # SIGKILL: its queued deliveries are lost with it; the room's outbox in Redis is not
    receiver.answers = []
    bob = b_node.client()
    deadline = time.monotonic() + 10
    while bob.join("main", name="Bob")["type"] != "snapshot":  # unavailable until the lease lapses
        assert time.monotonic() < deadline
        time.sleep(0.1)
    receiver.wait_for("form.completed")
    left = receiver.wait_for("member.left")  # Ann's node is gone: she leaves
    assert types(receiver.events)[:2] == ["member.joined", "form.completed"], "the old owner's events first, in order"
    assert tried <= {e["id"] for e in receiver.events}, "the same event ids as the killed owner tried"
    assert left[0]["data"]["session"] == ann.session


def test_in_cluster_mode_a_retry_leaves_the_events_other_endpoints_still_owe(hooked_cluster, receiver):
    other = Receiver()
    try:
        receiver.answers = [500]  # given up at once for this endpoint, then retried through the API
        other.answers = [500] * 1000  # still owed to this one when the owner dies
        a_node, b_node = hooked_cluster(2, receiver.endpoint(["member.joined"], maxAttempts=1),
                                        other.endpoint(["member.joined"], retryMs=60_000))
        a_node.client().join("main")
        a_node.wait_for_log("webhook delivery failed for good")
        event_id = API(b_node).get("/webhooks/failed").json()["failed"][0]["event"]["id"]
        assert API(b_node).post(f"/webhooks/failed/{event_id}/retry").json()["retried"] == 1
        assert receiver.wait_for("member.joined")[0]["id"] == event_id
        a_node.proc.kill()
        other.answers = []
        bob = b_node.client()
        deadline = time.monotonic() + 10
        while bob.join("main")["type"] != "snapshot":  # the takeover sends what the room's outbox still owes
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert other.wait_for("member.joined")[0]["id"] == event_id
    finally:
        other.stop()


def test_in_cluster_mode_events_of_a_room_nobody_uses_are_sent_once_its_killed_owner_is_gone(hooked_cluster, receiver):
    receiver.answers = [500] * 1000
    a_node, b_node = hooked_cluster(2, receiver.endpoint(["member.*"], retryMs=5000))
    ann = a_node.client()
    ann.join("main")
    with receiver.changed:
        receiver.changed.wait_for(lambda: len(receiver.attempts) >= 1, 10)
    a_node.proc.kill()  # nobody uses the room afterwards: no node takes it over
    receiver.answers = []
    joined = receiver.wait_for("member.joined", timeout=15)  # the other node's look for orphaned outboxes
    assert joined[0]["id"] == receiver.attempts[0] and joined[0]["data"]["session"] == ann.session
    b_node.wait_for_log("webhook events of a room no node owns are sent from here")


def test_in_cluster_mode_a_delivery_given_up_on_one_node_is_listed_and_retried_on_another(hooked_cluster, receiver):
    receiver.answers = [500]
    a_node, b_node = hooked_cluster(2, receiver.endpoint(["member.joined"], maxAttempts=1))
    a_node.client().join("main")
    a_node.wait_for_log("webhook delivery failed for good")
    failed = API(b_node).get("/webhooks/failed").json()["failed"]
    assert len(failed) == 1 and failed[0]["event"]["type"] == "member.joined" and failed[0]["error"] == "HTTP 500"
    event_id = failed[0]["event"]["id"]
    assert API(b_node).post(f"/webhooks/failed/{event_id}/retry").json() == {"id": event_id, "retried": 1}
    assert receiver.wait_for("member.joined")[0]["id"] == event_id
    assert API(a_node).get("/webhooks/failed").json()["failed"] == []
    assert API(a_node).post(f"/webhooks/failed/{event_id}/retry").status_code == 404


def test_room_changed_tells_every_version_once_across_kill_9(hooked, receiver, tmp_path):
    data = tmp_path / "data"
    endpoint = receiver.endpoint(["room.changed"])
    first = hooked(endpoint, interval_ms=600_000, args=("--data-dir", str(data)))  # nothing is told before the kill
    ann = first.client()
    ann.join("main")
    for value in (1, 2, 3):
        ann.intent("q", "set", {"value": value}, room="main")
    told = ann.version("main")
    first.stop(signal.SIGKILL)
    second = hooked(endpoint, interval_ms=200, args=("--data-dir", str(data)))  # told at start
    event = receiver.wait_for("room.changed")[0]["data"]
    assert (event["fromVersion"], event["toVersion"]) == (1, told), event
    assert event["controls"] == ["q"] and event["presence"] is True
    bob = second.client()
    bob.join("main")  # the recovered room's restart leaves and this join follow, from told + 1 on
    bob.intent("q", "set", {"value": 9}, room="main")
    later = receiver.wait(lambda events: len(events) >= 2 and events[-1]["data"]["toVersion"] >= bob.version("main"))
    ranges = [(e["data"]["fromVersion"], e["data"]["toVersion"]) for e in later]
    assert all(b[0] == a[1] + 1 for a, b in zip(ranges, ranges[1:])), ranges
