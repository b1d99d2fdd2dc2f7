"""The `range` control (the demo's `volume`) through the real server: exact decimals, a 100/s drag that is never
rate limited, its patches coalesced to the interval with the last value delivered, and the drag hold."""
import time


def volume(client):
    return client.state()["controls"]["volume"]


def test_a_fast_drag_is_acked_never_rate_limited_and_watched_at_the_interval(clients):
    a, b = clients(), clients()
    a.join()
    b.join()
    v = volume(a)
    assert (v["kind"], v["min"], v["max"], v["step"], v["value"], v["minIntervalMs"], v["holding"]) == ("range", 0, 1, 0.05, 0.5, 16, None)
    start = b.version()
    sent = 0
    began = time.monotonic()
    for i in range(300):  # 3 s at 100 a second: past the message burst, so the drag's own pricing is what lets it through
        target = began + i / 100
        time.sleep(max(0, target - time.monotonic()))
        reply = a.intent("volume", "set", {"value": round((i % 21) * 0.05, 2)})
        assert reply["type"] == "ack", reply
        sent += 1
    last = round((299 % 21) * 0.05, 2)
    state = b.wait_state(lambda s: s["controls"]["volume"]["value"] == last)
    assert state["controls"]["volume"]["holding"] == {"session": a.session}
    patches = [p for p in b.patches["demo"] if p["version"] > start]
    assert len(patches) < sent * 0.9, f"{len(patches)} patches for {sent} sets: coalesced to the 16 ms interval"
    assert a.intent("volume", "release")["type"] == "ack"
    ended = b.recv(lambda m: m.get("type") == "patch" and m["cause"].get("ended"))
    assert ended["cause"]["ended"][0]["reason"] == "release"


def test_decimals_are_exact_and_errors_typed(clients):
    a = clients()
    a.join()
    a.intent("volume", "set", {"value": 0})
    for _ in range(3):
        a.intent("volume", "nudge", {"by": 0.1})
    a.intent("volume", "release")
    # Read from the wire as JSON: 0.30000000000000004 would not equal 0.3.
    assert a.wait_state(lambda s: s["controls"]["volume"]["holding"] is None)["controls"]["volume"]["value"] == 0.3
    assert a.intent("volume", "set", {"value": 1.5})["code"] == "out_of_range"
    assert a.intent("volume", "set", {"value": "1"}, validate=False)["code"] == "invalid_args"
    assert a.intent("volume", "release")["code"] == "not_holder"
