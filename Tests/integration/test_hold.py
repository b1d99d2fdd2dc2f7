"""Hold-to-repeat runs on the server: every client sees the same ticks."""

def ticks(client, room="demo"):
    return [p for p in client.patches[room] if p["cause"]["kind"] == "tick"]


def test_press_steps_at_once_then_ticks_until_release(clients):
    a, b = clients(), clients()
    a.join(name="holder")
    b.join(name="watcher")
    a.wait_version(b.version())
    a.intent("quantity", "set", {"value": 10})
    ack = a.intent("quantity", "press", {"direction": "next"})
    assert ack["type"] == "ack"
    assert a.state()["controls"]["quantity"]["value"] == 11
    assert a.state()["controls"]["quantity"]["holding"] == {"session": a.session, "direction": "next"}
    assert a.state()["presence"][a.session]["holding"] == ["quantity"]
    # Three repeats (after 500 ms, then every 100 ms) reach both clients.
    b.wait_state(lambda s: s["controls"]["quantity"]["value"] >= 14)
    release = a.intent("quantity", "release")
    assert release["type"] == "ack"
    ended = a.patches["demo"][-1]
    assert ended["cause"]["ended"] == [{"control": "quantity", "session": a.session, "reason": "release"}]
    assert a.state()["controls"]["quantity"]["holding"] is None
    b.wait_version(release["version"])
    assert [t["cause"]["tick"] for t in ticks(b)] == list(range(1, len(ticks(b)) + 1))
    assert ticks(a)[-len(ticks(b)):] == ticks(b)
    # No tick after the release: nothing arrives within several intervals.
    b.expect_silence(lambda m: m["type"] == "patch", timeout=0.6)


def test_holder_disconnect_stops_the_ticks(clients):
    a, b = clients(), clients()
    a.join()
    b.join()
    a.intent("quantity", "set", {"value": 0})
    a.intent("quantity", "press", {"direction": "next"})
    b.wait_state(lambda s: s["controls"]["quantity"]["value"] >= 3)
    a.close()
    state = b.wait_state(lambda s: a.session not in s["presence"])
    assert state["controls"]["quantity"]["holding"] is None
    leave = b.patches["demo"][-1]
    assert leave["cause"]["kind"] == "leave" and leave["cause"]["reason"] == "disconnect"
    assert leave["cause"]["ended"] == [{"control": "quantity", "session": a.session, "reason": "disconnect"}]
    b.expect_silence(lambda m: m["type"] == "patch", timeout=0.6)


def test_press_by_another_session_replaces_the_hold(clients):
    a, b = clients(), clients()
    a.join()
    b.join()
    a.intent("quantity", "set", {"value": 50})
    a.intent("quantity", "press", {"direction": "next"})
    b.intent("quantity", "press", {"direction": "prev"})
    patch = b.patches["demo"][-1]
    assert patch["cause"]["ended"] == [{"control": "quantity", "session": a.session, "reason": "replaced"}]
    assert b.state()["controls"]["quantity"]["holding"] == {"session": b.session, "direction": "prev"}
    assert a.intent("quantity", "release")["code"] == "not_holder"
    assert b.intent("quantity", "release")["type"] == "ack"


def test_hold_ends_at_the_bound(clients):
    a = clients()
    a.join()
    a.intent("quantity", "set", {"value": 96})
    a.intent("quantity", "press", {"direction": "next"})
    state = a.wait_state(lambda s: s["controls"]["quantity"]["holding"] is None)
    assert state["controls"]["quantity"]["value"] == 99
    assert state["controls"]["quantity"]["canNext"] is False
    last = a.patches["demo"][-1]
    assert last["cause"]["kind"] == "tick"
    assert last["cause"]["ended"] == [{"control": "quantity", "session": a.session, "reason": "bound"}]
    assert a.intent("quantity", "press", {"direction": "next"})["code"] == "at_bound"


def test_metrics_report_ticks_and_their_lateness(clients, server):
    a = clients()
    a.join()
    a.intent("quantity", "set", {"value": 0})
    a.intent("quantity", "press", {"direction": "next"})
    a.wait_state(lambda s: s["controls"]["quantity"]["value"] >= 4)
    a.intent("quantity", "release")  # its ack comes after every tick's patch
    with server.get("/metrics") as r:
        assert r.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
        text = r.read().decode()
    values = dict(line.rsplit(" ", 1) for line in text.splitlines() if line and not line.startswith("#"))
    ticked = len(ticks(a))
    assert ticked >= 3
    assert int(values["livecontrols_hold_ticks_total"]) == ticked
    assert int(values["livecontrols_intents_total"]) >= 3
    # The lateness is a histogram of every tick since start: cumulative buckets up to +Inf, which is the count.
    name = "livecontrols_hold_tick_lateness_seconds"
    assert f"# TYPE {name} histogram" in text.splitlines()
    assert int(values[f"{name}_count"]) == ticked
    buckets = sorted((float(key[len(name) + 12:-2]), int(value)) for key, value in values.items() if key.startswith(f"{name}_bucket{{le=\""))
    assert buckets[0][0] == 0.00005 and buckets[-2][0] == 1 and buckets[-1][0] == float("inf")
    assert [count for _, count in buckets] == sorted(count for _, count in buckets)
    assert buckets[-1][1] == ticked
    assert 0 <= float(values[f"{name}_sum"]) < ticked  # each tick less than a second late
