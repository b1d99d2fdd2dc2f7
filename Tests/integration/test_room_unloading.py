"""Idle rooms are unloaded (`--room-idle-seconds`): memory and `--max-rooms` count loaded rooms only; a join
brings an unloaded room back from `--data-dir` as it was, or starts it anew without one."""
import subprocess

from livecontrols_server import BINARY


def metric(server, name: str) -> float:
    for line in server.get("/metrics").read().decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} not in /metrics")


def wait_unloaded(server, count: int) -> None:
    """Until the server has logged `count` unloads (the protocol announces none)."""
    server.wait_for_log("room unloaded", count)


def test_an_empty_room_is_unloaded_and_a_join_starts_it_anew_without_a_store(start_server):
    s = start_server("--room-idle-seconds", "1")
    c = s.client()
    snap = c.join("u1")
    assert c.intent("quantity", "set", {"value": 7}, room="u1")["type"] == "ack"
    epoch, version = snap["epoch"], c.version("u1")
    assert metric(s, "livecontrols_rooms") == 2  # demo (the config's) and u1
    c.leave("u1")
    wait_unloaded(s, 1)
    assert metric(s, "livecontrols_rooms") == 1
    again = c.join("u1", since={"epoch": epoch, "version": version})
    assert again["type"] == "snapshot" and again["resumed"] is False
    assert again["epoch"] != epoch, "nothing kept it: a new lifetime"
    assert again["state"]["controls"]["quantity"]["value"] == 1


def test_an_unloaded_room_comes_back_from_the_store_as_it_was(start_server, tmp_path):
    s = start_server("--data-dir", str(tmp_path), "--room-idle-seconds", "1")
    a = s.client()
    a.join("u1", name="Ann")
    assert a.intent("quantity", "set", {"value": 42}, room="u1")["type"] == "ack"
    epoch, version = a.rooms["u1"]["epoch"], a.version("u1")
    a.close()
    wait_unloaded(s, 1)
    b = s.client()
    b.rooms["u1"], b.patches["u1"] = dict(a.rooms["u1"]), []  # what a client that saw version `version` holds
    resumed = b.join("u1", since={"epoch": epoch, "version": version})
    assert resumed["type"] == "resumed", "same epoch and history: the client resumes"
    assert b.state("u1")["controls"]["quantity"]["value"] == 42
    assert metric(s, "livecontrols_rooms_loaded_total") == 1
    fresh = s.client().join("u1")
    assert fresh["epoch"] == epoch
    assert fresh["state"]["controls"]["quantity"]["value"] == 42
    assert "Ann" not in str(fresh["state"]["presence"]), "Ann left before the room was unloaded"


def test_the_room_limit_counts_loaded_rooms(start_server):
    s = start_server("--max-rooms", "2", "--room-idle-seconds", "1")
    a, b = s.client(), s.client()
    a.join("u1")
    refused = b.join("u2")
    assert refused["type"] == "error" and refused["code"] == "room_limit"
    a.leave("u1")
    wait_unloaded(s, 1)
    assert b.join("u2")["type"] == "snapshot"


def test_rooms_in_use_and_the_config_rooms_stay(start_server):
    s = start_server("--room-idle-seconds", "1")
    stay = s.client()
    stay.join("busy")
    visitor = s.client()
    demo_epoch = visitor.join("demo")["epoch"]
    visitor.leave("demo")
    visitor.join("gone")  # left last: once it is unloaded, demo has been empty at least as long
    visitor.leave("gone")
    wait_unloaded(s, 1)
    assert stay.intent("quantity", "set", {"value": 5}, room="busy")["type"] == "ack"
    assert visitor.join("demo")["epoch"] == demo_epoch
    assert metric(s, "livecontrols_rooms_unloaded_total") == 1
    assert metric(s, "livecontrols_rooms") == 2


def test_room_idle_seconds_is_validated():
    r = subprocess.run([str(BINARY), "--room-idle-seconds", "-1"], capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "--room-idle-seconds" in r.stderr


def test_after_a_restart_stored_rooms_load_on_their_first_join(start_server, tmp_path):
    s = start_server("--data-dir", str(tmp_path))
    c = s.client()
    for room in ("u1", "u2"):
        c.join(room)
        assert c.intent("quantity", "set", {"value": 9}, room=room)["type"] == "ack"
    c.close()
    assert s.stop() == 0
    s2 = start_server("--data-dir", str(tmp_path))
    assert metric(s2, "livecontrols_rooms") == 1, "only the config's room is loaded at start"
    snap = s2.client().join("u2")
    assert snap["state"]["controls"]["quantity"]["value"] == 9
    assert metric(s2, "livecontrols_rooms") == 2
    assert metric(s2, "livecontrols_rooms_loaded_total") == 2, "demo at start, u2 by the join"
