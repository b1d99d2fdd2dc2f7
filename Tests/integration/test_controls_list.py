"""The `list` control (ArrayStepper) of the demo room, driven through the real server."""
import json
import subprocess

from livecontrols_server import BINARY, REPO


def person(client):
    return client.state()["controls"]["person"]


def labels(ctl):
    return [(item["id"], item["label"]) for section in ctl["sections"] for item in section["items"]]


def assert_fresh_snapshot_matches(clients, client):
    fresh = clients()
    snap = fresh.join()
    client.wait_version(snap["version"])
    assert client.state() == snap["state"]


def run_with_config(tmp_path, config):
    path = tmp_path / "controls.json"
    path.write_text(json.dumps(config))
    return subprocess.run([BINARY, "--port", "0", "--config", str(path)], cwd=REPO, capture_output=True, text=True, timeout=20)


def test_demo_person_is_the_seeds_sections_example(clients):
    c = clients()
    ctl = c.join()["state"]["controls"]["person"]
    assert ctl["kind"] == "list" and ctl["label"] == "Person"
    assert [(s["id"], s["header"]) for s in ctl["sections"]] == [("siblings", "Siblings"), ("parents", "Parents")]
    assert labels(ctl) == [("i1", "Joe: 23"), ("i2", "Tim: 20"), ("i3", "Joe: —"), ("i4", "James: —")]
    assert ctl["selected"] == "i1" and ctl["selectedLabel"] == "Joe: 23"
    assert ctl["value"] == {"name": "Joe", "age": 23}
    assert (ctl["index"], ctl["count"], ctl["canPrev"], ctl["canNext"], ctl["holding"]) == (0, 4, False, True, None)


def test_next_and_prev_walk_across_sections_for_everyone(clients):
    a, b = clients(), clients()
    a.join()
    b.join()
    for expected in ["i2", "i3", "i4"]:
        assert a.intent("person", "next")["type"] == "ack"
        assert person(a)["selected"] == expected
    assert person(a)["canNext"] is False
    refused = a.intent("person", "next")
    assert refused["type"] == "error" and refused["code"] == "at_bound"
    assert b.intent("person", "prev")["type"] == "ack"
    b.wait_version(a.version())
    a.wait_version(b.version())
    assert person(a) == person(b)
    assert person(b)["selectedLabel"] == "Joe: —", "the other Joe: equal names stay distinct"
    assert_fresh_snapshot_matches(clients, a)


def test_select_append_remove(clients):
    a, b = clients(), clients()
    a.join()
    b.join()
    assert a.intent("person", "select", {"id": "i2"})["type"] == "ack"
    assert b.intent("person", "select", {"id": "i9"})["code"] == "not_found"
    assert b.intent("person", "select", {"id": 2}, validate=False)["code"] == "invalid_args"
    ack = b.intent("person", "append", {"value": {"name": "Ann", "age": 31}, "section": "siblings"})
    assert ack["type"] == "ack"
    a.wait_version(ack["version"])
    assert labels(person(a))[:3] == [("i1", "Joe: 23"), ("i2", "Tim: 20"), ("i5", "Ann: 31")]
    assert a.intent("person", "append", {"value": "Zed"})["type"] == "ack"
    assert labels(person(a))[-1] == ("i6", "Zed"), "no section: the last one; a non-object value shows as itself"
    assert a.intent("person", "append", {"value": 1, "section": "cousins"})["code"] == "not_found"
    # The demo's selectionPolicy is "fail": the selected item cannot be removed (select another first); others can.
    refused = a.intent("person", "remove", {"id": "i2"})
    assert refused["code"] == "conflict" and "select another item first" in refused["message"]
    assert a.intent("person", "remove", {"id": "i6"})["type"] == "ack"
    assert person(a)["selected"] == "i2" and person(a)["selectionPolicy"] == "fail"
    assert a.intent("person", "remove", {"id": "i6"})["code"] == "not_found"
    # insert at a position, move, edit: ids stay, so the selection stays on its item.
    assert a.intent("person", "insert", {"value": {"name": "Bo", "age": 5}, "index": 1})["type"] == "ack"
    assert [i for i, _ in labels(person(a))][:3] == ["i1", "i7", "i2"]
    assert a.intent("person", "move", {"id": "i1", "index": 2})["type"] == "ack"
    assert [i for i, _ in labels(person(a))][:3] == ["i7", "i2", "i1"]
    assert a.intent("person", "edit", {"id": "i2", "value": {"name": "Tim", "age": 21}})["type"] == "ack"
    assert person(a)["selected"] == "i2" and person(a)["selectedLabel"] == "Tim: 21"
    assert a.intent("person", "insert", {"value": 1, "index": 99})["code"] == "out_of_range"
    assert a.intent("person", "shuffle", validate=False)["code"] == "unknown_intent"
    b.wait_version(a.version())
    assert person(b) == person(a)
    assert_fresh_snapshot_matches(clients, b)


def test_hold_steps_every_250ms_and_ends_at_the_last_item(clients):
    a, b = clients(), clients()
    a.join()
    b.join()
    press = a.intent("person", "press", {"direction": "next"})
    assert press["type"] == "ack"
    assert person(a)["selected"] == "i2"
    assert person(a)["holding"] == {"session": a.session, "direction": "next"}
    b.wait_version(press["version"])
    state = b.wait_state(lambda s: s["controls"]["person"]["holding"] is None)
    assert state["controls"]["person"]["selected"] == "i4"
    ticks = [p for p in b.patches["demo"] if p["cause"]["kind"] == "tick"]
    assert [t["cause"]["tick"] for t in ticks] == [1, 2]
    assert ticks[-1]["cause"]["ended"] == [{"control": "person", "session": a.session, "reason": "bound"}]
    assert state["presence"][a.session]["holding"] == []
    # A hold the other way, released by its holder only.
    b.intent("person", "press", {"direction": "prev"})
    assert a.intent("person", "release")["code"] == "not_holder"
    assert b.intent("person", "release")["type"] == "ack"
    assert b.patches["demo"][-1]["cause"]["ended"] == [{"control": "person", "session": b.session, "reason": "release"}]
    assert_fresh_snapshot_matches(clients, a)


def test_missing_selection_with_policy_fail_is_a_config_error(tmp_path):
    bad = {"templates": {"t": {"controls": {"who": {"kind": "list", "values": ["Tim", "Joe"], "selected": "Ann"}}}}}
    result = run_with_config(tmp_path, bad)
    assert result.returncode != 0
    assert "controls.json" in result.stderr
    assert "/templates/t/controls/who/selected" in result.stderr
    assert '"Ann" is not among the values' in result.stderr


def test_selection_policy_append_adds_the_value(tmp_path, start_server):
    config = {"templates": {"t": {"controls": {"who": {
        "kind": "list", "values": ["Tim", "Joe"], "selected": "Ann", "selectionPolicy": "append", "wrap": True}}}}}
    path = tmp_path / "append.json"
    path.write_text(json.dumps(config))
    c = start_server("--config", str(path)).client()
    ctl = c.join("room1")["state"]["controls"]["who"]
    assert labels(ctl) == [("i1", "Tim"), ("i2", "Joe"), ("i3", "Ann")]
    assert ctl["selected"] == "i3" and ctl["canNext"] is True
    c.intent("who", "next", room="room1")
    assert c.state("room1")["controls"]["who"]["selected"] == "i1", "wrap"
    c.close()


def test_an_append_is_patched_as_one_add_of_the_new_item_and_a_remove_as_one_remove(clients):
    """A change costs what it changes: the list is not sent again (issue #18)."""
    c = clients()
    c.join()
    ack = c.intent("person", "append", {"value": {"name": "Kim", "age": 31}})
    patch = next(p for p in c.patches["demo"] if p["version"] == ack["version"])
    items_ops = [op for op in patch["ops"] if op["path"].startswith("/controls/person/sections/")]
    assert items_ops and all(op["op"] == "add" for op in items_ops), patch["ops"]
    assert len(items_ops) == 1 and items_ops[0]["path"] == "/controls/person/sections/1/items/2"
    assert items_ops[0]["value"]["value"] == {"name": "Kim", "age": 31}
    added = items_ops[0]["value"]["id"]
    ack = c.intent("person", "remove", {"id": added})
    patch = next(p for p in c.patches["demo"] if p["version"] == ack["version"])
    assert [op for op in patch["ops"] if op["path"].startswith("/controls/person/sections/")] == \
        [{"op": "remove", "path": "/controls/person/sections/1/items/2"}]
    assert_fresh_snapshot_matches(clients, c)
