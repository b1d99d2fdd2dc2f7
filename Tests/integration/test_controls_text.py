"""The `text` control through the real server: concurrent splices transformed against each other (offsets in Unicode
scalar values), the applied edit in `cause.splices`, the server API's edits, the edit log across a restart and a
cluster takeover."""
import json
import random

from api_client import API, API_KEY
from livecontrols_server import Server
from redis_server import CLUSTER_LEASE_MS, cluster, redis_server  # noqa: F401  (fixtures)
from test_cluster import intent_until_acked


def text(client, control="notes", room="demo"):
    state = client.state(room)["controls"][control]
    return "\n".join(state["lines"])


def rev(client, control="notes", room="demo"):
    return client.state(room)["controls"][control]["rev"]


def test_two_splices_from_one_revision_both_keep_their_text(clients):
    a, b = clients(), clients()
    a.join()
    b.join()
    assert a.intent("notes", "set", {"text": "Hello world"})["type"] == "ack"
    b.wait_state(lambda s: s["controls"]["notes"]["lines"] == ["Hello world"])
    base = rev(b)
    assert a.intent("notes", "splice", {"at": 5, "insert": ",", "base": base})["type"] == "ack"
    assert b.intent("notes", "splice", {"at": 11, "insert": "!\n😀 é", "base": base})["type"] == "ack"
    for c in (a, b):
        c.wait_state(lambda s: s["controls"]["notes"]["rev"] == base + 2)
        assert text(c) == "Hello, world!\n😀 é"
        assert c.state()["controls"]["notes"]["lines"] == ["Hello, world!", "😀 é"]
    applied = a.patches["demo"][-1]
    assert applied["cause"]["splices"] == [{"at": 12, "delete": 0, "insert": "!\n😀 é"}], "moved past Ann's comma"
    # A delete over what someone else already deleted does not delete twice; offsets count 😀 as one.
    now = rev(a)
    a.intent("notes", "splice", {"at": 14, "delete": 1, "base": now})  # the 😀
    b.intent("notes", "splice", {"at": 14, "delete": 3, "base": now})  # 😀, space, é
    for c in (a, b):
        c.wait_state(lambda s: s["controls"]["notes"]["rev"] == now + 2)
        assert text(c) == "Hello, world!\n"
    assert a.intent("notes", "splice", {"at": 99, "base": rev(a)})["code"] == "out_of_range"
    assert a.intent("notes", "splice", {"at": 0, "base": rev(a) + 1})["code"] == "out_of_range"
    assert a.intent("notes", "splice", {"at": 0, "insert": "x" * 2001, "base": rev(a)})["code"] == "too_large"
    assert a.intent("notes", "splice", {"at": "0", "base": rev(a)}, validate=False)["code"] == "invalid_args"


def test_random_concurrent_splices_converge_to_the_servers_text(clients):
    """Three clients splice at random on the revision each last saw (no waiting), the server transforms: all end with
    one text, the one a fresh join gets, and every applied edit in cause.splices rebuilds it."""
    rng = random.Random(35)
    cs = [clients() for _ in range(3)]
    for c in cs:
        c.join()
    start = cs[0].state()["controls"]["notes"]
    rebuilt = list("\n".join(start["lines"]))
    for _ in range(120):
        c = rng.choice(cs)
        length = len(list(text(c)))
        at = rng.randint(0, length)
        reply = c.intent("notes", "splice", {"at": at, "delete": rng.choice([0, 0, 1, 2]) if at < length - 2 else 0,
                                              "insert": rng.choice(["", "a", "ß", "😀", "\n", "xyz"]), "base": rev(c)})
        assert reply["type"] == "ack", reply
    final = cs[0].join()  # a resync: the server's text now
    for c in cs:
        c.wait_version(final["version"])
        assert c.state()["controls"]["notes"] == final["state"]["controls"]["notes"]
    for patch in cs[1].patches["demo"]:
        for s in patch["cause"].get("splices", []):
            rebuilt[s["at"]:s["at"] + s["delete"]] = list(s["insert"])
    assert "".join(rebuilt) == "\n".join(final["state"]["controls"]["notes"]["lines"])


def test_the_server_apis_edit_says_its_splices(start_server):
    s = start_server("--api-key", API_KEY)
    c = s.client()
    c.join()
    assert API(s).post("/rooms/demo/intents", {"control": "notes", "intent": "set", "args": {"text": "from the backend"}}).status_code == 200
    patch = c.recv(lambda m: m.get("type") == "patch" and m["cause"]["kind"] == "server")
    assert patch["cause"]["intents"] == [{"control": "notes", "intent": "set", "splices": [{"at": 0, "delete": 0, "insert": "from the backend"}]}]


def config(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"templates": {"t": {"controls": {"note": {"kind": "text", "maxLength": 100}}}},
                                "defaultTemplate": "t"}))
    return path


def test_a_splice_made_before_a_restart_is_transformed_after_it(tmp_path):
    data = tmp_path / "data"
    server = Server("--config", str(config(tmp_path)), "--data-dir", str(data)).start()
    try:
        c = server.client()
        c.join("r")
        c.intent("note", "set", {"text": "abc"}, room="r")
        c.intent("note", "splice", {"at": 3, "insert": "def", "base": 1}, room="r")
        c.close()
    finally:
        server.stop()
    server = Server("--config", str(config(tmp_path)), "--data-dir", str(data)).start()
    try:
        c = server.client()
        c.join("r")
        assert rev(c, "note", "r") == 2
        # Made on revision 1 ("abc"), before "def" was added: it is moved past it, as before the restart.
        assert c.intent("note", "splice", {"at": 3, "insert": "!", "base": 1}, room="r")["type"] == "ack"
        c.wait_state(lambda s: s["controls"]["note"]["rev"] == 3, room="r")
        assert text(c, "note", "r") == "abc!def"
    finally:
        server.stop()


def test_the_edit_log_survives_a_takeover(cluster, tmp_path):
    owner, survivor = cluster(2, "--config", str(config(tmp_path)))
    a = owner.client()
    a.join("r")
    b = survivor.client()
    b.join("r")
    b.intent("note", "set", {"text": "one two"}, room="r")
    b.wait_state(lambda s: s["controls"]["note"]["rev"] == 1, room="r")
    b.intent("note", "splice", {"at": 0, "insert": ">", "base": 1}, room="r")
    owner.proc.kill()
    reply = intent_until_acked(b, "note", "splice", {"at": 7, "insert": " three", "base": 1}, room="r", timeout=CLUSTER_LEASE_MS / 1000 + 10)
    assert reply["type"] == "ack"
    b.wait_state(lambda s: s["controls"]["note"]["rev"] == 3, room="r")
    assert text(b, "note", "r") == ">one two three"
