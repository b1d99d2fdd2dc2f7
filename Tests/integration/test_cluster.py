"""Cluster mode: several real nodes on loopback sharing rooms through a real redis-server."""
from __future__ import annotations

import json
import time
import urllib.error

import pytest

from redis_server import CLUSTER_LEASE_MS as LEASE_MS, cluster, redis_server  # noqa: F401  (fixtures)
from livecontrols_client import Client
from rawws import RawClient
from test_limits import read_until_resynced


@pytest.fixture
def pair(cluster, connect):
    """Two nodes; a client `a` on the first (which so owns `demo`) and `b` on the second, both joined."""
    def start(a_name: str = "a", b_name: str = "b"):
        a_node, b_node = cluster(2)
        a = connect(a_node)
        a.join(name=a_name)
        b = connect(b_node)
        b.join(name=b_name)
        return a_node, b_node, a, b
    return start


def readiness(node) -> int:
    try:
        return node.get("/readyz").status
    except urllib.error.HTTPError as e:
        return e.code


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise TimeoutError(what)


def intent_until_acked(client, control, intent, args, timeout: float = 10, room: str = "demo"):
    """Retries an intent refused with `unavailable` (an owner changing hands) until it is acked."""
    deadline = time.monotonic() + timeout
    while True:
        reply = client.intent(control, intent, args, room=room)
        if reply["type"] == "ack":
            return reply
        assert reply["code"] == "unavailable", reply
        if time.monotonic() > deadline:
            raise TimeoutError(f"still unavailable: {reply}")
        time.sleep(0.05)


def test_clients_on_three_nodes_see_identical_patch_sequences(cluster, connect):
    nodes = cluster(3)
    clients = [connect(node) for node in nodes]
    for i, c in enumerate(clients):
        c.join(name=f"c{i}")
    for round in range(10):
        for i, c in enumerate(clients):
            assert c.intent("quantity", "set", {"value": round * 3 + i})["type"] == "ack"
    last = max(c.version() for c in clients)
    for c in clients:
        c.wait_version(last)
    states = [c.state() for c in clients]
    assert states[0] == states[1] == states[2]
    assert set(states[0]["presence"]) == {c.session for c in clients}
    assert states[0]["controls"]["quantity"]["value"] == 29
    # The patches every client saw after the last one joined are the same: versions, ops and causes.
    start = max(c.patches["demo"][0]["version"] for c in clients)
    seqs = [[p for p in c.patches["demo"] if p["version"] >= start] for c in clients]
    assert seqs[0] == seqs[1] == seqs[2]
    assert [p["version"] for p in seqs[0]] == list(range(start, last + 1))


def test_intents_sent_through_a_non_owner_are_applied_in_order_and_acked(cluster, connect):
    owner_node, other_node = cluster(2)
    owner = connect(owner_node)
    owner.join(name="owner")  # the first node to need the room owns it
    health = json.load(owner_node.get("/healthz"))
    assert health["cluster"] == {"node": "n0", "redis": "up", "ownedRooms": 1}
    c = connect(other_node)
    c.join(name="remote")
    for i in range(1, 31):  # pipelined: all sent before any ack is read
        c.send({"type": "intent", "id": f"p{i}", "room": "demo", "control": "quantity", "intent": "set", "args": {"value": 10 + i}})
    acks = [c.recv(lambda m: m["type"] in ("ack", "error") and str(m.get("id", "")).startswith("p")) for _ in range(30)]
    assert [a["type"] for a in acks] == ["ack"] * 30
    assert [a["id"] for a in acks] == [f"p{i}" for i in range(1, 31)]
    versions = [a["version"] for a in acks]
    assert versions == list(range(versions[0], versions[0] + 30))
    c.wait_version(versions[-1])
    by_version = {p["version"]: p for p in c.patches["demo"]}
    for a in acks:
        assert by_version[a["version"]]["cause"]["id"] == a["id"]
    owner.wait_version(versions[-1])
    assert owner.state() == c.state()
    assert c.state()["controls"]["quantity"]["value"] == 40
    assert json.load(other_node.get("/healthz"))["cluster"]["ownedRooms"] == 0


def test_requests_sent_before_the_owner_is_known_keep_their_order(cluster, connect):
    owner_node, other_node = cluster(2)
    connect(owner_node).join(name="owner")
    c = connect(other_node)
    # The join and the intents leave at once: the node learns who owns the room while they are on their way.
    c.send({"type": "join", "room": "demo", "name": "eager"})
    for i in range(1, 41):
        c.send({"type": "intent", "id": f"e{i}", "room": "demo", "control": "quantity", "intent": "set", "args": {"value": 10 + i}})
    snapshot = c.recv(lambda m: m["type"] == "snapshot")
    acks = [c.recv(lambda m: m["type"] in ("ack", "error") and str(m.get("id", "")).startswith("e")) for _ in range(40)]
    assert [a["type"] for a in acks] == ["ack"] * 40, acks
    assert [a["id"] for a in acks] == [f"e{i}" for i in range(1, 41)]
    assert [a["version"] for a in acks] == list(range(snapshot["version"] + 1, snapshot["version"] + 41))
    c.wait_version(acks[-1]["version"])
    assert [p["cause"].get("id") for p in c.patches["demo"]] == [f"e{i}" for i in range(1, 41)]


def test_errors_from_the_owner_reach_a_client_on_another_node(pair):
    a_node, b_node, a, b = pair()
    error = b.intent("quantity", "set", {"value": 1000}, id="big")
    assert error["type"] == "error" and error["code"] == "out_of_range" and error["id"] == "big" and error["room"] == "demo"
    assert b.intent("nope", "next")["code"] == "unknown_control"
    left = b.leave(id="bye")
    assert left == {"type": "left", "id": "bye", "room": "demo"}


def test_kill_9_of_the_owner_during_a_hold_ends_it_with_failover(pair):
    a_node, b_node, a, b = pair("on-owner", "holder")
    b.intent("quantity", "set", {"value": 0})
    assert b.intent("quantity", "press", {"direction": "next"})["type"] == "ack"
    b.wait_state(lambda s: s["controls"]["quantity"]["value"] >= 3)
    a_node.proc.kill()  # SIGKILL: no goodbye, the lease just stops being renewed
    killed = time.monotonic()
    state = b.wait_state(lambda s: s["controls"]["quantity"]["holding"] is None, timeout=LEASE_MS / 1000 + 3)
    took = time.monotonic() - killed
    failover = b.patches["demo"][-1]
    assert failover["cause"]["kind"] == "failover"
    assert failover["cause"]["ended"] == [{"control": "quantity", "session": b.session, "reason": "failover"}]
    assert took < LEASE_MS / 1000 + 1.5
    # No tick after the failover; the versions went on without a gap (the client checks each one).
    value = state["controls"]["quantity"]["value"]
    b.expect_silence(lambda m: m["type"] == "patch" and m["cause"]["kind"] == "tick", timeout=0.6)
    # The survivor owns the room now; the member on the dead node is dropped.
    state = b.wait_state(lambda s: a.session not in s["presence"], timeout=LEASE_MS / 1000 + 3)
    assert state["controls"]["quantity"]["value"] == value
    assert json.load(b_node.get("/healthz"))["cluster"]["ownedRooms"] == 1
    assert b.intent("quantity", "next")["type"] == "ack"
    metrics = dict(line.rsplit(" ", 1) for line in b_node.get("/metrics").read().decode().splitlines() if line and not line.startswith("#"))
    assert metrics["livecontrols_cluster_takeovers_total"] == "1"
    assert float(metrics["livecontrols_cluster_owned_rooms"]) == 1  # gauges are floats: "1.0"
    assert float(metrics["livecontrols_cluster_redis_up"]) == 1
    assert int(metrics["livecontrols_cluster_forwarded_total"]) >= 3  # join, set, press went to the first owner


def test_kill_9_of_the_owner_during_a_stream_of_intents_keeps_every_acked_version(pair, connect):
    a_node, b_node, a, b = pair("on-owner", "writer")
    acked: list[dict] = []
    refused = 0
    value = 0
    deadline = time.monotonic() + 20
    while len(acked) < 60 and time.monotonic() < deadline:
        if len(acked) == 20 and a_node.proc.poll() is None:
            resume_from = dict(a.rooms["demo"])
            a_node.proc.kill()
        value += 1
        reply = b.intent("quantity", "set", {"value": 10 + value % 80}, id=f"w{value}")  # never the current value
        if reply["type"] == "ack":
            acked.append(reply)
        else:
            assert reply["code"] == "unavailable", reply
            refused += 1
            time.sleep(0.05)
    assert len(acked) == 60, f"only {len(acked)} acked, {refused} refused"
    versions = [r["version"] for r in acked]
    assert versions == sorted(set(versions))
    # Every acked intent is in the patch stream the surviving client saw, at its version (no gap, no loss).
    b.wait_version(versions[-1])
    seen = {p["version"]: p["cause"].get("id") for p in b.patches["demo"]}
    for r in acked:
        assert seen[r["version"]] == r["id"]
    assert b.state()["controls"]["quantity"]["value"] == 10 + int(acked[-1]["id"][1:]) % 80
    # A client of the dead node reconnects to the survivor and resumes where it was: it converges.
    c = connect(b_node)
    c.rooms["demo"] = resume_from
    c.patches["demo"] = []
    reply = c.join(since={"epoch": resume_from["epoch"], "version": resume_from["version"]})
    assert reply["type"] == "resumed"
    c.wait_version(b.version())
    b.wait_version(c.version())
    assert c.state() == b.state()


def test_redis_restart_gives_typed_errors_then_recovers(pair, redis_server):  # noqa: F811
    a_node, b_node, a, b = pair("a", "b")
    before = b.intent("quantity", "set", {"value": 5})
    assert before["type"] == "ack"
    redis_server.stop()
    wait_for(lambda: readiness(a_node) == 503 and readiness(b_node) == 503, 5, "/readyz never reported the outage")
    assert json.load(a_node.get("/healthz"))["cluster"]["redis"] == "down"
    reply = b.intent("quantity", "set", {"value": 6})  # an answer, not a hang
    assert reply["type"] == "error" and reply["code"] == "unavailable"
    assert "redis://" not in reply["message"] and str(redis_server.port) not in reply["message"], "clients are not told where Redis is"
    redis_server.start()
    wait_for(lambda: readiness(a_node) == 200 and readiness(b_node) == 200, 10, "/readyz never recovered")
    after = intent_until_acked(b, "quantity", "set", {"value": 7})
    assert after["version"] > before["version"]
    # Both clients converge on the same document (after resync snapshots, if Redis dropped messages).
    a.wait_state(lambda s: s["controls"]["quantity"]["value"] == 7, timeout=10)
    b.wait_state(lambda s: s["controls"]["quantity"]["value"] == 7, timeout=10)
    a.wait_version(b.version())
    b.wait_version(a.version())
    assert a.state() == b.state()
    assert a.rooms["demo"]["epoch"] == b.rooms["demo"]["epoch"]


def test_graceful_stop_of_the_owner_hands_the_room_over(pair):
    a_node, b_node, a, b = pair()
    b.intent("quantity", "set", {"value": 3})
    a_node.stop()
    ack = intent_until_acked(b, "quantity", "next", None, timeout=LEASE_MS / 1000 + 3)
    b.wait_version(ack["version"])
    assert b.state()["controls"]["quantity"]["value"] == 4


def test_sessions_of_a_killed_non_owner_leave_everywhere(cluster, connect):
    owner_node, doomed_node, other_node = cluster(3)
    owner = connect(owner_node)
    owner.join(name="owner")
    doomed = connect(doomed_node)
    doomed.join(name="doomed")
    doomed.intent("quantity", "set", {"value": 0})
    assert doomed.intent("quantity", "press", {"direction": "next"})["type"] == "ack"
    watcher = connect(other_node)
    watcher.join(name="watcher")
    assert doomed.session in watcher.state()["presence"]
    doomed_node.proc.kill()
    # Its liveness key lapses within a lease; the owner then drops its sessions, ending their holds.
    state = watcher.wait_state(lambda s: doomed.session not in s["presence"], timeout=LEASE_MS / 1000 * 2 + 3)
    leave = watcher.patches["demo"][-1]
    assert leave["cause"]["kind"] == "leave" and leave["cause"]["reason"] == "disconnect"
    assert leave["cause"]["ended"] == [{"control": "quantity", "session": doomed.session, "reason": "disconnect"}]
    assert state["controls"]["quantity"]["holding"] is None
    owner.wait_version(watcher.version())
    assert owner.state() == watcher.state()
    assert json.load(owner_node.get("/healthz"))["cluster"]["ownedRooms"] == 1  # the owner never changed


def drive_until_acked(driver, n: int) -> int:
    """`drive`, but a last intent refused `unavailable` (the owner lost its lease in a Redis stall) is sent again until
    acked; returns the version it was acked at."""
    for i in range(n):
        driver.send({"type": "intent", "id": i, "room": "demo", "control": "quantity", "intent": "set", "args": {"value": i % 90}})
    last = driver.recv(lambda m: m.get("id") == n - 1, timeout=60)
    deadline = time.monotonic() + 30
    while last["type"] == "error":
        assert last["code"] == "unavailable" and time.monotonic() < deadline, last
        time.sleep(0.1)
        last = driver.intent("quantity", "set", {"value": 7})
    return last["version"]


def test_a_slow_consumer_on_another_node_is_resynced_without_a_gap(start_server, redis_server, connect):  # noqa: F811
    # A 5 s lease (requests time out after 6 s of silence from the owner): 40,000 writes through a Redis that fsyncs
    # each one (AOF `always`) may stall for more than the usual test lease's 2 s on a busy CI disk, and this test is
    # about the slow consumer's resync, not about timeouts (a stall once failed its last intent with `unavailable`).
    owner_node, node = (start_server("--redis", redis_server.url, "--node-id", f"s{i}", "--lease-ms", "5000", "--rate", "100000",
                                     "--burst", "100000", "--room-queue", "100000", "--outbox-messages", "256",
                                     "--slow-consumer-timeout-ms", "60000") for i in range(2))
    driver = connect(owner_node)
    driver.join()
    stuck = RawClient(node.port, recv_buffer=4096)
    assert stuck.read_json()["type"] == "welcome"
    stuck.send_text({"type": "join", "room": "demo", "name": "stuck"})
    fast = connect(node)
    fast.join()
    # The stuck client reads nothing meanwhile. 40,000 fsynced writes can stall Redis past the lease on a loaded machine
    # (issue 41: the last intent got `unavailable` 3 runs in 4): the owner then rightly stops acting for the room, and
    # what it had not applied is answered `unavailable`. That is not this test's subject: the last intent is sent again
    # until acked (by this owner or the next), and the resync is checked against that version.
    target = drive_until_acked(driver, 40000)
    fast.wait_version(target, timeout=60)
    driver.wait_version(target, timeout=60)  # the driver may have overflowed too: it catches up by a snapshot
    assert fast.state() == driver.state()
    read_until_resynced(stuck, target)  # the resync snapshot came from the owner, through Redis
    stuck.close()


def test_cluster_flags_are_checked(start_server):
    from livecontrols_server import BINARY
    import subprocess
    for args, text in [(["--redis", "http://x"], "--redis"), (["--redis", "redis://127.0.0.1:1", "--data-dir", "/tmp/x"], "exclude"),
                       (["--node-id", "a b"], "--node-id"), (["--lease-ms", "10"], "--lease-ms")]:
        done = subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=20)
        assert done.returncode == 64, done
        assert text in done.stderr


def test_requests_on_their_way_to_an_owner_that_stops_are_answered_at_once(start_server, redis_server):  # noqa: F811
    """Issue 17: after a SIGTERM of the owner, a request it had not answered waited a whole lease + 1 s on the
    other node (5–7.5 s with a 5 s lease) before `unavailable`. The stopping owner now announces that it released
    the room, so such requests are answered `unavailable` at once and the next one finds the new owner."""
    import signal
    import threading
    from livecontrols_client import Client

    lease = ["--lease-ms", "5000", "--rate", "100000", "--burst", "100000", "--room-queue", "100000"]
    for trial in range(3):
        prefix = ["--redis-prefix", f"stop{trial}:"]
        a_node = start_server("--redis", redis_server.url, "--node-id", f"a{trial}", *prefix, *lease)
        b_node = start_server("--redis", redis_server.url, "--node-id", f"b{trial}", *prefix, *lease)
        a = Client(a_node.ws_url)
        a.join(name="a")  # a owns the room
        b = Client(b_node.ws_url, timeout=3)  # far below the lease: a reply left to the timeout fails the test
        b.join(name="b")
        sigterm = threading.Timer(0.2 + 0.05 * trial, lambda: a_node.proc.send_signal(signal.SIGTERM))
        sigterm.start()
        stopped_at = None
        acked_after_stop = None
        i = 0
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            i += 1
            reply = b.intent("quantity", "set", {"value": i % 50})  # raises TimeoutError if unanswered for 3 s
            if stopped_at is None and a_node.proc.poll() is not None:
                stopped_at = time.monotonic()
            if reply["type"] == "ack" and stopped_at is not None:
                acked_after_stop = time.monotonic() - stopped_at
                break
            if reply["type"] == "error":
                assert reply["code"] == "unavailable", reply  # retried at once: each intent waits for its reply
        assert acked_after_stop is not None and acked_after_stop < 2, f"trial {trial}: no ack soon after the owner stopped"
        b.close()
        a_node.proc.wait(10)
        b_node.stop()


def assert_two_nodes_serve_one_room(a_node, b_node):
    """A change made through one node reaches a client of the other, and both are ready."""
    from livecontrols_client import Client

    a, b = Client(a_node.ws_url), Client(b_node.ws_url)
    a.join(name="a")
    b.join(name="b")
    ack = intent_until_acked(b, "quantity", "set", {"value": 42})
    a.wait_version(ack["version"])
    assert a.state()["controls"]["quantity"]["value"] == 42
    assert readiness(a_node) == 200 and readiness(b_node) == 200


def test_nodes_authenticate_to_a_redis_that_requires_a_password(start_server, redis_server, monkeypatch):  # noqa: F811
    """Redis AUTH: the password in the URL or in LIVECONTROLS_REDIS_PASSWORD; a wrong one leaves the node not
    ready (and never in a log line)."""
    assert redis_server.command("CONFIG", "SET", "requirepass", "s3 cret@x") == "OK"
    host = f"127.0.0.1:{redis_server.port}"
    a_node = start_server("--redis", f"redis://:s3%20cret%40x@{host}", "--node-id", "a", "--lease-ms", str(LEASE_MS))
    monkeypatch.setenv("LIVECONTROLS_REDIS_PASSWORD", "s3 cret@x")
    b_node = start_server("--redis", f"redis://{host}", "--node-id", "b", "--lease-ms", str(LEASE_MS))
    monkeypatch.delenv("LIVECONTROLS_REDIS_PASSWORD")
    assert_two_nodes_serve_one_room(a_node, b_node)

    wrong = start_server("--redis", f"redis://:nope@{host}", "--node-id", "w", "--lease-ms", str(LEASE_MS))
    wait_for(lambda: readiness(wrong) == 503, 10, "the node with a wrong password reports not ready")
    wrong.wait_for_log("AUTH failed")
    for node in (a_node, b_node, wrong):
        assert "s3 cret" not in node.stderr() and "s3%20cret" not in node.stderr() and "nope" not in node.stderr()


def test_nodes_work_as_an_acl_user_limited_to_their_prefix(start_server, redis_server):  # noqa: F811
    """Redis ACL: a user that may touch only the cluster's keys and channels and run only the command groups
    docs/DEPLOYMENT.md lists serves rooms across two nodes. `&lc:*` alone is not enough — Redis matches a PSUBSCRIBE
    pattern literally against the allowed ones —: such a node is not ready and logs Redis's refusal."""
    rules = ["on", ">n0de-pass", "~lc:*", "&lc:p:*", "&lc:n:*", "+@read", "+@write", "+@pubsub", "+@scripting", "+@connection", "+role"]
    assert redis_server.command("ACL", "SETUSER", "lcnode", "reset", *rules) == "OK"
    url = f"redis://lcnode:n0de-pass@127.0.0.1:{redis_server.port}"
    a_node = start_server("--redis", url, "--node-id", "a", "--lease-ms", str(LEASE_MS))
    b_node = start_server("--redis", url, "--node-id", "b", "--lease-ms", str(LEASE_MS))
    assert_two_nodes_serve_one_room(a_node, b_node)
    assert redis_server.command("ACL", "SETUSER", "lcnode", "resetchannels", "&lc:*") == "OK"
    c_node = start_server("--redis", url, "--node-id", "c", "--lease-ms", str(LEASE_MS))
    c_node.wait_for_log("Redis refused the node's subscriptions")
    c_node.wait_for_log("NOPERM")
    assert readiness(c_node) == 503
