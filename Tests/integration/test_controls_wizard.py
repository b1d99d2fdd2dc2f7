"""The `wizard` control (StepView) of the demo room, guarded by the `signup` form, through the real server."""
import json
import subprocess

from livecontrols_server import BINARY, REPO


def wizard(client):
    return client.state()["controls"]["onboarding"]


def assert_fresh_snapshot_matches(clients, client):
    fresh = clients()
    snap = fresh.join()
    client.wait_version(snap["version"])
    assert client.state() == snap["state"]


def test_demo_onboarding_starts_at_the_first_step(clients):
    c = clients()
    ctl = c.join()["state"]["controls"]["onboarding"]
    assert ctl["kind"] == "wizard" and ctl["label"] == "Onboarding"
    assert (ctl["phase"], ctl["index"], ctl["step"], ctl["count"], ctl["cycle"]) == ("start", 0, "welcome", 4, False)
    assert [s["id"] for s in ctl["steps"]] == ["welcome", "account", "profile", "done"]
    assert ctl["steps"][1]["guard"] == {"form": "signup", "element": "account"}
    assert ctl["steps"][0]["guard"] is None


def test_guarded_steps_wait_for_the_form_then_complete(clients):
    guide, filler = clients(), clients()
    guide.join(name="guide")
    filler.join(name="filler")
    assert guide.intent("onboarding", "next")["type"] == "ack"
    assert wizard(guide)["phase"] == "inProgress" and wizard(guide)["step"] == "account"
    refused = guide.intent("onboarding", "next")
    assert refused["type"] == "error" and refused["code"] == "guard_failed"
    assert "signup.account" in refused["message"]
    # Someone else fills the account element of the form; the guard reads it live.
    filler.intent("signup", "set", {"element": "account", "field": "email", "value": "ann@example.org"})
    filler.intent("signup", "set", {"element": "account", "field": "name", "value": "Ann"})
    assert guide.intent("onboarding", "next")["type"] == "ack"
    assert wizard(guide)["step"] == "profile"
    assert guide.intent("onboarding", "next")["type"] == "ack", "the profile element is valid as configured"
    assert guide.intent("onboarding", "next")["type"] == "ack"
    assert wizard(guide)["phase"] == "complete" and wizard(guide)["step"] == "done"
    # After complete, next/prev are refused until reset.
    assert guide.intent("onboarding", "next")["code"] == "finished"
    assert filler.intent("onboarding", "prev")["code"] == "finished"
    assert filler.intent("onboarding", "reset")["type"] == "ack"
    filler.wait_version(guide.version())
    guide.wait_version(filler.version())
    assert wizard(guide) == wizard(filler)
    assert (wizard(guide)["phase"], wizard(guide)["index"]) == ("start", 0)
    assert_fresh_snapshot_matches(clients, guide)


def test_prev_on_the_first_step_exits(clients):
    c = clients()
    c.join()
    ack = c.intent("onboarding", "prev")
    assert ack["type"] == "ack"
    patch = c.patches["demo"][-1]
    assert patch["ops"] == [{"op": "replace", "path": "/controls/onboarding/phase", "value": "exit"},
                            {"op": "replace", "path": "/controls/onboarding/canNext", "value": False},
                            {"op": "replace", "path": "/controls/onboarding/canPrev", "value": False},
                            {"op": "replace", "path": "/controls/onboarding/blocked",
                             "value": {"code": "finished", "message": "the wizard is in phase exit; next needs a reset first"}}]
    assert c.intent("onboarding", "next")["code"] == "finished"
    assert c.intent("onboarding", "reset")["type"] == "ack"
    assert wizard(c)["phase"] == "start"


def test_append_adds_a_step_at_the_end_for_everyone(clients):
    a, b = clients(), clients()
    a.join()
    b.join()
    ack = a.intent("onboarding", "append", {"step": {"id": "tour", "title": "Take the tour"}})
    assert ack["type"] == "ack"
    b.wait_version(ack["version"])
    assert wizard(b)["steps"][-1] == {"id": "tour", "title": "Take the tour", "guard": None}
    assert wizard(b)["count"] == 5
    assert b.intent("onboarding", "append", {"step": {"id": "tour"}})["code"] == "invalid_args"
    assert b.intent("onboarding", "append", {"step": "tour"}, validate=False)["code"] == "invalid_args"
    assert b.intent("onboarding", "jump", validate=False)["code"] == "unknown_intent"
    assert_fresh_snapshot_matches(clients, a)


def test_wizard_config_error_names_the_initial_index(tmp_path):
    bad = {"templates": {"t": {"controls": {"w": {"kind": "wizard", "steps": [{"id": "a"}, {"id": "b"}], "index": 2}}}}}
    path = tmp_path / "wizard.json"
    path.write_text(json.dumps(bad))
    result = subprocess.run([BINARY, "--port", "0", "--config", str(path)], cwd=REPO, capture_output=True, text=True, timeout=20)
    assert result.returncode != 0
    assert "wizard.json" in result.stderr and "/templates/t/controls/w/index" in result.stderr
    assert "2 is outside 0…1" in result.stderr


def test_cycle_wraps_to_the_first_step(tmp_path, start_server):
    config = {"templates": {"t": {"controls": {"w": {"kind": "wizard", "cycle": True, "index": 1,
                                                      "steps": [{"id": "a"}, {"id": "b"}]}}}}}
    path = tmp_path / "cycle.json"
    path.write_text(json.dumps(config))
    c = start_server("--config", str(path)).client()
    c.join("r")
    assert c.intent("w", "next", room="r")["type"] == "ack"
    assert (c.state("r")["controls"]["w"]["phase"], c.state("r")["controls"]["w"]["index"]) == ("inProgress", 0)
    c.close()


def test_can_next_follows_the_guarding_form_in_the_same_patch(clients):
    """Issue 15: the wizard says whether `next` would be accepted, and why not; a form change opening the guard
    patches the wizard too."""
    guide, filler = clients(), clients()
    guide.join()
    filler.join()
    assert wizard(guide)["canNext"] is True and wizard(guide)["blocked"] is None
    assert guide.intent("onboarding", "next")["type"] == "ack"
    ctl = guide.wait_state(lambda s: s["controls"]["onboarding"]["step"] == "account")["controls"]["onboarding"]
    assert ctl["canNext"] is False and ctl["canPrev"] is True
    assert ctl["blocked"] == {"code": "guard_failed", "message": "step account needs signup.account to be valid first",
                              "form": "signup", "element": "account"}
    filler.intent("signup", "set", {"element": "account", "field": "email", "value": "ann@example.org"})
    ack = filler.intent("signup", "set", {"element": "account", "field": "name", "value": "Ann"})
    guide.wait_version(ack["version"])
    patch = guide.patches["demo"][-1]
    assert {"op": "replace", "path": "/controls/onboarding/canNext", "value": True} in patch["ops"]
    assert wizard(guide)["blocked"] is None
    assert_fresh_snapshot_matches(clients, guide)
