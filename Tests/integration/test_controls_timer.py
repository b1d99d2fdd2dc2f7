"""The `timer` control through the real server: deadlines in server time (no patch per second), pause/resume/add,
a countdown that finishes and runs its `then` in the same patch, the `timer.finished` webhook, and a finish that
happens while the server is down (it fires once, when the room is loaded again)."""
import json
import time

from livecontrols_server import Server
from redis_server import CLUSTER_LEASE_MS, cluster, redis_server  # noqa: F401  (fixtures)
from webhook_receiver import Receiver


def timer(client, control="timebox", room="demo"):
    return client.state(room)["controls"][control]


def test_the_demo_timebox_names_its_deadline_in_server_time_and_sends_no_ticks(clients):
    a, b = clients(), clients()
    a.join()
    b.join()
    t = timer(a)
    assert (t["kind"], t["mode"], t["durationMs"], t["status"], t["remainingMs"], t["endsAt"]) == ("timer", "countdown", 300000, "ready", 300000, None)
    before = time.time() * 1000
    assert a.intent("timebox", "start")["type"] == "ack"
    ends = b.wait_state(lambda s: s["controls"]["timebox"]["status"] == "running")["controls"]["timebox"]["endsAt"]
    assert before + 300000 - 50 <= ends <= time.time() * 1000 + 300000 + 50
    b.expect_silence(lambda m: m.get("type") == "patch", timeout=1.5)  # counted on the clients' clocks
    assert a.intent("timebox", "pause")["type"] == "ack"
    paused = b.wait_state(lambda s: s["controls"]["timebox"]["status"] == "paused")["controls"]["timebox"]
    assert 298000 <= paused["remainingMs"] <= 300000 and paused["endsAt"] is None
    assert a.intent("timebox", "add", {"ms": 60000})["type"] == "ack"
    assert timer(a)["remainingMs"] == paused["remainingMs"] + 60000
    assert a.intent("timebox", "add", {"ms": -10 ** 6})["code"] == "out_of_range"
    assert a.intent("timebox", "add", {"ms": "1"}, validate=False)["code"] == "invalid_args"
    assert a.intent("timebox", "resume")["type"] == "ack"
    assert timer(a)["status"] == "running"
    assert a.intent("timebox", "reset")["type"] == "ack"
    assert timer(a)["remainingMs"] == 300000


def config(tmp_path, receiver=None, duration_ms=600):
    path = tmp_path / "c.json"
    body = {
        "templates": {"t": {"controls": {
            "agenda": {"kind": "wizard", "steps": [{"id": "a", "title": "A"}, {"id": "b", "title": "B"}, {"id": "c", "title": "C"}]},
            "box": {"kind": "timer", "durationMs": duration_ms, "then": {"control": "agenda", "intent": "next"}},
        }}},
        "defaultTemplate": "t", "rooms": {"r": {"template": "t"}},
    }
    if receiver:
        body["webhooks"] = [receiver.endpoint(events=["timer.finished"])]
    path.write_text(json.dumps(body))
    return path


def test_a_countdown_finishes_runs_its_then_and_tells_the_backend(tmp_path):
    receiver = Receiver()
    server = Server("--config", str(config(tmp_path, receiver))).start()
    try:
        c = server.client()
        c.join("r")
        assert c.intent("box", "start", room="r")["type"] == "ack"
        done = c.recv(lambda m: m.get("type") == "patch" and m["cause"].get("kind") == "timer", timeout=5)
        assert done["cause"] == {"kind": "timer", "control": "box", "then": {"control": "agenda", "intent": "next"}}
        state = c.state("r")["controls"]
        assert state["box"]["status"] == "finished" and state["box"]["remainingMs"] == 0
        assert state["agenda"]["index"] == 1, "the agenda moved on in the same patch"
        event = receiver.wait_for("timer.finished")[0]
        assert event["data"]["control"] == "box" and event["data"]["then"] == {"control": "agenda", "intent": "next"}
        assert event["data"]["version"] == done["version"]
        assert c.intent("box", "resume", room="r")["code"] == "finished"
    finally:
        server.stop()
        receiver.stop()


def test_a_deadline_passed_while_the_server_was_down_fires_once_at_the_load(tmp_path):
    path, data = config(tmp_path), tmp_path / "data"
    server = Server("--config", str(path), "--data-dir", str(data)).start()
    c = server.client()
    c.join("r")
    c.intent("box", "start", room="r")
    ends = timer(c, "box", "r")["endsAt"]
    server.stop()
    time.sleep(max(0, ends / 1000 - time.time()) + 0.1)  # the server is down past the deadline
    server = Server("--config", str(path), "--data-dir", str(data)).start()
    try:
        c = server.client()
        snap = c.join("r")
        state = snap["state"]["controls"]
        if state["box"]["status"] != "finished":  # the load's own patch may come right after the snapshot
            c.wait_state(lambda s: s["controls"]["box"]["status"] == "finished", room="r")
            state = c.state("r")["controls"]
        assert state["agenda"]["index"] == 1
    finally:
        server.stop()
    server = Server("--config", str(path), "--data-dir", str(data)).start()
    try:
        c = server.client()
        state = c.join("r")["state"]["controls"]
        assert state["box"]["status"] == "finished" and state["agenda"]["index"] == 1, "fired once, not again"
    finally:
        server.stop()


def test_a_countdown_survives_a_takeover_and_finishes_once(cluster, tmp_path):
    owner, survivor = cluster(2, "--config", str(config(tmp_path, duration_ms=CLUSTER_LEASE_MS + 1500)))
    a = owner.client()
    a.join("r")  # the first node owns the room
    b = survivor.client()
    b.join("r")
    assert b.intent("box", "start", room="r")["type"] == "ack"
    ends = b.wait_state(lambda s: s["controls"]["box"]["status"] == "running", room="r")["controls"]["box"]["endsAt"]
    owner.proc.kill()  # SIGKILL: its timer thread dies with it; the survivor takes the room over within ~1⅓ leases
    done = b.recv(lambda m: m.get("type") == "patch" and m["cause"].get("kind") == "timer", timeout=CLUSTER_LEASE_MS / 1000 + 5)
    assert time.time() * 1000 >= ends - 50, "not before its deadline"
    assert done["cause"]["then"] == {"control": "agenda", "intent": "next"}
    assert b.state("r")["controls"]["agenda"]["index"] == 1
    b.expect_silence(lambda m: m.get("type") == "patch" and m["cause"].get("kind") == "timer", timeout=1.0)
    fresh = survivor.client()
    state = fresh.join("r")["state"]["controls"]
    assert state["box"]["status"] == "finished" and state["agenda"]["index"] == 1, "finished once"


def test_a_room_created_with_its_timer_started_counts_from_now(start_server):
    """The server API's `POST /rooms` with intents applies them before the room has a runtime: a timer started there
    names its deadline in server time too (it said 1970 when the room had no clock yet)."""
    from api_client import API, API_KEY
    s = start_server("--api-key", API_KEY)
    before = time.time() * 1000
    created = API(s).post("/rooms", {"room": "started", "intents": [{"control": "timebox", "intent": "start"}]})
    assert created.status_code == 201, created.text
    c = s.client()
    state = c.join("started")["state"]["controls"]["timebox"]
    assert state["status"] == "running"
    assert before + 300000 - 50 <= state["endsAt"] <= time.time() * 1000 + 300000 + 50
