"""Intent hooks (docs/PROTOCOL.md, *Intent hooks*) against the real server and a real backend that verifies every
call with the `standardwebhooks` library: allow, allow with new args, deny, failures by onError, order, conflicts,
bounds, SIGTERM, the server API skipping hooks, and a cluster's owner calling."""
from __future__ import annotations

import json
import signal
import threading
import time

import pytest

from api_client import API, API_KEY, intent as api_intent
from auth_tokens import mint_token
from hook_receiver import ALLOW, Answer, HookReceiver
from redis_server import cluster, redis_server  # noqa: F401  (fixtures)

STEPPERS = {
    "a": {"kind": "stepper", "min": 0, "max": 10, "value": 0},
    "b": {"kind": "stepper", "min": 0, "max": 10, "value": 0},
    "free": {"kind": "stepper", "min": 0, "max": 10, "value": 0},
}


@pytest.fixture
def backend():
    made: list[HookReceiver] = []

    def make(decide=None) -> HookReceiver:
        r = HookReceiver(decide)
        made.append(r)
        return r
    yield make
    for r in made:
        r.stop()


@pytest.fixture
def hooked(start_server, tmp_path):
    """A server whose template `t` (steppers a, b, free) sends intents to `hooks`; rooms `main` and `other`."""
    def start(hooks: dict, *args, controls=None):
        config = {"templates": {"t": {"controls": controls or STEPPERS, "hooks": hooks}},
                  "rooms": {"main": {"template": "t"}, "other": {"template": "t"}}}
        path = tmp_path / f"config-{time.monotonic_ns()}.json"
        path.write_text(json.dumps(config))
        return start_server("--config", str(path), "--api-key", API_KEY, *args)
    return start


def value(client, control: str, room: str = "main") -> int:
    return client.state(room)["controls"][control]["value"]


def test_allow_deny_and_the_backends_args(hooked, backend):
    def decide(call):
        v = call["args"].get("value")
        if v is not None and v > 5:
            return Answer({"allow": False, "code": "too_high", "message": "At most 5 in this room"})
        if v == 3:
            return Answer({"allow": True, "args": {"value": 4}})
        return ALLOW
    hook = backend(decide)
    s = hooked(hook.hook(controls=["a", "b"]))
    ann = s.client()
    ann.join("main", name="Ann")

    ack = ann.intent("a", "set", {"value": 2}, room="main")
    assert ack["type"] == "ack", ack
    assert value(ann, "a") == 2
    call = hook.calls[0]
    assert call["type"] == "intent.requested"
    assert {k: call[k] for k in ("room", "template", "control", "kind", "intent", "args")} == {
        "room": "main", "template": "t", "control": "a", "kind": "stepper", "intent": "set", "args": {"value": 2}}
    assert call["member"] == {"session": ann.session, "name": "Ann", "roles": ["admin"], "sub": None}
    assert call["state"]["value"] == 0 and call["version"] == ack["version"] - 1
    assert call["headers"]["webhook-id"].startswith("hook_")

    denied = ann.intent("a", "set", {"value": 9}, room="main")
    assert denied["type"] == "error" and denied["code"] == "denied", denied
    assert denied["reason"] == "too_high" and denied["message"] == "At most 5 in this room"
    assert value(ann, "a") == 2

    assert ann.intent("a", "set", {"value": 3}, room="main")["type"] == "ack"
    assert value(ann, "a") == 4, "applied with the backend's args"

    # Not hooked: the free stepper is never asked about.
    calls = len(hook.calls)
    assert ann.intent("free", "set", {"value": 7}, room="main")["type"] == "ack"
    assert len(hook.calls) == calls
    assert not hook.invalid, hook.invalid


def test_an_intent_refused_anyway_is_not_asked_and_the_server_api_skips_hooks(hooked, backend):
    hook = backend(lambda call: Answer({"allow": False}))
    s = hooked(hook.hook(controls="*", intents=["set"]))
    ann = s.client()
    ann.join("main")
    refused = ann.intent("a", "set", {"value": 99}, room="main")
    assert refused["code"] == "out_of_range", refused
    bad = ann.intent("a", "set", {"value": "x"}, room="main", validate=False)
    assert bad["code"] == "invalid_args", bad
    assert ann.intent("a", "next", room="main")["type"] == "ack", "next is not hooked (intents: [set])"
    assert hook.calls == []
    denied = ann.intent("a", "set", {"value": 1}, room="main")
    assert denied["code"] == "denied" and "reason" not in denied, denied
    assert "backend refused" in denied["message"]
    # The server API is the backend: its intents skip the hook.
    response = API(s).intents("main", api_intent("a", "set", {"value": 6}))
    assert response.status_code == 200, response.text
    assert len(hook.calls) == 1
    assert ann.wait_state(lambda st: st["controls"]["a"]["value"] == 6, room="main")


def test_waiting_intents_apply_in_arrival_order_and_nothing_else_waits(hooked, backend):
    """`a`'s backend takes 1 s, `b`'s answers at once: b waits for a (arrival order); the unhooked `free` and another
    room's intents are answered meanwhile."""
    hook = backend(lambda call: Answer(delay=1.0) if call["control"] == "a" else ALLOW)
    s = hooked(hook.hook(controls=["a", "b"]))
    ann, bob = s.client(), s.client()
    ann.join("main")
    bob.join("other")
    ann.send({"type": "intent", "id": "slow", "room": "main", "control": "a", "intent": "set", "args": {"value": 1}})
    ann.send({"type": "intent", "id": "fast", "room": "main", "control": "b", "intent": "set", "args": {"value": 2}})
    hook.wait_calls(2)
    started = time.monotonic()
    assert ann.intent("free", "next", room="main")["type"] == "ack"
    assert bob.intent("free", "next", room="other")["type"] == "ack"
    assert bob.intent("b", "next", room="other")["type"] == "ack", "another room's hooked intent does not wait for main's"
    assert time.monotonic() - started < 0.8, "nothing else waited for the slow backend"
    seen = []
    while len([m for m in seen if m["type"] == "ack"]) < 2:
        m = ann.recv(lambda m: m.get("id") in ("slow", "fast") or (m["type"] == "patch" and m["cause"].get("id") in ("slow", "fast")))
        seen.append(m)
    order = [(m["type"], m.get("id") or m["cause"]["id"]) for m in seen]
    assert order == [("patch", "slow"), ("ack", "slow"), ("patch", "fast"), ("ack", "fast")], order


def test_one_call_per_control_at_a_time_and_conflict_when_something_else_changed_it(hooked, backend):
    gate = threading.Event()

    def decide(call):
        if call["args"].get("value") == 1:
            gate.wait(10)
        return ALLOW
    hook = backend(decide)
    s = hooked(hook.hook(controls=["a"], intents=["set"]))
    ann = s.client()
    ann.join("main")
    ann.send({"type": "intent", "id": "first", "room": "main", "control": "a", "intent": "set", "args": {"value": 1}})
    ann.send({"type": "intent", "id": "second", "room": "main", "control": "a", "intent": "set", "args": {"value": 2}})
    hook.wait_calls(1)
    ann.expect_silence(lambda m: m.get("id") in ("first", "second"), 0.3)
    assert len(hook.calls) == 1, "the second is asked about once the first is settled"
    # Meanwhile something not hooked changes `a`: the first's answer no longer fits.
    assert ann.intent("a", "next", room="main")["type"] == "ack"
    gate.set()
    first = ann.recv(lambda m: m.get("id") == "first")
    assert first["type"] == "error" and first["code"] == "conflict", first
    second = ann.recv(lambda m: m.get("id") == "second")
    assert second["type"] == "ack", second
    assert hook.calls[1]["state"]["value"] == 1, "the second call showed the state the first left"
    assert value(ann, "a") == 2


@pytest.mark.parametrize("answer, why", [
    (Answer(status=500), "HTTP 500"),
    (Answer(b"not json"), "not JSON"),
    (Answer({"allowed": True}), "no boolean"),
    (Answer({"allow": False, "code": "has spaces"}), "code"),
    (Answer({"allow": True, "pad": "x" * 100_000}), "longer than"),
    (Answer(delay=1.5), "timed out"),
])
def test_no_answer_follows_on_error(hooked, backend, answer, why):
    hook = backend(lambda call: answer)
    s = hooked(hook.hook(controls=["a"], timeoutMs=500))
    ann = s.client()
    ann.join("main")
    refused = ann.intent("a", "set", {"value": 1}, room="main")
    assert refused["type"] == "error" and refused["code"] == "unavailable", refused
    assert why in refused["message"], refused["message"]
    assert value(ann, "a") == 0
    metrics = s.get("/metrics").read().decode()
    assert 'livecontrols_intent_hook_calls_total{template="t",outcome="failed"} 1' in metrics, metrics


def test_on_error_allow_applies(hooked, backend):
    hook = backend(lambda call: Answer(status=503))
    s = hooked(hook.hook(controls=["a"], onError="allow"))
    ann = s.client()
    ann.join("main")
    assert ann.intent("a", "set", {"value": 5}, room="main")["type"] == "ack"
    assert value(ann, "a") == 5


def test_waiting_intents_are_bounded_per_room(hooked, backend):
    gate = threading.Event()
    hook = backend(lambda call: (gate.wait(10), ALLOW)[1])
    s = hooked(hook.hook(controls=["a", "b"], maxWaiting=2))
    ann = s.client()
    ann.join("main")
    ann.send({"type": "intent", "id": "w1", "room": "main", "control": "a", "intent": "next"})
    ann.send({"type": "intent", "id": "w2", "room": "main", "control": "b", "intent": "next"})
    hook.wait_calls(2)
    third = ann.intent("a", "next", room="main")
    assert third["type"] == "error" and third["code"] == "overloaded", third
    assert "maxWaiting" in third["message"]
    gate.set()
    for id in ("w1", "w2"):
        assert ann.recv(lambda m: m.get("id") == id)["type"] == "ack"
    assert ann.intent("a", "next", room="main")["type"] == "ack", "room again once they are settled"


def test_an_intent_of_a_member_who_left_is_dropped(hooked, backend):
    gate = threading.Event()
    hook = backend(lambda call: (gate.wait(10), ALLOW)[1])
    s = hooked(hook.hook(controls=["a"]))
    ann, watcher = s.client(), s.client()
    ann.join("main")
    watcher.join("main")
    ann.send({"type": "intent", "id": "gone", "room": "main", "control": "a", "intent": "next"})
    hook.wait_calls(1)
    ann.close()
    watcher.recv(lambda m: m["type"] == "patch" and m["cause"].get("kind") == "leave")
    gate.set()
    watcher.expect_silence(lambda m: m["type"] == "patch" and m["cause"].get("kind") == "intent", 0.5)
    assert value(watcher, "a") == 0


def test_at_sigterm_a_waiting_intent_is_refused_unavailable(hooked, backend):
    hook = backend(lambda call: Answer(delay=5))
    s = hooked(hook.hook(controls=["a"], timeoutMs=10_000))
    ann = s.client()
    ann.join("main")
    ann.send({"type": "intent", "id": "waiting", "room": "main", "control": "a", "intent": "next"})
    hook.wait_calls(1)
    s.proc.send_signal(signal.SIGTERM)
    refused = ann.recv(lambda m: m.get("id") == "waiting", timeout=3)
    assert refused["type"] == "error" and refused["code"] == "unavailable", refused
    assert "shutting down" in refused["message"]
    assert s.proc.wait(10) == 0


def test_the_owner_calls_in_a_cluster(cluster, backend, tmp_path):  # noqa: F811
    hook = backend(lambda call: Answer({"allow": False, "code": "nope"}) if call["args"].get("value") == 9 else ALLOW)
    config = {"templates": {"t": {"controls": STEPPERS, "hooks": hook.hook(controls=["a"])}}, "defaultTemplate": "t"}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    secret = "s" * 32
    n0, n1 = cluster(2, "--config", str(path), "--auth", "required", "--auth-secret", secret)
    ann, bob = n0.client(), n1.client()
    ann.join("team", token=mint_token(secret, "--role", "editor", "--room", "team", "--subject", "user-ann", "--name", "Ann"))
    bob.join("team", token=mint_token(secret, "--role", "editor", "--room", "team", "--subject", "user-bob"))
    assert ann.intent("a", "set", {"value": 2}, room="team")["type"] == "ack"
    assert bob.intent("a", "set", {"value": 3}, room="team")["type"] == "ack"
    denied = bob.intent("a", "set", {"value": 9}, room="team")
    assert denied["code"] == "denied" and denied["reason"] == "nope", denied
    assert [c["member"]["sub"] for c in hook.calls] == ["user-ann", "user-bob", "user-bob"]
    assert [c["member"]["roles"] for c in hook.calls][0] == ["editor"]
    ann.wait_state(lambda st: st["controls"]["a"]["value"] == 3, room="team")
    assert len(hook.calls) == 3, "each intent asked about once, by the room's owner"

    # The owner is killed: the next owner asks, and still knows who Bob is (the token's sub is kept with the member).
    owner = n0 if "livecontrols_cluster_owned_rooms 1" in n0.get("/metrics").read().decode() else n1
    survivor, client = (n1, bob) if owner is n0 else (n0, ann)
    owner.proc.kill()
    deadline = time.monotonic() + 15
    while (answer := client.intent("a", "set", {"value": 5}, room="team"))["type"] == "error":
        assert answer["code"] == "unavailable" and time.monotonic() < deadline, answer
        time.sleep(0.2)
    assert hook.calls[-1]["member"]["sub"] == ("user-bob" if client is bob else "user-ann")
    assert hook.calls[-1]["state"]["value"] == 3


def test_the_backend_of_backend_md_works_as_written(start_server, tmp_path):
    """docs/BACKEND.md's intent hook example, run as it is written (its port moved to a free one)."""
    import re
    import socket
    import subprocess
    import sys
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "BACKEND.md").read_text()
    section = doc.split("## Intent hooks", 1)[1]
    hook_json = re.search(r"```json\n(.*?)```", section, re.S).group(1)
    script = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (tmp_path / "allow.py").write_text(script.replace("9001", str(port)))
    backend = subprocess.Popen([sys.executable, str(tmp_path / "allow.py")])
    try:
        hooks = json.loads("{" + hook_json.replace("9001", str(port)) + "}")["hooks"]
        config = {"templates": {"t": {"controls": {"slots": {"kind": "list", "values": []}}, "hooks": hooks}}}
        path = tmp_path / "config.json"
        path.write_text(json.dumps(config))
        s = start_server("--config", str(path))
        ann = s.client()
        ann.join("r")
        deadline = time.monotonic() + 10
        while (first := ann.intent("slots", "append", {"value": "  Mon 9:00 "}, room="r"))["type"] == "error":
            assert first["code"] == "unavailable" and time.monotonic() < deadline, first  # the backend is still starting
            time.sleep(0.1)
        for slot in ("Tue 10:00", "Wed 11:00"):
            assert ann.intent("slots", "append", {"value": slot}, room="r")["type"] == "ack"
        full = ann.intent("slots", "append", {"value": "Thu 12:00"}, room="r")
        assert (full["code"], full["reason"], full["message"]) == ("denied", "full", "Three slots are taken already"), full
        values = [item["value"] for section in ann.state("r")["controls"]["slots"]["sections"] for item in section["items"]]
        assert values == ["Mon 9:00", "Tue 10:00", "Wed 11:00"]
    finally:
        backend.kill()
        backend.wait()


def test_a_claim_meanwhile_is_no_conflict_and_on_error_allow_still_checks_the_state(hooked, backend):
    gate = threading.Event()
    hook = backend(lambda call: (gate.wait(10), Answer(status=500))[1])
    s = hooked(hook.hook(controls=["a"], intents=["set"], onError="allow"))
    ann, bob = s.client(), s.client()
    ann.join("main")
    bob.join("main")
    ann.send({"type": "intent", "id": "claimed", "room": "main", "control": "a", "intent": "set", "args": {"value": 4}})
    hook.wait_calls(1)
    bob.send({"type": "claim", "id": "c1", "room": "main", "control": "a"})
    assert bob.recv(lambda m: m.get("id") == "c1")["type"] == "ack"
    gate.set()
    assert ann.recv(lambda m: m.get("id") == "claimed")["type"] == "ack", "a claim is not a change of the control"
    assert value(ann, "a") == 4

    gate.clear()
    ann.send({"type": "intent", "id": "moved", "room": "main", "control": "a", "intent": "set", "args": {"value": 6}})
    hook.wait_calls(2)
    assert ann.intent("a", "next", room="main")["type"] == "ack"  # not hooked (intents: [set])
    gate.set()
    moved = ann.recv(lambda m: m.get("id") == "moved")
    assert moved["type"] == "error" and moved["code"] == "conflict", "onError allow applies only to the state it would have shown"
    assert value(ann, "a") == 5


def test_a_member_who_leaves_is_told_its_waiting_intent_was_not_applied(hooked, backend):
    gate = threading.Event()
    hook = backend(lambda call: (gate.wait(10), ALLOW)[1])
    s = hooked(hook.hook(controls=["a"]))
    ann = s.client()
    ann.join("main")
    ann.send({"type": "intent", "id": "waiting", "room": "main", "control": "a", "intent": "next"})
    hook.wait_calls(1)
    ann.send({"type": "leave", "room": "main", "id": "bye"})
    refused = ann.recv(lambda m: m.get("id") == "waiting")
    assert refused["type"] == "error" and refused["code"] == "not_joined", refused
    assert ann.recv(lambda m: m.get("id") == "bye")["type"] == "left"
    ann.join("main")  # the same session, back at once: the old intent is still not applied
    gate.set()
    ann.expect_silence(lambda m: m["type"] == "patch" and m["cause"].get("kind") == "intent", 0.5)
    assert value(ann, "a") == 0


def test_a_cluster_never_applies_what_a_node_already_answered_unavailable(cluster, backend, tmp_path):  # noqa: F811
    """The member's node waits --lease-ms + 1 s (here 2 s); a backend that takes 3 s: the owner cuts the call to what is
    left and refuses it, even with onError allow — the late answer is dropped."""
    hook = backend(lambda call: Answer(delay=3.0))
    config = {"templates": {"t": {"controls": STEPPERS, "hooks": hook.hook(controls=["a"], timeoutMs=10_000, onError="allow")}}}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    n0, n1 = cluster(2, "--config", str(path))
    ann, bob = n0.client(), n1.client()
    ann.join("team")
    bob.join("team")
    refused = bob.intent("a", "next", room="team")
    assert refused["type"] == "error" and refused["code"] == "unavailable", refused
    bob.expect_silence(lambda m: m["type"] == "patch" and m["cause"].get("kind") == "intent", 2.5)
    assert value(bob, "a", room="team") == 0


def test_a_room_has_at_most_four_calls_under_way(hooked, backend):
    gate = threading.Event()
    hook = backend(lambda call: (gate.wait(10), ALLOW)[1])
    controls = {f"c{i}": {"kind": "stepper", "min": 0, "max": 10, "value": 0} for i in range(6)}
    s = hooked(hook.hook(controls="*"), controls=controls)
    ann = s.client()
    ann.join("main")
    for i in range(6):
        ann.send({"type": "intent", "id": f"n{i}", "room": "main", "control": f"c{i}", "intent": "next"})
    hook.wait_calls(4)
    ann.expect_silence(lambda m: m.get("id", "").startswith("n"), 0.4)
    assert len(hook.calls) == 4, "two wait in the room, not in the backend's connections"
    gate.set()
    for i in range(6):
        assert ann.recv(lambda m, i=i: m.get("id") == f"n{i}")["type"] == "ack"
    assert sorted(c["control"] for c in hook.calls) == [f"c{i}" for i in range(6)]
