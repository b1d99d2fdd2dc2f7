"""The `pager` control (InfiniteScrollViews) of the demo room, driven through the real server."""
import datetime
import json
import subprocess

from livecontrols_server import BINARY, REPO


def month(client, room="demo"):
    return client.state(room)["controls"]["month"]


def shift(ym: str, n: int) -> str:
    y, m = map(int, ym.split("-"))
    total = y * 12 + (m - 1) + n
    return f"{total // 12:04d}-{total % 12 + 1:02d}"


def assert_fresh_snapshot_matches(clients, client):
    fresh = clients()
    snap = fresh.join()
    client.wait_version(snap["version"])
    assert client.state() == snap["state"]


def write_config(tmp_path, name, controls):
    path = tmp_path / name
    path.write_text(json.dumps({"templates": {"t": {"controls": controls}}}))
    return path


def test_demo_month_starts_at_the_current_utc_month_with_a_window(server, clients):
    before = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m")
    c = clients()
    ctl = c.join()["state"]["controls"]["month"]
    after = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m")
    assert ctl["kind"] == "pager" and ctl["label"] == "Month" and ctl["domain"] == "month"
    assert ctl["position"] in (before, after)
    p = ctl["position"]
    assert ctl["window"] == [shift(p, -2), shift(p, -1), p, shift(p, 1), shift(p, 2)]
    assert (ctl["min"], ctl["max"], ctl["step"], ctl["radius"]) == (None, None, 1, 2)
    assert (ctl["canNext"], ctl["canPrev"], ctl["holding"]) == (True, True, None)


def test_next_prev_goto_cross_year_boundaries(clients):
    a, b = clients(), clients()
    a.join()
    b.join()
    assert a.intent("month", "goto", {"position": "2023-12"})["type"] == "ack"
    assert a.intent("month", "next")["type"] == "ack"
    assert month(a)["position"] == "2024-01"
    assert month(a)["window"] == ["2023-11", "2023-12", "2024-01", "2024-02", "2024-03"]
    assert b.intent("month", "prev")["type"] == "ack"
    b.intent("month", "prev")
    a.wait_version(b.version())
    assert month(a)["position"] == "2023-11"
    for position, code in [("2024-13", "invalid_args"), ("2024-1", "invalid_args"), (202401, "invalid_args"),
                           ("2024-01-15", "invalid_args"), ("0000-12", "invalid_args")]:
        assert a.intent("month", "goto", {"position": position}, validate=False)["code"] == code, position
    assert a.intent("month", "goto", validate=False)["code"] == "invalid_args"
    assert a.intent("month", "goto", {"position": "0001-01"})["type"] == "ack"
    assert month(a)["canPrev"] is False and month(a)["window"] == ["0001-01", "0001-02", "0001-03"]
    assert a.intent("month", "prev")["code"] == "at_bound"
    assert_fresh_snapshot_matches(clients, b)


def test_hold_pages_for_everyone_until_release(clients):
    a, b = clients(), clients()
    a.join()
    b.join()
    a.intent("month", "goto", {"position": "2024-06"})
    press = a.intent("month", "press", {"direction": "next"})
    assert press["type"] == "ack" and month(a)["position"] == "2024-07"
    b.wait_version(press["version"])
    assert month(b)["holding"] == {"session": a.session, "direction": "next"}
    b.wait_state(lambda s: s["controls"]["month"]["position"] >= "2024-09")
    release = a.intent("month", "release")
    assert release["type"] == "ack"
    b.wait_version(release["version"])
    ticks = [p["cause"]["tick"] for p in b.patches["demo"] if p["cause"]["kind"] == "tick"]
    assert ticks == list(range(1, len(ticks) + 1)) and len(ticks) >= 2
    assert month(b)["position"] == shift("2024-07", len(ticks))
    assert month(b)["holding"] is None
    b.expect_silence(lambda m: m["type"] == "patch", timeout=0.6)
    assert_fresh_snapshot_matches(clients, a)


def test_bounded_day_pager_crosses_the_leap_day_and_stops_at_max(tmp_path, start_server):
    path = write_config(tmp_path, "days.json", {"day": {
        "kind": "pager", "domain": "day", "start": "2024-02-27", "min": "2024-02-27", "max": "2024-03-01",
        "radius": 1, "hold": {"delayMs": 100, "intervalMs": 100}}})
    c = start_server("--config", str(path)).client()
    ctl = c.join("r")["state"]["controls"]["day"]
    assert ctl["window"] == ["2024-02-27", "2024-02-28"] and ctl["canPrev"] is False
    assert c.intent("day", "goto", {"position": "2024-03-02"}, room="r")["code"] == "out_of_range"
    assert c.intent("day", "goto", {"position": "2023-02-29"}, room="r")["code"] == "invalid_args"
    c.intent("day", "press", {"direction": "next"}, room="r")
    state = c.wait_state(lambda s: s["controls"]["day"]["holding"] is None, room="r")
    assert state["controls"]["day"]["position"] == "2024-03-01"
    positions = ["2024-02-28"] + [p["ops"] for p in c.patches["r"] if p["cause"]["kind"] == "tick"]
    assert len(positions) == 3, "28 → 29 → 1 March: a press and two ticks"
    assert c.patches["r"][-1]["cause"]["ended"] == [{"control": "day", "session": c.session, "reason": "bound"}]
    assert c.intent("day", "next", room="r")["code"] == "at_bound"
    c.close()


def test_pager_config_error_names_the_bad_start(tmp_path):
    path = write_config(tmp_path, "pager.json", {"m": {"kind": "pager", "domain": "month", "start": "2024-2"}})
    result = subprocess.run([BINARY, "--port", "0", "--config", str(path)], cwd=REPO, capture_output=True, text=True, timeout=20)
    assert result.returncode != 0
    assert "pager.json" in result.stderr and "/templates/t/controls/m/start" in result.stderr
    assert '"2024-2" is not YYYY-MM' in result.stderr


def test_refresh_moves_the_generation_every_client_reloads_on(clients):
    a, b = clients(), clients()
    a.join()
    b.join()
    assert a.state()["controls"]["month"]["generation"] == 0
    ack = b.intent("month", "refresh")
    a.wait_version(ack["version"])
    patch = a.patches["demo"][-1]
    assert patch["ops"] == [{"op": "replace", "path": "/controls/month/generation", "value": 1}]
    assert patch["cause"]["intent"] == "refresh"
