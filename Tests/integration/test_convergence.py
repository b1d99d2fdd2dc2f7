"""Convergence property: random intents from several clients on every control of the demo room, with
random disconnects, resumes and leaves. Every client's patched state equals a fresh snapshot at the
same version."""
import os
import random

import pytest

from livecontrols_client import Client

SEEDS = [int(s) for s in os.environ.get("CONVERGENCE_SEEDS", "1,2,3").split(",")]
STEPS = int(os.environ.get("CONVERGENCE_STEPS", "300"))


def random_intent(rng: random.Random, control: dict):
    """A plausible (sometimes wrong) intent for a control, chosen from its current state."""
    kind = control.get("kind")
    direction = {"direction": rng.choice(["next", "prev"])}
    count = {"count": rng.choice([2, 5, 1000])}
    if kind == "stepper":
        return rng.choice([("next", None), ("prev", None), ("set", {"value": rng.randint(-2, 101)}),
                           ("next", count), ("prev", count), ("press", direction), ("release", None)])
    if kind == "list":
        ids = [item["id"] for s in control.get("sections", []) for item in s["items"]]
        some = rng.choice(ids) if ids else "i0"
        return rng.choice([("next", None), ("prev", None), ("select", {"id": some}), ("remove", {"id": some}),
                           ("append", {"value": {"name": rng.choice(["Ann", "Bo", "Joe"]), "age": rng.randint(1, 90)}}),
                           ("press", direction), ("release", None)])
    if kind == "wizard":
        return rng.choice([("next", None), ("next", None), ("prev", None), ("reset", None),
                           ("append", {"step": {"id": f"x{rng.randint(0, 10**6)}", "title": "Extra"}})])
    if kind == "form":
        elements = control.get("elements", [])
        element = rng.choice(elements) if elements else {"id": "none", "fields": []}
        field = rng.choice(element["fields"]) if element.get("fields") else {"id": "none", "type": "text"}
        value = {"text": rng.choice(["", "a", "ann@example.com", "x" * 30]), "number": rng.randint(-5, 200),
                 "boolean": rng.choice([True, False]), "choice": rng.choice(field.get("choices") or ["?"])}.get(field.get("type"), "v")
        return rng.choice([("set", {"element": element["id"], "field": field["id"], "value": value}),
                           ("set", {"element": element["id"], "field": field["id"], "value": value}),
                           ("finish", None), ("expand", {"element": element["id"]}), ("reset", None)])
    if kind == "pager":
        window = control.get("window") or [None]
        return rng.choice([("next", None), ("prev", None), ("goto", {"position": rng.choice(window)}),
                           ("next", count), ("press", direction), ("release", None)])
    if kind == "toggle":
        return rng.choice([("flip", None), ("set", {"on": rng.choice([True, False])}), ("press", None), ("release", None)])
    if kind == "timer":
        return rng.choice([("start", None), ("pause", None), ("resume", None), ("reset", None),
                           ("add", {"ms": rng.choice([-400000, -1000, 1000, 60000])})])
    if kind == "range":
        return rng.choice([("set", {"value": round(rng.uniform(-0.1, 1.1), 3)}), ("set", {"value": rng.randint(0, 20) * 0.05}),
                           ("nudge", {"by": rng.choice([-0.05, 0.1, 3])}), ("release", None)])
    if kind == "poll":
        option = rng.choice([o["id"] for o in control["options"]] + ["nope"])
        return rng.choice([("vote", {"option": option}), ("vote", {"option": option}), ("unvote", {"option": option}),
                           ("close", None), ("open", None), ("reveal", None), ("reset", None), ("add", {"label": f"L{rng.randrange(6)}"})])
    if kind == "text":
        length = len("\n".join(control["lines"]))
        at = rng.randint(0, length)
        return rng.choice([("splice", {"at": at, "delete": rng.choice([0, 1]) if at < length else 0, "insert": rng.choice(["", "x", "😀", "\n"]),
                                      "base": max(0, control["rev"] - rng.choice([0, 0, 1]))}),
                           ("set", {"text": rng.choice(["", "a\nb", "note"])})])
    raise AssertionError(f"no random intents for kind {kind!r}: add them here")


@pytest.mark.parametrize("seed", SEEDS)
def test_random_intents_disconnects_and_resumes_converge(server, seed):
    rng = random.Random(seed)
    clients = [server.client() for _ in range(4)]
    for i, c in enumerate(clients):
        c.join(name=f"c{i}")
    for step in range(STEPS):
        i = rng.randrange(len(clients))
        c = clients[i]
        roll = rng.random()
        if roll < 0.05:  # drop the connection and resume where it left off
            epoch, version, state = c.rooms["demo"]["epoch"], c.version(), c.state()
            c.close()
            c = clients[i] = Client(server.ws_url)
            c.rooms["demo"] = {"epoch": epoch, "version": version, "state": state}
            c.patches["demo"] = []
            c.join(since={"epoch": epoch, "version": version}, name=f"c{i}")
        elif roll < 0.08:  # leave and join again
            c.leave()
            c.join(name=f"c{i}")
        else:
            controls = c.state()["controls"]
            control_id = rng.choice(list(controls))
            intent, args = random_intent(rng, controls[control_id])
            reply = c.intent(control_id, intent, args)
            assert reply["type"] in ("ack", "error")
            if reply["type"] == "error":
                assert reply["code"] and reply["message"]
    # Quiesce: end every hold, then compare everyone with a fresh snapshot at the same version.
    for c in clients:
        for control_id, control in c.state()["controls"].items():
            if (control.get("holding") or {}).get("session") == c.session:
                c.intent(control_id, "release")
    fresh = server.client()
    snap = fresh.join()
    while any((ctl.get("holding") is not None) for ctl in snap["state"]["controls"].values()):
        snap = fresh.join()  # a hold may still be ending; resync until none runs
    def shared(state):
        """The state without what members see differently (a poll's ballots: each sees its own)."""
        return {**state, "controls": {k: {f: v for f, v in ctl.items() if not (ctl["kind"] == "poll" and f == "ballots")}
                                      for k, ctl in state["controls"].items()}}
    for c in clients:
        c.wait_version(snap["version"])
        assert shared(c.state()) == shared(snap["state"]), f"client {c.session} diverged (seed {seed})"
        held = c.state()
        own = c.join()  # a resync: the server's snapshot for this session
        assert own["version"] == snap["version"] and held == own["state"], f"client {c.session}'s own view diverged (seed {seed})"
