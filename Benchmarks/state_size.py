#!/usr/bin/env python3
"""What an intent costs as a room's state grows, from ~1 KB to ~10 MB (issues #18 and #40: a change costs what it
changes, in memory and on disk).

    python3 Benchmarks/state_size.py [--baseline OLD_BINARY] [--repetitions 20] [--stores memory,data-dir]

A room with a list like the demo's `person` (`display: "{name}: {age}"`, so each item's label repeats its name) and
a stepper. One client fills the list with items whose name has 10,000 characters (0 … 500 items: the room's
snapshot grows from ~1 KB to ~10 MB) and, at each size, times its own intents from sending each until both its
`ack` and a second member's copy of the change have arrived: an `append` of one more such item, then its `remove`
(the size stays), a `next` of the list (a step: its selection moves), a `set` of a form's field and a `next` of the
stepper (other controls of the same room). Each server runs with the memory store, with `--data-dir` (the embedded
SQLite store, what `scripts/run` uses) and as a cluster node on a local redis-server (no persistence of its own:
what the node writes is the cost), side by side. The server's CPU per intent is
the run time of all its threads over that span (`/proc/PID/task/*/schedstat`, nanoseconds). Medians of
`--repetitions`; the state's size is the length of a fresh member's `snapshot`.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import subprocess
import tempfile
import time

import websocket

from cluster import free_port, redis_cli
from compare import SERVER, start_livecontrols

NAME = "x" * 10_000
SIZES = (0, 2, 50, 150, 500)  # ~20 KB an item (its name, and its label repeating it): ~0, 0, 1, 3 and 10 MB
CONFIG = {
    "defaultTemplate": "sized",
    "templates": {"sized": {
        "maxStateBytes": 64 << 20,
        "controls": {
            "person": {"kind": "list", "label": "Person", "display": "{name}: {age}", "maxItems": 2000,
                       "sections": [{"id": "people", "items": []}]},
            "quantity": {"kind": "stepper", "label": "Quantity", "min": 0, "max": 99, "value": 0},
            "notes": {"kind": "form", "label": "Notes", "elements": [
                {"id": "main", "title": "Notes", "fields": [{"id": "text", "label": "Text", "type": "text", "maxLength": 200}]}]},
        },
    }},
}


def cpu_ns(pid: int) -> int:
    """Run time of every thread of `pid` so far, in nanoseconds."""
    total = 0
    for task in pathlib.Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass  # a thread that just ended
    return total


class Client:
    def __init__(self, port: int):
        # websocket-client checks the UTF-8 of every text frame in Python, at ~1 µs a byte: 20 ms for a 20 KB patch,
        # which measured this client, not the server. Python's own decoding checks it anyway.
        self.ws = websocket.create_connection(f"ws://127.0.0.1:{port}/ws", timeout=60, skip_utf8_validation=True)
        self.ws.recv()  # welcome
        self.next_id = 0
        self.ws.send(json.dumps({"type": "join", "room": "demo"}))
        while True:
            raw = self.ws.recv()
            if json.loads(raw)["type"] == "snapshot":
                self.snapshot_bytes = len(raw.encode())
                break

    def send_intent(self, control: str, intent: str, args: dict | None = None) -> int:
        self.next_id += 1
        self.ws.send(json.dumps({"type": "intent", "id": self.next_id, "room": "demo", "control": control,
                                 "intent": intent, "args": args or {}}))
        return self.next_id

    def reply(self, id: int) -> dict:
        while True:
            m = json.loads(self.ws.recv())
            if m.get("id") == id:
                return m

    def patch(self, version: int) -> str:
        """The raw `patch` at `version` (earlier ones are skipped)."""
        while True:
            raw = self.ws.recv()
            if json.loads(raw).get("version") == version:
                return raw


def timed(pid: int, actor: Client, watcher: Client, control: str, intent: str, args: dict | None = None):
    """One intent: ms until its ack and the watcher's copy of its patch, server CPU µs over that span, the ack and
    the patch as the watcher read it."""
    cpu, started = cpu_ns(pid), time.perf_counter()
    ack = actor.reply(actor.send_intent(control, intent, args))
    assert ack["type"] == "ack", ack
    raw = watcher.patch(ack["version"])
    return (time.perf_counter() - started) * 1e3, (cpu_ns(pid) - cpu) / 1e3, ack, raw


def measure(binary: pathlib.Path, repetitions: int, store: str) -> list[dict]:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(CONFIG, f)
    data = tempfile.TemporaryDirectory() if store in ("data-dir", "redis") else None
    redis = None
    flags: list[str] = []
    if store == "data-dir":
        flags = ["--data-dir", data.name]
    elif store == "redis":
        redis_port = free_port()
        redis = subprocess.Popen(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                                  "--dir", data.name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            if redis_cli(redis_port, "PING").strip() == "PONG":
                break
            time.sleep(0.05)
        flags = ["--redis", f"redis://127.0.0.1:{redis_port}", "--node-id", "solo"]
    try:
        proc, port = start_livecontrols(binary, *flags, config=f.name)
    except BaseException:
        pathlib.Path(f.name).unlink()
        if redis:
            redis.kill()
        raise
    rows = []
    try:
        actor, watcher = Client(port), Client(port)
        items = 0
        for target in SIZES:
            while items < target:
                ack = actor.reply(actor.send_intent("person", "append", {"value": {"name": NAME, "age": items}}))
                assert ack["type"] == "ack", ack
                watcher.patch(ack["version"])
                items += 1
            probe = Client(port)
            state_bytes = probe.snapshot_bytes
            probe.ws.close()
            runs: dict[str, list[float]] = {k: [] for k in ("appendMs", "appendCpu", "removeMs", "removeCpu", "stepMs", "stepCpu",
                                                            "setMs", "setCpu", "nextMs", "nextCpu", "patchBytes")}
            for i in range(repetitions):
                ms, cpu, _, raw = timed(proc.pid, actor, watcher, "person", "append", {"value": {"name": NAME, "age": -1}})
                runs["appendMs"].append(ms)
                runs["appendCpu"].append(cpu)
                runs["patchBytes"].append(len(raw.encode()))
                ms, cpu, _, _ = timed(proc.pid, actor, watcher, "person", "remove", {"id": appended_id(raw)})
                runs["removeMs"].append(ms)
                runs["removeCpu"].append(cpu)
                if items:
                    ms, cpu, _, _ = timed(proc.pid, actor, watcher, "person", "next" if i % 2 == 0 else "prev")
                    runs["stepMs"].append(ms)
                    runs["stepCpu"].append(cpu)
                ms, cpu, _, _ = timed(proc.pid, actor, watcher, "notes", "set", {"element": "main", "field": "text", "value": f"note {i}"})
                runs["setMs"].append(ms)
                runs["setCpu"].append(cpu)
                ms, cpu, _, _ = timed(proc.pid, actor, watcher, "quantity", "next" if i % 2 == 0 else "prev")
                runs["nextMs"].append(ms)
                runs["nextCpu"].append(cpu)
            rows.append({"items": items, "stateBytes": state_bytes, **{k: statistics.median(v) if v else 0.0 for k, v in runs.items()}})
    finally:
        proc.kill()
        proc.wait()
        pathlib.Path(f.name).unlink()
        if redis:
            redis.kill()
            redis.wait()
        if data:
            data.cleanup()
    return rows


def appended_id(patch_text: str) -> str:
    """The id of the item the append added, from the watcher's copy of its patch (an `add` of the item, or, from
    servers that send the whole section again, the last item of the replaced list; or a resync's snapshot)."""
    patch = json.loads(patch_text)
    if "ops" not in patch:  # a snapshot: the watcher fell behind and was resynced (a slow consumer)
        return patch["state"]["controls"]["person"]["sections"][-1]["items"][-1]["id"]
    for op in patch["ops"]:
        if "/controls/person/sections/" in op["path"] and op["op"] in ("add", "replace"):
            value = op["value"]
            return value[-1]["id"] if isinstance(value, list) else value["id"]
    raise RuntimeError(f"no item in {patch['ops']}")


def size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.0f} KB"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", type=pathlib.Path)
    ap.add_argument("--repetitions", type=int, default=20)
    ap.add_argument("--stores", default="memory,data-dir,redis", help="memory, data-dir, redis (comma-separated)")
    args = ap.parse_args()
    print("| server | store | items | state | list step: ms | CPU µs | append: ms | CPU µs | patch bytes | remove: ms | CPU µs "
          "| form set: ms | CPU µs | stepper next: ms | CPU µs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, binary in [("livecontrols", SERVER)] + ([("baseline", args.baseline)] if args.baseline else []):
        for store in args.stores.split(","):
            for r in measure(binary, args.repetitions, store):
                print(f"| {name} | {store} | {r['items']} | {size(r['stateBytes'])} | {r['stepMs']:.2f} | {r['stepCpu']:.0f} "
                      f"| {r['appendMs']:.2f} | {r['appendCpu']:.0f} | {int(r['patchBytes']):,} | {r['removeMs']:.2f} | {r['removeCpu']:.0f} "
                      f"| {r['setMs']:.2f} | {r['setCpu']:.0f} | {r['nextMs']:.2f} | {r['nextCpu']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
