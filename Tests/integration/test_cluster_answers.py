"""Cluster mode: where a node sends a room's requests when its owner changes, and that each request gets one answer
when a node's Redis subscriber connection drops (real nodes on loopback, a real redis-server)."""
from __future__ import annotations

import json
import subprocess
import time

import pytest

from redis_server import CLUSTER_LEASE_MS as LEASE_MS, cluster, redis_server  # noqa: F401  (fixtures)
from livecontrols_client import Client
from test_cluster import wait_for


def test_a_client_that_saw_the_failover_reaches_the_new_owner_at_once(start_server, redis_server):  # noqa: F811
    """A node learns a room's new owner from its first patch, not only at its next maintenance pass (a third of the
    lease later): before, an intent sent through the other surviving node right after the failover patch went to the
    dead owner and was refused `unavailable` (a click lost in the browser test of the cluster page)."""
    lease = ["--lease-ms", "3000"]  # maintenance passes 1 s apart: the window before this fix is wide
    owner, n1, n2 = (start_server("--redis", redis_server.url, "--node-id", f"f{i}", *lease) for i in range(3))
    first = Client(owner.ws_url)
    first.join(name="first")  # the first node to need the room owns it
    c1, c2 = Client(n1.ws_url), Client(n2.ws_url)
    c1.join(name="one")
    c2.join(name="two")
    assert c1.intent("quantity", "press", {"direction": "next"})["type"] == "ack"
    c2.wait_state(lambda s: s["controls"]["quantity"]["value"] >= 3)
    owner.proc.kill()
    for c in (c1, c2):
        c.wait_state(lambda s: s["controls"]["quantity"]["holding"] is None, timeout=10)
        assert c.patches["demo"][-1]["cause"]["kind"] == "failover"
    new_owner = wait_for(lambda: next((n for n in (n1, n2) if json.load(n.get("/healthz"))["cluster"]["ownedRooms"] == 1), None),
                         timeout=5, what="a surviving node owns the room")
    other = c2 if new_owner is n1 else c1
    reply = other.intent("quantity", "prev")
    assert reply["type"] == "ack", reply


def redis_clients(redis_server, node) -> dict[str, dict[str, str]]:  # noqa: F811
    """The node's Redis connections by role, from `CLIENT LIST` (each is named `livecontrols:<node id>:<role>`)."""
    node_id = node.proc.args[node.proc.args.index("--node-id") + 1]
    clients = {}
    for line in redis_server.command("CLIENT", "LIST").splitlines():
        client = dict(f.split("=", 1) for f in line.split() if "=" in f)
        if client.get("name", "").startswith(f"livecontrols:{node_id}:"):
            clients[client["name"].rsplit(":", 1)[1]] = client
    return clients


def kill_subscriber_of(node, redis_server):  # noqa: F811
    """Closes the node's subscriber connection from the Redis side (`CLIENT KILL`)."""
    subscriber = redis_clients(redis_server, node)["subscriber"]
    assert subscriber["flags"] == "P", subscriber  # a pub/sub client
    assert redis_server.command("CLIENT", "KILL", "ID", subscriber["id"]) == 1


def test_each_node_names_its_redis_connections(cluster, connect, redis_server):  # noqa: F811
    """An operator (or a test) tells a node's connections apart in `CLIENT LIST`: `livecontrols:<node>:<role>`."""
    nodes = cluster(2)
    for node in nodes:
        connect(node).join()  # the store's connection is made on its first use
        clients = wait_for(lambda: (c := redis_clients(redis_server, node)) and len(c) == 3 and c, timeout=5,
                           what="three named connections")
        assert sorted(clients) == ["control", "store", "subscriber"]
        local_ports = {line.split()[3].rsplit(":", 1)[1] for line in subprocess.run(
            ["ss", "-tnpH"], capture_output=True, text=True, check=True).stdout.splitlines() if f"pid={node.proc.pid}," in line}
        assert {c["addr"].rsplit(":", 1)[1] for c in clients.values()} <= local_ports, "they are this node's sockets"


def test_every_request_is_answered_once_across_reconnects_of_the_subscriber(cluster, connect, redis_server):  # noqa: F811
    """A reply published while a node's subscriber connection is away is lost. The request used to wait for its owner
    to fall silent (the lease + 1 s), which never happens while a hold keeps the room ticking: it waited as long as
    the hold. Now every request still waiting when the subscriber comes back is answered `unavailable` at once, and a
    reply that comes after such an answer is dropped: one answer per request, within the reply timeout."""
    a_node, b_node = cluster(2)
    a = connect(a_node)
    a.join(name="owner")
    b = connect(b_node)
    b.join(name="other")
    for i in range(20):
        # A hold ticks until released (each press renews it, within `maxHoldMs`): the owner never falls silent.
        assert a.intent("month", "press", {"direction": "next"})["type"] == "ack"
        kill_subscriber_of(b_node, redis_server)  # the owner's stays: it gets the request, its reply may be lost
        b.send({"type": "intent", "id": f"k{i}", "room": "demo", "control": "quantity", "intent": "set", "args": {"value": i}})
        reply = b.recv(lambda m: m.get("id") == f"k{i}", timeout=LEASE_MS / 1000 + 3)
        assert reply["type"] == "ack" or reply["code"] == "unavailable", reply
    b.expect_silence(lambda m: str(m.get("id", "")).startswith("k"), timeout=LEASE_MS / 1000 + 1)  # no second answer
    released = a.intent("month", "release", {})
    assert released["type"] == "ack", released
    worked = b.intent("quantity", "set", {"value": 77})
    assert worked["type"] == "ack", worked  # and the room works on


def test_a_redis_that_restarts_empty_tells_the_members_to_join_again(cluster, connect, redis_server):  # noqa: F811
    """PROTOCOL.md, cluster mode: a Redis that restarts without its data has lost every room. Clients in one are told
    (`error` `unavailable` with the room and no id, as when a room stops: join again) — before, they got
    `unknown_room` for every request and nothing else, so a page stayed frozen on a room that no longer existed —
    and joining again makes the room anew: a new epoch, the same on both nodes."""
    import shutil
    a_node, b_node = cluster(2)
    a, b = connect(a_node), connect(b_node)
    first = a.join()
    b.join()
    assert b.intent("quantity", "set", {"value": 5})["type"] == "ack"
    redis_server.stop()
    for path in redis_server.dir.iterdir():  # its data gone, as on a machine that lost its disk
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    redis_server.start()
    timeout = LEASE_MS / 1000 * 3 + 5
    for client in (a, b):
        told = client.recv(lambda m: m["type"] == "error" and "id" not in m, timeout=timeout)
        assert told["code"] == "unavailable" and told["room"] == "demo", told
    again = join_again(a, first)
    join_again(b, first)
    assert again["epoch"] != first["epoch"] and again["state"]["controls"]["quantity"]["value"] != 5  # anew
    ack = b.intent("quantity", "set", {"value": 6})
    assert ack["type"] == "ack", ack
    a.wait_version(ack["version"])
    assert a.state() == b.state()


def join_again(client, before: dict) -> dict:
    """Joins resuming from `before`, as the clients do after a room stopped; retried while owners settle."""
    deadline = time.monotonic() + 10
    while True:
        reply = client.join(since={"epoch": before["epoch"], "version": before["version"]})
        if reply["type"] == "snapshot":
            return reply
        assert reply.get("code") == "unavailable" and time.monotonic() < deadline, reply
        time.sleep(0.1)


@pytest.mark.parametrize("close", ["sigterm", "api disconnect"])
def test_a_close_acks_what_the_node_forwarded_or_it_was_never_applied(cluster, connect, close):
    """PROTOCOL.md, Closing: once a close is asked for, an intent is acked (after its patch) or never applied — in
    cluster mode too, for intents a node forwarded to the room's owner on another node: at shutdown (1001), and when
    the server API disconnects the session (4001, which takes it out of its rooms at once). Before, the close frame
    went out at once (and a 4001's leave dropped what was waiting) while the owner went on applying what had been
    forwarded: applied, never acked."""
    import signal
    from api_client import API, API_KEY
    from rawws import RawClient, encode_frame
    owner_node, node = cluster(2, "--rate", "100000", "--burst", "100000", "--api-key", API_KEY)
    watcher = connect(owner_node)
    watcher.join(name="watcher")  # the first join: owner_node owns the room
    raw = RawClient(node.port)
    session = raw.read_json()["session"]
    raw.send_text({"type": "join", "room": "demo", "id": "j"})
    assert raw.read_json()["type"] == "snapshot"
    watcher.wait_state(lambda s: session in s["presence"])

    def intent(i: int) -> bytes:
        return encode_frame(0x1, json.dumps({"type": "intent", "room": "demo", "control": "quantity", "intent": "set",
                                             "args": {"value": 10 + i % 2}, "id": f"f{i}"}).encode())
    acked, patched = set(), set()

    def take(message):
        if message["type"] == "patch":
            patched.add(message["version"])
        if message["type"] == "ack":
            acked.add(message["id"])
            assert message["version"] in patched, "an intent's patch comes before its ack"
        assert message["type"] != "error", message
    raw.sock.sendall(intent(0))
    while not acked:
        take(raw.read_json())
    raw.sock.sendall(b"".join(intent(i) for i in range(1, 200)))
    if close == "sigterm":
        node.proc.send_signal(signal.SIGTERM)
    else:
        assert API(node).delete(f"/rooms/demo/members/{session}").json()["disconnected"] is True
    with pytest.raises(ConnectionAbortedError) as closed:
        while True:
            take(raw.read_json())
    assert closed.value.args[0] == (1001 if close == "sigterm" else 4001)
    # The session's leave comes after every intent its node forwarded (one stream, in order, through Redis).
    watcher.wait_state(lambda s: session not in s["presence"], timeout=10)
    applied = {m["cause"]["id"] for m in watcher.log
               if m["type"] == "patch" and m["cause"].get("kind") == "intent" and m["cause"].get("session") == session}
    assert applied == acked, f"applied, never acked: {sorted(applied - acked)[:5]}; acked but not applied: {sorted(acked - applied)[:5]}"
