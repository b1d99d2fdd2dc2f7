"""The `form` control (StackedForm) of the demo room, filled in by several people through the real server."""
import json
import subprocess

from livecontrols_server import BINARY, REPO


def signup(client):
    return client.state()["controls"]["signup"]


def field(client, element, name):
    el = next(e for e in signup(client)["elements"] if e["id"] == element)
    return next(f for f in el["fields"] if f["id"] == name)


def set_field(client, element, name, value):
    return client.intent("signup", "set", {"element": element, "field": name, "value": value})


def assert_fresh_snapshot_matches(clients, client):
    fresh = clients()
    snap = fresh.join()
    client.wait_version(snap["version"])
    assert client.state() == snap["state"]


def test_demo_signup_has_one_expanded_element(clients):
    c = clients()
    ctl = c.join()["state"]["controls"]["signup"]
    assert ctl["kind"] == "form" and ctl["label"] == "Sign up"
    assert (ctl["current"], ctl["completed"], ctl["cta"], ctl["canFinish"], ctl["data"]) == ("account", False, "Continue", False, None)
    assert [(e["id"], e["status"]) for e in ctl["elements"]] == [("account", "expanded"), ("profile", "collapsed"), ("terms", "collapsed")]
    assert [f["type"] for e in ctl["elements"] for f in e["fields"]] == ["text", "text", "number", "choice", "boolean"]
    assert ctl["elements"][0]["fields"][0]["error"] == "required"


def test_set_keeps_rule_breaking_text_and_updates_validity_in_the_same_patch(clients):
    c = clients()
    c.join()
    assert set_field(c, "account", "email", "not-an-email")["type"] == "ack"
    assert field(c, "account", "email")["value"] == "not-an-email"
    assert field(c, "account", "email")["error"] == "does not match the expected format"
    set_field(c, "account", "email", "ann@example.org")
    ack = set_field(c, "account", "name", "Ann")
    patch = c.patches["demo"][-1]
    assert patch["version"] == ack["version"]
    paths = {op["path"] for op in patch["ops"]}
    assert {"/controls/signup/elements/0/fields/1/value", "/controls/signup/elements/0/fields/1/error",
            "/controls/signup/elements/0/valid", "/controls/signup/canFinish"} <= paths
    assert signup(c)["canFinish"] is True
    # Wrong JSON types are refused outright; nothing changes.
    version = c.version()
    for args, code in [({"element": "account", "field": "email", "value": 5}, "invalid_args"),
                       ({"element": "account", "field": "nick", "value": "x"}, "not_found"),
                       ({"element": "nope", "field": "email", "value": "x"}, "not_found"),
                       ({"element": "profile", "field": "age", "value": 30}, "conflict")]:
        assert c.intent("signup", "set", args)["code"] == code, args
    assert c.version() == version


def test_concurrent_sets_on_different_fields_both_land(clients):
    a, b = clients(), clients()
    a.join()
    b.join()
    a.wait_version(b.version())
    a.send({"type": "intent", "id": "a1", "room": "demo", "control": "signup", "intent": "set",
            "args": {"element": "account", "field": "email", "value": "ann@example.org"}})
    b.send({"type": "intent", "id": "b1", "room": "demo", "control": "signup", "intent": "set",
            "args": {"element": "account", "field": "name", "value": "Bob"}})
    ack_a = a.recv(lambda m: m.get("id") == "a1")
    ack_b = b.recv(lambda m: m.get("id") == "b1")
    assert ack_a["type"] == ack_b["type"] == "ack"
    last = max(ack_a["version"], ack_b["version"])
    a.wait_version(last)
    b.wait_version(last)
    for c in (a, b):
        assert field(c, "account", "email")["value"] == "ann@example.org"
        assert field(c, "account", "name")["value"] == "Bob"
        assert signup(c)["elements"][0]["valid"] is True
    assert a.state() == b.state()
    assert_fresh_snapshot_matches(clients, a)


def test_finish_walks_the_form_to_completion_with_its_data(clients):
    a, b = clients(), clients()
    a.join()
    b.join()
    refused = a.intent("signup", "finish")
    assert refused["code"] == "not_valid" and "email: required" in refused["message"]
    set_field(a, "account", "email", "ann@example.org")
    set_field(b, "account", "name", "Ann")
    assert a.intent("signup", "finish", {"element": "account"})["type"] == "ack"
    # Bob pressed the same button a moment later: his finish names an element that is gone.
    assert b.intent("signup", "finish", {"element": "account"})["code"] == "conflict"
    a.wait_version(b.version())
    assert signup(a)["current"] == "profile"
    assert signup(a)["elements"][0]["status"] == "collapsed"
    assert signup(a)["elements"][0]["summary"] == "Ann <ann@example.org>"
    set_field(b, "profile", "age", 12)
    assert field(b, "profile", "age")["error"] == "must be ≥ 13"
    assert b.intent("signup", "finish")["code"] == "not_valid"
    set_field(b, "profile", "age", 34)
    set_field(b, "profile", "plan", "pro")
    assert set_field(b, "profile", "plan", "gold")["code"] == "invalid_args"
    # Go back, change, and come forward again.
    assert b.intent("signup", "expand", {"element": "terms"})["code"] == "out_of_range"
    assert b.intent("signup", "expand", {"element": "account"})["type"] == "ack"
    set_field(b, "account", "name", "Annie")
    b.intent("signup", "finish")
    assert signup(b)["current"] == "profile" and field(b, "profile", "age")["value"] == 34
    b.intent("signup", "finish")
    assert signup(b)["cta"] == "Create account"
    assert b.intent("signup", "finish")["code"] == "not_valid"
    set_field(a, "terms", "accept", True)
    assert a.intent("signup", "finish")["type"] == "ack"
    ctl = signup(a)
    assert ctl["completed"] is True and ctl["current"] is None and ctl["cta"] is None
    assert ctl["data"] == {
        "account": {"email": "ann@example.org", "name": "Annie"},
        "profile": {"age": 34, "plan": "pro"},
        "terms": {"accept": True},
    }
    assert set_field(b, "terms", "accept", False)["code"] == "finished"
    assert b.intent("signup", "expand", {"element": "account"})["code"] == "finished"
    assert_fresh_snapshot_matches(clients, b)
    assert b.intent("signup", "reset")["type"] == "ack"
    assert signup(b)["current"] == "account" and field(b, "account", "email")["value"] is None


def test_form_config_error_names_the_bad_rule(tmp_path):
    bad = {"templates": {"t": {"controls": {"f": {"kind": "form", "elements": [
        {"id": "e", "fields": [{"id": "code", "type": "text", "pattern": "(["}]}]}}}}}
    path = tmp_path / "form.json"
    path.write_text(json.dumps(bad))
    result = subprocess.run([BINARY, "--port", "0", "--config", str(path)], cwd=REPO, capture_output=True, text=True, timeout=20)
    assert result.returncode != 0
    assert "form.json" in result.stderr
    assert "/templates/t/controls/f/elements/0/fields/0/pattern" in result.stderr
    assert "not a valid regular expression" in result.stderr
