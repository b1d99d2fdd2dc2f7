"""The `poll` control through the real server: ballots private until the reveal (each member's patches fit its own
view, checked against a fresh snapshot), a host who sees every ballot, resume rules, a restart and a cluster."""
import json

from livecontrols_client import Client
from livecontrols_server import Server
from redis_server import CLUSTER_LEASE_MS, cluster, redis_server  # noqa: F401  (fixtures)
from test_auth import SECRET, mint
from test_cluster import intent_until_acked


def poll(client, control="lunch", room="demo"):
    return client.state(room)[ "controls"][control]


def assert_own_view(client, room="demo"):
    """The state this client's patches built is the server's own snapshot for its session (a resync), at one version."""
    client.wait_state(lambda s: client.session in s["presence"], room=room)
    held, version = client.state(room), client.version(room)
    snapshot = client.join(room=room)
    assert snapshot["version"] == version, "nothing else happened meanwhile"
    assert held == snapshot["state"]


def settle(clients, room="demo"):
    """Waits until every client reached the highest version any of them has seen."""
    top = max(c.version(room) for c in clients)
    for c in clients:
        c.wait_version(top, room=room)


def test_ballots_are_private_until_the_reveal(clients):
    a, b, c = clients(), clients(), clients()
    for x in (a, b, c):
        x.join()
    assert poll(a)["phase"] == "open" and "tally" not in poll(a) and poll(a)["ballots"] == {}
    assert a.intent("lunch", "vote", {"option": "Pizza"})["type"] == "ack"
    assert b.intent("lunch", "vote", {"option": "Sushi"})["type"] == "ack"
    settle([a, b, c])
    assert poll(a)["ballots"] == {a.session: ["Pizza"]} and poll(a)["voters"] == 2
    assert poll(b)["ballots"] == {b.session: ["Sushi"]}
    assert poll(c)["ballots"] == {} and poll(c)["voters"] == 2 and "tally" not in poll(c)
    vote = next(p for p in c.patches["demo"] if p["cause"].get("intent") == "vote")
    assert [op["path"] for op in vote["ops"]] == ["/controls/lunch/voters"], "a watcher learns only the count"
    assert "args" not in vote["cause"], "the cause does not tell the option"
    for x in (a, b, c):
        assert_own_view(x)

    assert c.intent("lunch", "close")["type"] == "ack"
    refused = c.intent("lunch", "vote", {"option": "Salad"})
    assert refused["code"] == "closed" and "closed" in refused["message"]
    assert c.intent("lunch", "reveal")["type"] == "ack"
    settle([a, b, c])
    for x in (a, b, c):
        assert poll(x)["tally"] == {"Pizza": 1, "Sushi": 1, "Salad": 0}
    assert poll(c)["ballots"] == {}, "without showVoters ballots stay private after the reveal"
    assert c.intent("lunch", "vote", {"option": "Salad"})["code"] == "finished"
    assert c.intent("lunch", "reset")["type"] == "ack"
    settle([a, b, c])
    for x in (a, b, c):
        assert "tally" not in poll(x) and poll(x)["ballots"] == {} and poll(x)["voters"] == 0
        assert_own_view(x)


def test_members_add_options_and_multi_ballots_keep_option_order(start_server, tmp_path):
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"templates": {"t": {"controls": {"ideas": {
        "kind": "poll", "label": "Ideas", "mode": "multi", "maxVotes": 2, "allowAdd": True, "maxOptions": 3}}}},
        "defaultTemplate": "t"}))
    s = start_server("--config", str(config))
    a = s.client()
    a.join("r")
    assert a.intent("ideas", "add", {"label": " Picnic "}, room="r")["type"] == "ack"
    assert a.intent("ideas", "add", {"label": "picnic"}, room="r")["code"] == "conflict"
    a.intent("ideas", "add", {"label": "Museum"}, room="r")
    a.intent("ideas", "add", {"label": "Cinema"}, room="r")
    assert a.intent("ideas", "add", {"label": "Zoo"}, room="r")["code"] == "too_large"
    assert [o["id"] for o in poll(a, "ideas", "r")["options"]] == ["added-1", "added-2", "added-3"]
    assert poll(a, "ideas", "r")["options"][0] == {"id": "added-1", "label": "Picnic", "addedBy": a.session}
    a.intent("ideas", "vote", {"option": "added-3"}, room="r")
    a.intent("ideas", "vote", {"option": "added-1"}, room="r")
    assert a.intent("ideas", "vote", {"option": "added-2"}, room="r")["code"] == "out_of_range"
    assert a.intent("ideas", "vote", {"option": "nope"}, room="r")["code"] == "not_found"
    assert poll(a, "ideas", "r")["ballots"] == {a.session: ["added-1", "added-3"]}


def test_a_hosted_workshop_vote(start_server, connect):
    server = start_server("--auth", "required", "--auth-secret", SECRET)
    admin = connect(server)
    assert admin.join(room="ws1", template="workshop", token=mint("--role", "admin", "--room", "ws1"))["type"] == "snapshot"
    host, ann, bob = connect(server), connect(server), connect(server)
    host.join(room="ws1", token=mint("--role", "host", "--room", "ws1", "--name", "Hana"))
    ann.join(room="ws1", token=mint("--room", "ws1", "--name", "Ann"))
    bob.join(room="ws1", token=mint("--room", "ws1", "--name", "Bob"))
    vote = poll(ann, "vote", "ws1")
    assert vote["permissions"] == {"open": ["host"], "close": ["host"], "reveal": ["host"], "reset": ["host"]}
    assert vote["options"] == [] and vote["allowAdd"] is True
    ann.intent("vote", "add", {"label": "Four-day week"}, room="ws1")
    bob.intent("vote", "add", {"label": "Hack day"}, room="ws1")
    ann.intent("vote", "vote", {"option": "added-2"}, room="ws1")
    bob.intent("vote", "vote", {"option": "added-2"}, room="ws1")
    bob.intent("vote", "vote", {"option": "added-1"}, room="ws1")
    everyone = [admin, host, ann, bob]
    settle(everyone, "ws1")
    assert poll(host, "vote", "ws1")["tally"] == {"added-1": 1, "added-2": 2}, "the host sees the tally all along"
    assert poll(host, "vote", "ws1")["ballots"] == {ann.session: ["added-2"], bob.session: ["added-1", "added-2"]}
    assert poll(admin, "vote", "ws1")["ballots"] == {} and "tally" not in poll(admin, "vote", "ws1"), "a member's admin role sees no more"
    assert poll(ann, "vote", "ws1")["ballots"] == {ann.session: ["added-2"]} and "tally" not in poll(ann, "vote", "ws1")
    refused = ann.intent("vote", "reveal", room="ws1")
    assert refused["code"] == "forbidden" and "needs role host" in refused["message"]
    assert host.intent("vote", "reveal", room="ws1")["type"] == "ack"
    settle(everyone, "ws1")
    assert poll(ann, "vote", "ws1")["tally"] == {"added-1": 1, "added-2": 2}
    for x in everyone:
        assert_own_view(x, "ws1")


def test_resume_is_refused_only_to_a_state_that_had_its_own_ballot(server):
    voter, watcher, other = Client(server.ws_url), Client(server.ws_url), Client(server.ws_url)
    for x in (voter, watcher, other):
        x.join()
    voter.intent("lunch", "vote", {"option": "Sushi"})
    settle([voter, watcher, other])
    at = {x: (x.rooms["demo"]["epoch"], x.version(), x.session) for x in (voter, watcher)}
    voter.close()
    watcher.close()
    other.intent("lunch", "vote", {"option": "Pizza"})  # missed by both
    for old in (voter, watcher):
        epoch, version, session = at[old]
        again = Client(server.ws_url)
        again.rooms["demo"] = {"epoch": epoch, "version": version, "state": old.state()}
        again.patches["demo"] = []
        reply = again.join(since={"epoch": epoch, "version": version, "session": session})
        if old is voter:
            assert reply["type"] == "snapshot" and reply["resumed"] is False, "its state has a ballot the new session does not see"
            assert poll(again)["ballots"] == {}
        else:
            assert reply["type"] == "resumed"
            again.wait_version(server_version(other), "demo")
            assert poll(again)["ballots"] == {} and poll(again)["voters"] == 2
            assert_own_view(again)
        again.close()


def server_version(client):
    return client.version()


def test_ballots_and_their_privacy_survive_a_restart(tmp_path):
    data = tmp_path / "data"
    server = Server("--data-dir", str(data)).start()
    try:
        a, w = server.client(), server.client()
        a.join()
        w.join()
        a.intent("lunch", "vote", {"option": "Salad"})
        settle([a, w])
        watcher_at = (w.rooms["demo"]["epoch"], w.version(), w.session, w.state())
        a.close()
        w.close()
    finally:
        server.stop()
    server = Server("--data-dir", str(data)).start()
    try:
        admin_view = server.client()
        state = admin_view.join()["state"]["controls"]["lunch"]
        assert state["voters"] == 1 and state["ballots"] == {} and "tally" not in state, "the ballot counts; still private"
        epoch, version, session, held = watcher_at
        back = Client(server.ws_url)
        back.rooms["demo"] = {"epoch": epoch, "version": version, "state": held}
        back.patches["demo"] = []
        assert back.join(since={"epoch": epoch, "version": version, "session": session})["type"] == "resumed"
        assert admin_view.intent("lunch", "reveal")["type"] == "ack"
        back.wait_state(lambda s: "tally" in s["controls"]["lunch"])
        assert poll(back)["tally"]["Salad"] == 1
        assert_own_view(back)
    finally:
        server.stop()


def test_views_across_a_cluster_and_a_takeover(cluster, connect):
    a_node, b_node = cluster(2, "--auth-secret", SECRET)
    admin = connect(a_node)  # node a owns the room
    assert admin.join(room="ws1", template="workshop", token=mint("--role", "admin", "--room", "ws1"))["type"] == "snapshot"
    host, ann, bob = connect(b_node), connect(b_node), connect(b_node)
    host.join(room="ws1", token=mint("--role", "host", "--room", "ws1"))
    ann.join(room="ws1", token=mint("--room", "ws1"))
    bob.join(room="ws1", token=mint("--room", "ws1"))
    assert ann.intent("vote", "add", {"label": "Hack day"}, room="ws1")["type"] == "ack"
    assert ann.intent("vote", "vote", {"option": "added-1"}, room="ws1")["type"] == "ack"
    settle([admin, host, ann, bob], "ws1")
    assert poll(bob, "vote", "ws1")["ballots"] == {} and poll(bob, "vote", "ws1")["voters"] == 1
    assert poll(ann, "vote", "ws1")["ballots"] == {ann.session: ["added-1"]}
    assert poll(host, "vote", "ws1")["tally"] == {"added-1": 1}
    for x in (host, ann, bob):
        assert_own_view(x, "ws1")
    a_node.proc.kill()  # node b takes the room over from Redis (history with who receives each op)
    assert intent_until_acked(bob, "vote", "vote", {"option": "added-1"}, room="ws1", timeout=CLUSTER_LEASE_MS / 1000 + 10)["type"] == "ack"
    assert host.intent("vote", "reveal", room="ws1")["type"] == "ack"
    for x in (host, ann, bob):
        x.wait_state(lambda s: s["controls"]["vote"]["phase"] == "revealed" and admin.session not in s["presence"], room="ws1")
    settle([host, ann, bob], "ws1")
    assert poll(bob, "vote", "ws1")["tally"] == {"added-1": 2}
    for x in (host, ann, bob):
        assert_own_view(x, "ws1")
