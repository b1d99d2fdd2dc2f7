"""Persistence: rooms survive restarts, acked intents survive kill -9, holds end with reason `restart`."""
import json
import signal
import threading

from livecontrols_client import Client


def test_graceful_restart_keeps_epoch_version_and_state(start_server, tmp_path):
    s = start_server("--data-dir", str(tmp_path))
    c = s.client()
    c.join(name="Ann")
    c.intent("quantity", "set", {"value": 42})
    epoch, version = c.rooms["demo"]["epoch"], c.version()
    c.close()
    assert s.stop() == 0
    s2 = start_server("--data-dir", str(tmp_path))
    snap = s2.client().join()
    assert snap["epoch"] == epoch
    assert snap["version"] >= version
    assert snap["state"]["controls"]["quantity"]["value"] == 42


def test_acked_intents_survive_kill_9(start_server, tmp_path):
    s = start_server("--data-dir", str(tmp_path), "--rate", "100000", "--burst", "100000", "--room-queue", "100000")
    c = s.client()
    c.join()
    epoch = c.rooms["demo"]["epoch"]
    acked = {}
    stop = threading.Event()

    def killer():
        # Kill once a good number of intents have been acknowledged.
        while len(acked) < 300 and not stop.is_set():
            stop.wait(0.01)
        s.proc.send_signal(signal.SIGKILL)

    threading.Thread(target=killer, daemon=True).start()
    try:
        i = 0
        while True:
            value = i % 99
            reply = c.intent("quantity", "set", {"value": value}, id=i)
            if reply["type"] == "ack":
                acked[reply["version"]] = value
            i += 1
    except Exception:
        pass
    finally:
        stop.set()
    s.proc.wait(10)
    assert len(acked) >= 300
    last_version = max(acked)
    s2 = start_server("--data-dir", str(tmp_path))
    fresh = s2.client()
    snap = fresh.join()
    assert snap["epoch"] == epoch, "a recovered room keeps its epoch"
    assert snap["version"] >= last_version, "every acked version is there"
    # The state at the last acked version: replay from a client that resumes from it.
    resumer = Client(s2.ws_url)
    resumer.rooms["demo"] = {"epoch": epoch, "version": last_version, "state": {"controls": {"quantity": {"value": acked[last_version]}}}}
    resumer.patches["demo"] = []
    msg = resumer.join(since={"epoch": epoch, "version": last_version})
    assert msg["type"] == "resumed"
    resumer.close()


def test_a_hold_running_at_kill_9_ends_with_reason_restart(start_server, tmp_path):
    s = start_server("--data-dir", str(tmp_path))
    holder = s.client()
    snap = holder.join(name="holder")
    holder.intent("quantity", "set", {"value": 10})
    holder.intent("quantity", "press", {"direction": "next"})
    state = holder.wait_state(lambda st: st["controls"]["quantity"]["value"] >= 12)
    epoch, version = holder.rooms["demo"]["epoch"], holder.version()
    s.proc.send_signal(signal.SIGKILL)
    s.proc.wait(10)
    s2 = start_server("--data-dir", str(tmp_path))
    back = Client(s2.ws_url)
    back.rooms["demo"] = {"epoch": epoch, "version": version, "state": state}
    back.patches["demo"] = []
    msg = back.join(since={"epoch": epoch, "version": version})
    if msg["type"] == "resumed":
        st = back.wait_state(lambda st: holder.session not in st["presence"])
        ended = [e for p in back.patches["demo"] for e in p["cause"].get("ended", [])]
        assert {"control": "quantity", "session": holder.session, "reason": "restart"} in ended
    else:  # the last ticks before the kill may not all have been durable: a fresh snapshot is fine too
        st = msg["state"]
        assert msg["epoch"] == epoch
    assert st["controls"]["quantity"]["holding"] is None
    assert holder.session not in st["presence"]
    back.expect_silence(lambda m: m["type"] == "patch" and m["cause"]["kind"] == "tick", timeout=0.6)
    back.close()


def test_rooms_created_on_join_are_recovered_too(start_server, tmp_path):
    s = start_server("--data-dir", str(tmp_path))
    c = s.client()
    c.join("team-7")
    c.intent("quantity", "set", {"value": 7}, room="team-7")
    c.close()
    s.stop()
    s2 = start_server("--data-dir", str(tmp_path))
    fresh = s2.client()
    snap = fresh.join("team-7")
    assert snap["state"]["controls"]["quantity"]["value"] == 7
    assert list(snap["state"]["presence"]) == [fresh.session], "members from before the restart are gone"
    fresh.close()


def test_every_control_kind_is_restored_exactly(start_server, tmp_path):
    s = start_server("--data-dir", str(tmp_path))
    c = s.client()
    c.join()
    c.intent("quantity", "set", {"value": 5})
    c.intent("person", "next")
    c.intent("person", "append", {"value": {"name": "Kim", "age": 31}})
    c.intent("onboarding", "next")
    c.intent("signup", "set", {"element": "account", "field": "email", "value": "kim@example.com"})
    c.intent("month", "next")
    before = c.state()["controls"]
    c.close()
    s.stop()
    s2 = start_server("--data-dir", str(tmp_path))
    after = s2.client().join()["state"]["controls"]
    assert after == before


def test_a_second_server_on_the_same_data_dir_is_refused_before_it_touches_the_store(start_server, tmp_path):
    """Issue 17: a second server started by mistake on a running server's --data-dir loaded the store and wrote
    to it before failing on the port; the first then logged UNIQUE-constraint failures and acked changes it had
    not stored. The data directory is locked first: the second is refused and changes nothing."""
    import subprocess
    from livecontrols_server import BINARY

    first = start_server("--data-dir", str(tmp_path))
    c = first.client()
    c.join(name="Ann")
    c.intent("quantity", "set", {"value": 7})
    files = [tmp_path / "livecontrols.sqlite3", tmp_path / "livecontrols.sqlite3-wal"]  # WAL: writes land in -wal
    before = [f.read_bytes() if f.exists() else None for f in files]
    # Same directory, another (free) port: nothing but the lock can stop it.
    second = subprocess.run([BINARY, "--port", "0", "--data-dir", str(tmp_path)], capture_output=True, text=True, timeout=30)
    assert second.returncode == 1, "the documented exit status"
    assert "data directory" in second.stderr and "in use by process" in second.stderr, second.stderr
    assert str(first.proc.pid) in second.stderr, "names the server that holds it"
    assert "LiveControls listening" not in second.stdout
    assert [f.read_bytes() if f.exists() else None for f in files] == before, "the second server wrote nothing"

    # The first goes on serving and storing, with no store errors.
    for value in range(8, 20):
        c.intent("quantity", "set", {"value": value})
    version = c.version()
    c.close()
    assert first.stop() == 0
    assert "store write failed" not in first.stderr()
    restarted = start_server("--data-dir", str(tmp_path))
    snap = restarted.client().join()
    assert snap["version"] >= version
    assert snap["state"]["controls"]["quantity"]["value"] == 19


def test_the_data_dir_lock_is_released_when_the_server_is_killed(start_server, tmp_path):
    s = start_server("--data-dir", str(tmp_path))
    s.client().join()
    s.proc.send_signal(signal.SIGKILL)
    s.proc.wait()
    again = start_server("--data-dir", str(tmp_path))  # the kernel dropped the lock with the process
    assert again.client().join()["state"]["controls"]["quantity"]["value"] == 1


def test_a_changed_setting_in_the_config_starts_the_stored_room_anew(start_server, tmp_path):
    """Restarted with the same config the room resumes; with any setting of a control changed (here the stepper's max,
    then only its label) it starts a new epoch from the config as it is now, and the log names the control."""
    data, config = tmp_path / "data", tmp_path / "rooms.json"

    def write_config(**quantity):
        config.write_text(json.dumps({"templates": {"t": {"controls": {
            "quantity": {"kind": "stepper", "label": "Q", "min": 0, "max": 1000, "value": 1, **quantity},
            "other": {"kind": "stepper", "max": 9}}}}, "rooms": {"demo": {"template": "t"}}}))

    write_config()
    s = start_server("--data-dir", str(data), "--config", str(config))
    c = s.client()
    epoch = c.join()["epoch"]
    c.intent("quantity", "set", {"value": 500})
    c.close()
    s.stop()
    s = start_server("--data-dir", str(data), "--config", str(config))
    snap = s.client().join()
    assert snap["epoch"] == epoch and snap["state"]["controls"]["quantity"]["value"] == 500, "same config: resumed"
    s.stop()
    for change, changed in (({"max": 2000}, "max"), ({"max": 2000, "label": "Quantity"}, "label")):
        write_config(**change)
        s = start_server("--data-dir", str(data), "--config", str(config))
        snap = s.client().join()
        quantity = snap["state"]["controls"]["quantity"]
        assert snap["epoch"] != epoch and snap["version"] >= 0, change
        assert quantity["max"] == 2000 and quantity["label"] == change.get("label", "Q") and quantity["value"] == 1, change
        s.wait_for_log(f"changes=quantity ({changed})")  # what changed since the last start
        epoch = snap["epoch"]
        s.stop()


def test_a_config_room_moved_to_another_template_starts_anew_from_it(start_server, tmp_path):
    """The config names a room's template: moving the room to another template is a change like any setting (a new
    epoch from the new template, logged), not a restore from the template it was stored with."""
    data, config = tmp_path / "data", tmp_path / "rooms.json"

    def write_config(template):
        config.write_text(json.dumps({"templates": {
            "t": {"controls": {"quantity": {"kind": "stepper", "max": 9}}},
            "u": {"controls": {"quantity": {"kind": "stepper", "max": 9}, "extra": {"kind": "stepper"}}}},
            "rooms": {"demo": {"template": template}}}))

    write_config("t")
    s = start_server("--data-dir", str(data), "--config", str(config))
    c = s.client()
    epoch = c.join()["epoch"]
    c.intent("quantity", "next")
    c.close()
    s.stop()
    write_config("u")
    s = start_server("--data-dir", str(data), "--config", str(config))
    snap = s.client().join()
    assert snap["epoch"] != epoch and set(snap["state"]["controls"]) == {"quantity", "extra"}
    assert snap["state"]["controls"]["quantity"]["value"] == 0
    s.wait_for_log("changes=template t → u")
    s.stop()


def _mount_small_disk(path) -> str | None:
    """A 2 MiB tmpfs at `path` (a disk that fills up), or why not (needs root)."""
    import os
    import subprocess
    if os.geteuid() != 0:
        return "mounting a small disk needs root"
    path.mkdir()
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(path)], capture_output=True, text=True)
    return None if result.returncode == 0 else f"cannot mount a tmpfs: {result.stderr.strip()}"


def test_a_full_disk_is_never_acked_the_room_stops_and_comes_back_as_last_stored(start_server, tmp_path):
    """From outside, as PROTOCOL.md says: on a data dir whose disk is full, an intent gets no ack and no patch, every
    member gets `unavailable` with the room and no id, later requests the same with their id; once there is room
    again, a join loads the room at its last stored version in the same epoch."""
    import subprocess
    import pytest
    disk = tmp_path / "disk"
    why_not = _mount_small_disk(disk)
    if why_not:
        pytest.skip(why_not)
    try:
        s = start_server("--data-dir", str(disk / "data"))
        a, b = s.client(), s.client()
        epoch = a.join()["epoch"]
        b.join()
        stored = a.intent("quantity", "set", {"value": 7})
        assert stored["type"] == "ack"
        b.wait_version(stored["version"])
        filler = disk / "filler"
        subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=64k"], capture_output=True)  # until the disk is full
        a.send({"type": "intent", "id": "lost", "room": "demo", "control": "quantity", "intent": "set", "args": {"value": 8}})
        for client in (a, b):
            stop = client.recv(lambda m: m["type"] == "error" and "id" not in m)
            assert stop["code"] == "unavailable" and stop["room"] == "demo", stop
        assert not [m for m in a.inbox if m.get("id") == "lost"], "the intent that was not stored gets no reply"
        assert all(p["version"] <= stored["version"] for p in a.patches["demo"] + b.patches["demo"]), "no patch of it"
        again = b.intent("quantity", "next")
        assert again["type"] == "error" and again["code"] == "unavailable" and again["room"] == "demo"
        s.wait_for_log("room stopped: a store write failed")
        filler.unlink()
        snapshot = b.join()
        assert snapshot["type"] == "snapshot" and snapshot["epoch"] == epoch
        assert snapshot["version"] >= stored["version"] and snapshot["state"]["controls"]["quantity"]["value"] == 7
        assert b.intent("quantity", "set", {"value": 9})["type"] == "ack", "and it serves again"
        s.stop()
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)
