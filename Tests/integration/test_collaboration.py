"""Collaboration: presence data set by clients, intents reserved for roles by a template's permissions."""
import json

import pytest

from redis_server import CLUSTER_LEASE_MS, cluster, redis_server  # noqa: F401  (fixtures)
from test_auth import SECRET, mint
from test_cluster import intent_until_acked


def test_presence_data_reaches_everyone_and_is_acked(clients):
    ann, bob = clients(), clients()
    ann.join(name="Ann")
    bob.join(name="Bob")
    ack = ann.presence({"focus": "signup.email", "color": "#e11d48"}, id="p1")
    assert ack["type"] == "ack" and ack["room"] == "demo"
    state = bob.wait_version(ack["version"])["state"]
    assert state["presence"][ann.session] == {"name": "Ann", "user": None, "roles": ["admin"], "holding": [], "editing": [],
                                             "data": {"focus": "signup.email", "color": "#e11d48"}}
    ann.presence({"focus": None})  # no id: no ack, the patch still goes to everyone
    state = bob.wait_state(lambda s: "focus" not in s["presence"][ann.session]["data"])
    assert state["presence"][ann.session]["data"] == {"color": "#e11d48"}
    assert ann.wait_state(lambda s: s == state) == state


def test_presence_patch_cause_names_the_session_and_request(clients):
    ann, bob = clients(), clients()
    ann.join()
    bob.join()
    ann.presence({"typing": True}, id=42)
    patch = bob.recv(lambda m: m["type"] == "patch" and m["cause"]["kind"] == "presence")
    assert patch["cause"] == {"kind": "presence", "session": ann.session, "id": 42}
    assert patch["ops"] == [{"op": "add", "path": f"/presence/{ann.session}/data/typing", "value": True}]


@pytest.mark.parametrize("message, code", [
    ({"type": "presence", "room": "demo", "id": "x"}, "invalid_message"),
    ({"type": "presence", "room": "demo", "data": [1], "id": "x"}, "invalid_message"),
    ({"type": "presence", "room": "demo", "data": {"": 1}, "id": "x"}, "invalid_message"),
    ({"type": "presence", "room": "demo", "data": {"note": "x" * 3000}, "id": "x"}, "too_large"),
    ({"type": "presence", "room": "demo", "data": {f"k{i}": i for i in range(33)}, "id": "x"}, "too_large"),
    ({"type": "presence", "room": "elsewhere", "data": {}, "id": "x"}, "not_joined"),
])
def test_bad_presence_gets_a_typed_error_and_changes_nothing(clients, message, code):
    c = clients()
    version = c.join()["version"]
    c.send(message, validate=code != "invalid_message")  # malformed on purpose: not checked before sending
    error = c.recv(lambda m: m["type"] == "error")
    assert error["code"] == code and error["id"] == "x", error
    assert c.intent("quantity", "next")["version"] == version + 1, "nothing else changed; the connection still works"


def test_presence_is_refused_in_a_room_without_presence(start_server, tmp_path):
    config = tmp_path / "c.json"
    config.write_text('{"templates": {"big": {"presence": false, "controls": {"q": {"kind": "stepper"}}}}}')
    server = start_server("--config", str(config))
    c = server.client()
    c.join(room="hall")
    assert c.presence({"focus": "q"}, room="hall", id=1)["code"] == "presence_off"
    c.close()


def test_presence_beyond_its_rate_is_refused_not_queued(clients):
    c = clients()
    c.join()
    for i in range(45):
        c.send({"type": "presence", "room": "demo", "data": {"n": i}, "id": i})
    replies = [c.recv(lambda m: m["type"] in ("ack", "error") and m.get("id") == i) for i in range(45)]
    codes = [r.get("code", "ack") for r in replies]
    assert codes[:40] == ["ack"] * 40, codes
    assert "rate_limited" in codes[40:], codes


@pytest.fixture
def hosted(start_server):
    server = start_server("--auth", "required", "--auth-secret", SECRET)
    admin = server.client()
    assert admin.join(room="ws1", template="workshop", token=mint("--role", "admin", "--room", "ws1"))["type"] == "snapshot"
    yield server
    admin.close()


def test_only_the_host_moves_a_host_led_agenda(hosted, connect):
    host, guest = connect(hosted), connect(hosted)
    snap = host.join(room="ws1", token=mint("--role", "host", "--room", "ws1", "--name", "Hana"))
    guest.join(room="ws1", token=mint("--role", "editor", "--room", "ws1", "--name", "Gus"))
    agenda = snap["state"]["controls"]["agenda"]
    assert agenda["permissions"] == {"*": ["host"]}, "the state says who may move it"
    assert snap["state"]["presence"][host.session]["roles"] == ["editor", "host"]
    refused = guest.intent("agenda", "next", room="ws1")
    assert refused["code"] == "forbidden" and refused["message"] == "next on agenda needs role host (you have: editor)"
    assert host.intent("agenda", "next", room="ws1")["type"] == "ack"
    state = guest.wait_state(lambda s: s["controls"]["agenda"]["index"] == 1, room="ws1")
    assert state["controls"]["agenda"]["permissions"] == {"*": ["host"]}
    assert guest.presence({"focus": "agenda"}, room="ws1", id="p")["type"] == "ack", "presence is anyone's"


def test_a_viewer_with_a_custom_role_still_cannot_act(hosted, connect):
    c = connect(hosted)
    c.join(room="ws1", token=mint("--role", "viewer", "--role", "host", "--room", "ws1"))
    assert c.intent("agenda", "next", room="ws1")["code"] == "forbidden"
    assert c.state("ws1")["presence"][c.session]["roles"] == ["viewer", "host"]


def test_in_cluster_mode_roles_and_presence_data_survive_a_takeover(cluster, connect):
    a_node, b_node = cluster(2, "--auth-secret", SECRET)
    admin = connect(a_node)  # the first join makes node a the owner
    assert admin.join(room="ws1", template="workshop", token=mint("--role", "admin", "--room", "ws1"))["type"] == "snapshot"
    host, guest = connect(b_node), connect(b_node)
    host.join(room="ws1", token=mint("--role", "host", "--room", "ws1", "--name", "Hana"))
    guest_token = mint("--room", "ws1", "--name", "Gus")
    guest.join(room="ws1", token=guest_token)
    assert host.presence({"focus": "agenda"}, room="ws1", id="p")["type"] == "ack", "forwarded to the owner on node a"
    guest.wait_state(lambda s: s["presence"][host.session]["data"] == {"focus": "agenda"}, room="ws1")
    assert guest.intent("agenda", "next", room="ws1")["code"] == "forbidden"
    assert claim(host, "agenda", room="ws1")["type"] == "ack", "a claim, stored with the room"
    a_node.proc.kill()  # node b takes the room over from what Redis holds
    failover = guest.recv(lambda m: m["type"] == "patch" and m["cause"]["kind"] == "failover", timeout=CLUSTER_LEASE_MS / 1000 + 5)
    assert failover["cause"]["claimsEnded"] == [{"control": "agenda", "target": "*", "session": host.session, "reason": "failover"}]
    state = guest.wait_state(lambda s: admin.session not in s["presence"], room="ws1", timeout=CLUSTER_LEASE_MS / 1000 + 5)
    assert state["presence"][host.session] == {"name": "Hana", "user": None, "roles": ["editor", "host"], "holding": [], "editing": [], "data": {"focus": "agenda"}}
    assert intent_until_acked(host, "agenda", "next", None, room="ws1")["type"] == "ack"
    assert guest.intent("agenda", "next", room="ws1")["code"] == "forbidden", "the new owner knows who is host"
    fresh = guest.join(room="ws1", token=guest_token)  # a resync: the new owner's own snapshot
    assert fresh["state"]["presence"][host.session]["data"] == {"focus": "agenda"}


CLAIMS_CONFIG = {
    "templates": {"intake": {
        "controls": {
            "details": {"kind": "form", "elements": [{"id": "contact", "fields": [
                {"id": "email", "type": "text"}, {"id": "name", "type": "text"}]}]},
            "people": {"kind": "list", "values": ["Ann", "Bob", "Cy"]},
        },
        "claims": {"details": {"mode": "exclusive", "leaseMs": 2000}},
    }},
}


@pytest.fixture
def intake(start_server, tmp_path):
    config = tmp_path / "intake.json"
    config.write_text(json.dumps(CLAIMS_CONFIG))
    return start_server("--config", str(config))


def claim(client, control, target="*", id="c", kind="claim", room="demo"):
    client.send({"type": kind, "room": room, "control": control, "target": target, "id": id})
    return client.recv(lambda m: m["type"] in ("ack", "error") and m.get("id") == id)


def test_a_claim_is_seen_by_everyone_contested_and_exclusive(intake, connect):
    ann, bob = connect(intake), connect(intake)
    ann.join(name="Ann")
    bob.join(name="Bob")
    assert claim(ann, "details", "contact.email")["type"] == "ack"
    state = bob.wait_state(lambda s: s["controls"]["details"]["claims"] != {})
    assert state["controls"]["details"]["claims"] == {"contact.email": {"session": ann.session, "exclusive": True, "leaseMs": 2000}}
    assert state["presence"][ann.session]["editing"] == [{"control": "details", "target": "contact.email"}]
    contested = claim(bob, "details", "contact")
    assert contested["code"] == "claimed" and "Ann" in contested["message"], contested
    refused = bob.intent("details", "set", {"element": "contact", "field": "email", "value": "bob@example.org"})
    assert refused["code"] == "claimed" and "Ann" in refused["message"]
    assert bob.intent("details", "set", {"element": "contact", "field": "name", "value": "Bob"})["type"] == "ack"
    assert ann.intent("details", "set", {"element": "contact", "field": "email", "value": "ann@example.org"})["type"] == "ack"
    assert claim(bob, "people", "i2")["type"] == "ack", "a soft claim on a list item"
    assert ann.intent("people", "remove", {"id": "i2"})["type"] == "ack", "soft: others may still write"
    patch = bob.recv(lambda m: m["type"] == "patch" and "claimsEnded" in m["cause"])
    assert patch["cause"]["claimsEnded"] == [{"control": "people", "target": "i2", "session": bob.session, "reason": "removed"}]


@pytest.mark.parametrize("how, reason", [("unclaim", "release"), ("blur", "blur"), ("leave", "leave"), ("close", "disconnect")])
def test_a_claim_ends_on_every_path_with_its_reason(intake, connect, how, reason):
    ann, watcher = connect(intake), connect(intake)
    ann.join()
    watcher.join()
    assert claim(ann, "details", "contact")["type"] == "ack"
    if how == "unclaim":
        assert claim(ann, "details", "contact", kind="unclaim", id="u")["type"] == "ack"
    elif how == "blur":
        ann.send({"type": "unclaim", "room": "demo", "control": "details", "target": "contact", "reason": "blur", "id": "b"})
        assert ann.recv(lambda m: m.get("id") == "b")["type"] == "ack"
    elif how == "leave":
        ann.leave()
    else:
        ann.close()
    patch = watcher.recv(lambda m: m["type"] == "patch" and "claimsEnded" in m["cause"])
    assert patch["cause"]["claimsEnded"] == [{"control": "details", "target": "contact", "session": ann.session, "reason": reason}]
    assert watcher.state()["controls"]["details"]["claims"] == {}


def test_a_claim_not_renewed_ends_with_its_lease(intake, connect):
    ann, watcher = connect(intake), connect(intake)
    ann.join()
    watcher.join()
    assert claim(ann, "details", "*")["type"] == "ack"
    patch = watcher.recv(lambda m: m["type"] == "patch" and "claimsEnded" in m["cause"], timeout=10)
    assert patch["cause"]["kind"] == "timer"
    assert patch["cause"]["claimsEnded"][0]["reason"] == "lease"


@pytest.mark.parametrize("message, code", [
    ({"type": "claim", "room": "demo", "control": "details", "target": "contact.phone", "id": "x"}, "not_found"),
    ({"type": "claim", "room": "demo", "control": "nope", "id": "x"}, "unknown_control"),
    ({"type": "claim", "room": "demo", "control": "details", "target": "a/b", "id": "x"}, "invalid_message"),
    ({"type": "claim", "room": "demo", "control": "details", "target": 3, "id": "x"}, "invalid_message"),
    ({"type": "unclaim", "room": "demo", "control": "details", "id": "x"}, "not_holder"),
    ({"type": "unclaim", "room": "demo", "control": "details", "reason": "bored", "id": "x"}, "invalid_message"),
    ({"type": "claim", "room": "other", "control": "details", "id": "x"}, "not_joined"),
])
def test_bad_claims_get_typed_errors(intake, connect, message, code):
    c = connect(intake)
    c.join()
    c.send(message, validate=code != "invalid_message")  # malformed on purpose: not checked before sending
    error = c.recv(lambda m: m["type"] == "error")
    assert error["code"] == code and error["id"] == "x", error


def test_in_cluster_mode_claims_and_unacked_presence_go_through_the_owner(cluster, connect):
    a_node, b_node = cluster(2)
    owner_side, remote = connect(a_node), connect(b_node)
    owner_side.join()
    remote.join()
    assert claim(remote, "signup", "account.email")["type"] == "ack"
    owner_side.wait_state(lambda s: s["presence"].get(remote.session, {}).get("editing") == [{"control": "signup", "target": "account.email"}])
    remote.presence({"focus": "signup"})  # no id: nothing waits for an answer that does not come
    owner_side.wait_state(lambda s: s["presence"][remote.session]["data"] == {"focus": "signup"})
    remote.expect_silence(lambda m: m["type"] == "error", timeout=CLUSTER_LEASE_MS / 1000 + 1.5)


def test_a_second_join_with_other_roles_is_refused(hosted, connect):
    """A member acts with the roles it joined with: a re-join whose token has others would show one set and act
    under another."""
    c = connect(hosted)
    c.join(room="ws1", token=mint("--role", "host", "--room", "ws1"))
    refused = c.join(room="ws1", token=mint("--room", "ws1"), id="again")
    assert refused["type"] == "error" and refused["code"] == "conflict" and refused["id"] == "again"
    assert c.intent("agenda", "next", room="ws1")["type"] == "ack", "still the host it joined as"
    assert c.join(room="ws1", token=mint("--role", "host", "--room", "ws1"))["type"] == "snapshot", "same roles: a resync"


def test_a_viewer_cannot_claim_but_may_unclaim_nothing(hosted, connect):
    viewer = connect(hosted)
    viewer.join(room="ws1", token=mint("--role", "viewer", "--room", "ws1"))
    refused = claim(viewer, "agenda", room="ws1")
    assert refused["code"] == "forbidden" and "viewers cannot claim" in refused["message"]
    assert claim(viewer, "agenda", kind="unclaim", id="u", room="ws1")["code"] == "not_holder"
