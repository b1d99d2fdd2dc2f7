"""`next`/`prev {count}` on the demo room's stepper, list and pager, through the real server: one patch per move, as
far as the bound allows, the count checked."""


def test_a_counted_move_is_one_patch_and_stops_at_a_bound(clients):
    a, b = clients(), clients()
    a.join()
    b.join()
    a.intent("quantity", "set", {"value": 10})
    before = a.version()
    assert a.intent("quantity", "next", {"count": 25})["type"] == "ack"
    assert a.version() == before + 1
    b.wait_version(a.version())
    assert b.state()["controls"]["quantity"]["value"] == 35
    assert a.intent("quantity", "next", {"count": 1000})["type"] == "ack"
    assert a.state()["controls"]["quantity"]["value"] == a.state()["controls"]["quantity"]["max"]
    assert a.intent("quantity", "next", {"count": 2})["code"] == "at_bound"
    for bad in (0, -1, 1.5, "3", 9007199254740992):
        assert a.intent("quantity", "prev", {"count": bad}, validate=False)["code"] == "invalid_args", bad
    assert a.intent("quantity", "prev", {"count": None})["type"] == "ack", "null is one step"


def test_lists_and_pagers_take_counts_too(clients):
    a = clients()
    state = a.join()["state"]["controls"]
    person = state["person"]
    assert a.intent("person", "next", {"count": 2})["type"] == "ack"
    after = a.state()["controls"]["person"]
    expected = (person["index"] + 2) % person["count"] if person["wrap"] else min(person["index"] + 2, person["count"] - 1)
    assert after["index"] == expected
    a.intent("month", "goto", {"position": "2024-01"})
    assert a.intent("month", "next", {"count": 14})["type"] == "ack"
    assert a.state()["controls"]["month"]["position"] == "2025-03"
    assert a.intent("month", "prev", {"count": 3})["type"] == "ack"
    assert a.state()["controls"]["month"]["position"] == "2024-12"
