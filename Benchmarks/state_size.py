#!/usr/bin/env python3
"""What an intent costs as a room's state grows (issue #18: a change should cost what it changes).

    python3 Benchmarks/state_size.py [--baseline OLD_BINARY] [--repetitions 20]

One client in the demo room fills the `person` list with items of 60,000 characters (0 … 80 items: up to ~4.8 MB
of state), and at each size times, from its own `intent` to its `ack` (the ack leaves once the change is applied
and its patch has gone out to the room): an `append` of one more such item then its `remove` (the state stays the
same size), and a stepper `next` elsewhere in the room. A second client in the room receives every patch: its
bytes per append show what each change sends. Medians of `--repetitions`.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import re
import statistics
import time

import websocket

from compare import SERVER, shares_off, start

ITEM = "x" * 60000


def start_server(binary: pathlib.Path):
    return start([str(binary), "--port", "0", "--log-level", "error", "--rate", "100000", "--burst", "100000", *shares_off(binary)],
                 lambda line: (m := re.search(r"127\.0\.0\.1:(\d+)/", line)) and int(m.group(1)))


class Client:
    def __init__(self, port: int):
        self.ws = websocket.create_connection(f"ws://127.0.0.1:{port}/ws", timeout=60)
        self.ws.recv()  # welcome
        self.next_id = 0
        self.ws.send(json.dumps({"type": "join", "room": "demo"}))
        while json.loads(self.ws.recv())["type"] != "snapshot":
            pass

    def intent(self, control: str, intent: str, args: dict | None = None) -> tuple[float, dict]:
        self.next_id += 1
        started = time.perf_counter()
        self.ws.send(json.dumps({"type": "intent", "id": self.next_id, "room": "demo", "control": control, "intent": intent,
                                 "args": args or {}}))
        while True:
            m = json.loads(self.ws.recv())
            if m.get("id") == self.next_id:
                return (time.perf_counter() - started) * 1e3, m


def measure(binary: pathlib.Path, repetitions: int) -> list[dict]:
    proc, port = start_server(binary)
    rows = []
    try:
        actor, watcher = Client(port), Client(port)
        items = 0
        for target in (0, 10, 20, 40, 80):
            while items < target:
                _, ack = actor.intent("person", "append", {"value": {"name": ITEM, "age": items}})
                assert ack["type"] == "ack", ack
                items += 1
            watcher.ws.settimeout(0.2)
            try:
                while True:
                    watcher.ws.recv()
            except websocket.WebSocketTimeoutException:
                pass
            watcher.ws.settimeout(60)
            appends, removes, nexts, patch_bytes = [], [], [], []
            lost = False
            for i in range(repetitions):
                ms, ack = actor.intent("person", "append", {"value": {"name": ITEM, "age": -1}})
                appends.append(ms)
                try:
                    raw = watcher.ws.recv()
                except websocket.WebSocketConnectionClosedException:
                    print(f"| (the watcher was dropped at {items} items: a slow consumer of the patches) |", flush=True)
                    lost = True
                    break
                while True:  # the watcher's copy of that patch
                    if json.loads(raw).get("version") == ack["version"]:
                        patch_bytes.append(len(raw))
                        break
                    raw = watcher.ws.recv()
                ms, removed = actor.intent("person", "remove", {"id": appended_id(raw)})
                assert removed["type"] == "ack", removed
                removes.append(ms)
                ms, _ = actor.intent("quantity", "next" if i % 2 == 0 else "prev")
                nexts.append(ms)
            if lost:
                break
            rows.append({"items": items, "stateMB": round(items * 60000 / 1e6, 1), "appendMs": statistics.median(appends),
                         "removeMs": statistics.median(removes), "nextMs": statistics.median(nexts),
                         "appendPatchBytes": int(statistics.median(patch_bytes))})
    finally:
        proc.kill()
        proc.wait()
    return rows


def appended_id(patch_text: str) -> str:
    """The id of the item the append added, from the watcher's copy of its patch (an `add` of the item, or, from
    servers that send the whole section again, the last item of the replaced list)."""
    patch = json.loads(patch_text)
    if "ops" not in patch:  # a snapshot: the watcher fell behind and was resynced (slow consumer)
        return patch["state"]["controls"]["person"]["sections"][-1]["items"][-1]["id"]
    for op in patch["ops"]:
        if "/controls/person/sections/" in op["path"] and op["op"] in ("add", "replace"):
            value = op["value"]
            return value[-1]["id"] if isinstance(value, list) else value["id"]
    raise RuntimeError(f"no item in {patch['ops']}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", type=pathlib.Path)
    ap.add_argument("--repetitions", type=int, default=20)
    args = ap.parse_args()
    print("| server | items (state) | append ack ms | patch bytes per append | remove ack ms | stepper next ack ms |")
    print("|---|---|---|---|---|---|")
    for name, binary in [("livecontrols", SERVER)] + ([("baseline", args.baseline)] if args.baseline else []):
        for r in measure(binary, args.repetitions):
            print(f"| {name} | {r['items']} ({r['stateMB']} MB) | {r['appendMs']:.2f} | {r['appendPatchBytes']:,} "
                  f"| {r['removeMs']:.2f} | {r['nextMs']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
