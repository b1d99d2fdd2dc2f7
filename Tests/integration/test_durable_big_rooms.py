"""A durable change costs what it changes (issue 40): with `--data-dir` a control is stored as what changed since its
last full state. Killed with SIGKILL in the middle of a flood of changes to a 10 MB room, the server loses nothing it
acknowledged, and the room it loads again is exactly the one its clients saw: a watcher's state at the last version it
got, resumed on the new server, patched up to the new snapshot's version, equals that snapshot."""
from __future__ import annotations

import json
import signal
import threading

import jsonpatch
from websockets.sync.client import connect

from livecontrols_client import Client
from redis_server import cluster, redis_server  # noqa: F401  (fixtures)
from test_cluster import intent_until_acked

NAME = "x" * 40_000
CONFIG = {
    "defaultTemplate": "big",
    "templates": {"big": {
        "maxStateBytes": 64 << 20,
        "controls": {
            "person": {"kind": "list", "label": "Person", "display": "{name}: {age}", "maxItems": 2_000,
                       "sections": [{"id": "people", "items": []}]},
            "quantity": {"kind": "stepper", "label": "Quantity", "min": 0, "max": 99, "value": 0},
        },
    }},
}


class Watcher:
    """Keeps the room's snapshot and every later patch as they come (applying them only at the end: a 10 MB state
    copied per patch would measure this client)."""

    def __init__(self, url: str):
        self.ws = connect(url, max_size=None, max_queue=None, open_timeout=10)
        self.session = json.loads(self.ws.recv())["session"]
        self.ws.send(json.dumps({"type": "join", "room": "demo"}))
        self.snapshot, self.patches = None, []
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self) -> None:
        try:
            for raw in self.ws:
                m = json.loads(raw)
                if m["type"] == "snapshot":  # the join's, or a resync's
                    self.snapshot, self.patches = m, []
                elif m["type"] == "patch":
                    self.patches.append(m)
        except Exception:
            pass  # the server was killed

    def state(self) -> tuple[str, int, dict]:
        self.thread.join(timeout=30)
        state, version = self.snapshot["state"], self.snapshot["version"]
        for p in self.patches:
            assert p["version"] == version + 1, f"gap: {version} -> {p['version']}"
            state = jsonpatch.apply_patch(state, p["ops"], in_place=True)
            version = p["version"]
        return self.snapshot["epoch"], version, state


def test_a_10_mb_room_killed_under_load_keeps_every_acked_change_and_comes_back_exactly(start_server, tmp_path):
    config = tmp_path / "big.json"
    config.write_text(json.dumps(CONFIG))
    data = tmp_path / "data"
    flags = ("--data-dir", str(data), "--config", str(config), "--rate", "100000", "--burst", "100000",
             "--room-queue", "100000", "--max-message-bytes", "1048576")
    s = start_server(*flags)
    c = s.client(validate=False)
    c.join()
    for i in range(250):
        c.send({"type": "intent", "room": "demo", "id": f"a{i}", "control": "person", "intent": "append",
                "args": {"value": {"name": NAME, "age": i}}}, validate=False)
    for i in range(250):
        assert c.recv(lambda m, i=i: m.get("id") == f"a{i}", timeout=60)["type"] == "ack"
    watcher = Watcher(s.ws_url)
    probe = s.client(validate=False)
    assert len(json.dumps(probe.join()["state"])) > 10_000_000, "a 10 MB room"
    probe.close()

    acked: dict[int, str] = {}
    stop = threading.Event()

    def killer():
        while len(acked) < 400 and not stop.is_set():
            stop.wait(0.005)
        s.proc.send_signal(signal.SIGKILL)

    threading.Thread(target=killer, daemon=True).start()
    intents = [("person", "next", {}), ("quantity", "next", {}), ("person", "append", {"value": {"name": "n", "age": 0}}),
               ("person", "prev", {}), ("person", "edit", None), ("quantity", "prev", {})]
    try:
        i = 0
        while True:
            control, intent, args = intents[i % len(intents)]
            if args is None:
                args = {"id": c.state()["controls"]["person"]["selected"], "value": {"name": f"edited {i}", "age": i}}
            reply = c.intent(control, intent, args, id=i)
            if reply["type"] == "ack":
                acked[reply["version"]] = intent
            i += 1
    except Exception:
        pass  # killed
    finally:
        stop.set()
    s.proc.wait(10)
    assert len(acked) >= 400
    epoch, seen, state = watcher.state()

    s2 = start_server(*flags)
    fresh = s2.client(validate=False).join()
    assert fresh["epoch"] == epoch, "a recovered room keeps its epoch"
    assert fresh["version"] >= max(acked), "every acknowledged change is there"
    # What the watcher saw, resumed and patched to the snapshot's version, is the snapshot: restored exactly.
    resumer = s2.client(validate=False)
    resumer.rooms["demo"] = {"epoch": epoch, "version": seen, "state": state}
    resumer.patches["demo"] = []
    assert resumer.join(since={"epoch": epoch, "version": seen})["type"] == "resumed"
    restored = resumer.wait_version(fresh["version"])["state"]
    assert json.dumps(restored["controls"], sort_keys=True) == json.dumps(fresh["state"]["controls"], sort_keys=True)
    resumer.close()


def test_cluster_mode_stores_changes_as_deltas_and_a_takeover_replays_them_exactly(cluster, connect, redis_server):  # noqa: F811
    # Redis holds a control as its full state (`c:<id>`) and its changes since (`x:<id>:<seq>`); the node that takes
    # the room over after a kill -9 rebuilds it from both, exactly as the clients saw it.
    a_node, b_node = cluster(2)
    a = connect(a_node)
    a.join(name="on the owner")
    for i in range(20):
        assert a.intent("person", "append", {"value": {"name": "y" * 2_000, "age": i}})["type"] == "ack"
    b = connect(b_node)
    b.join(name="on the other node")
    for i in range(6):
        assert b.intent("person", "next" if i % 2 == 0 else "prev")["type"] == "ack"
    assert b.intent("quantity", "set", {"value": 7})["type"] == "ack"
    state = "lc:state:demo"
    assert redis_server.command("HEXISTS", state, "x:person:1") == 1, "a step is stored as what changed"
    assert redis_server.command("HEXISTS", state, "x:person:6") == 1
    a_node.proc.kill()
    a_node.proc.wait()
    intent_until_acked(b, "person", "next", {}, timeout=20)
    fresh = connect(b_node).join()
    b.wait_version(fresh["version"])
    assert fresh["state"]["controls"] == b.state()["controls"], "the room the new owner loaded is the one its clients saw"
    assert redis_server.command("HEXISTS", state, "x:person:1") == 0, "the new owner wrote the list whole, its old changes went"
