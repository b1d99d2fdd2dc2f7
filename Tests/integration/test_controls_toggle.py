"""The `toggle` control (the demo's `onAir`, and toggles from a config) through the real server: set and flip, the
confirming hold timed by the server, persistence across a restart."""
import json
import time

from livecontrols_server import Server


def toggle(client, control="onAir", room="demo"):
    return client.state(room)["controls"][control]


def test_on_air_switches_only_after_a_held_press_seen_by_everyone(clients):
    a, b = clients(), clients()
    a.join()
    b.join()
    assert toggle(a)["kind"] == "toggle" and toggle(a)["confirmHoldMs"] == 800 and toggle(a)["on"] is False
    assert a.intent("onAir", "flip")["code"] == "hold_required"
    assert a.intent("onAir", "set", {"on": True})["code"] == "hold_required"
    before = time.time() * 1000
    assert a.intent("onAir", "press")["type"] == "ack"
    held = b.wait_state(lambda s: s["controls"]["onAir"]["holding"] is not None)["controls"]["onAir"]["holding"]
    assert held["session"] == a.session and held["to"] is True
    assert before + 800 - 50 <= held["until"] <= time.time() * 1000 + 800 + 50, "until is server time, 800 ms on"
    assert b.state()["presence"][a.session]["holding"] == ["onAir"]
    switched = b.recv(lambda m: m.get("type") == "patch" and m["cause"].get("kind") == "timer", timeout=5)
    assert switched["cause"]["ended"] == [{"control": "onAir", "session": a.session, "reason": "confirmed"}]
    assert toggle(b)["on"] is True and toggle(b)["holding"] is None
    assert time.time() * 1000 >= held["until"] - 50, "not before until"


def test_an_early_release_changes_nothing(clients):
    a = clients()
    a.join()
    a.intent("onAir", "press")
    assert a.intent("onAir", "release")["type"] == "ack"
    ended = a.recv(lambda m: m.get("type") == "patch" and m["cause"].get("ended"))
    assert ended["cause"]["ended"][0]["reason"] == "release"
    a.expect_silence(lambda m: m.get("type") == "patch", timeout=1.2)
    assert toggle(a)["on"] is False
    assert a.intent("onAir", "release")["code"] == "not_holder"


def test_a_plain_toggle_flips_and_survives_a_restart(tmp_path):
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"templates": {"t": {"controls": {"mute": {"kind": "toggle", "label": "Mute"}}}},
                                  "defaultTemplate": "t", "rooms": {"r": {"template": "t"}}}))
    data = tmp_path / "data"
    server = Server("--config", str(config), "--data-dir", str(data)).start()
    try:
        from livecontrols_client import Client
        c = Client(server.ws_url)
        c.join("r")
        assert c.intent("mute", "flip", room="r")["type"] == "ack"
        assert c.intent("mute", "set", {"on": "yes"}, room="r", validate=False)["code"] == "invalid_args"
        assert toggle(c, "mute", "r")["on"] is True
        c.close()
    finally:
        server.stop()
    server = Server("--config", str(config), "--data-dir", str(data)).start()
    try:
        from livecontrols_client import Client
        c = Client(server.ws_url)
        snap = c.join("r")
        assert snap["state"]["controls"]["mute"]["on"] is True
        c.close()
    finally:
        server.stop()
