#!/usr/bin/env python3
"""Room churn: rounds of N rooms, each created by a join and left at once, against a server that unloads idle
rooms (`--room-idle-seconds 1`) and one that keeps them (`0`). Prints loaded rooms and server RSS after each
round and after the idle time; a Markdown table at the end (docs/benchmarks/HISTORY.md, "Room churn").

Usage: python3 Benchmarks/room_churn.py [--rooms 10000] [--rounds 3]
Needs the release build of `livecontrols` and the Python package `websocket-client` (the test suite's).
"""
import argparse
import json
import re
import time
import urllib.request

import websocket

from compare import REPO, SERVER, start_livecontrols

CONFIG = REPO / "Benchmarks" / "bench-config.json"


def start_server(idle_seconds: int):
    return start_livecontrols(SERVER, "--max-rooms", "1000000", "--room-idle-seconds", str(idle_seconds), config=CONFIG)


def rss_kib(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def loaded_rooms(port: int) -> int:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    return int(float(re.search(r"^livecontrols_rooms (\S+)$", text, re.M).group(1)))


def churn(port: int, prefix: str, rooms: int, batch: int = 500) -> float:
    """Joins and leaves `rooms` new rooms over one connection, `batch` at a time; returns the seconds taken."""
    ws = websocket.create_connection(f"ws://127.0.0.1:{port}/ws", timeout=30)
    ws.recv()  # welcome
    start = time.monotonic()
    for first in range(0, rooms, batch):
        names = [f"{prefix}-{i}" for i in range(first, min(rooms, first + batch))]
        for name in names:
            ws.send(json.dumps({"type": "join", "room": name}))
            ws.send(json.dumps({"type": "leave", "room": name}))
        left = 0
        while left < len(names):
            msg = json.loads(ws.recv())
            if msg["type"] == "left":
                left += 1
            elif msg["type"] == "error":
                raise RuntimeError(msg)
    seconds = time.monotonic() - start
    ws.close()
    return seconds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rooms", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--idle-only", action="store_true", help="only the server that unloads rooms")
    args = ap.parse_args()
    rows = []
    for idle in ((1,) if args.idle_only else (1, 0)):
        proc, port = start_server(idle)
        try:
            base = rss_kib(proc.pid)
            for r in range(1, args.rounds + 1):
                seconds = churn(port, f"round{r}", args.rooms)
                after_round = (loaded_rooms(port), rss_kib(proc.pid))
                time.sleep(idle + 1.5 if idle else 1.5)  # let the sweep (once a second) unload them
                settled = (loaded_rooms(port), rss_kib(proc.pid))
                rows.append((idle, r, seconds, *after_round, *settled, settled[1] - base))
                print(f"--room-idle-seconds {idle} round {r}: {args.rooms} rooms in {seconds:.1f} s; loaded {after_round[0]}, "
                      f"RSS {after_round[1]} KiB; after the idle time loaded {settled[0]}, RSS {settled[1]} KiB "
                      f"(+{settled[1] - base} KiB since start)", flush=True)
        finally:
            proc.terminate()
            proc.wait(10)
    print(f"\n| `--room-idle-seconds` | round ({args.rooms:,} new rooms each) | seconds | loaded rooms after the round | "
          f"RSS KiB | loaded rooms 1.5 s after the idle time | RSS KiB | RSS growth since start KiB |")
    print("|---|---|---|---|---|---|---|---|")
    for idle, r, seconds, rooms1, rss1, rooms2, rss2, growth in rows:
        print(f"| {idle} | {r} | {seconds:.1f} | {rooms1:,} | {rss1:,} | {rooms2:,} | {rss2:,} | {growth:,} |")


if __name__ == "__main__":
    main()
