#!/usr/bin/env python3
"""What durable acks cost: intent→ack latency and pipelined throughput, in memory vs with --data-dir.

Usage: python3 Benchmarks/persistence_cost.py [BINARY]   (default .build/release/livecontrols)
Prints a Markdown table; docs/benchmarks/HISTORY.md keeps the numbers of a run.
"""
import pathlib
import statistics
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "Tests" / "integration"))
import livecontrols_server  # noqa: E402
from livecontrols_server import Server  # noqa: E402

SEQUENTIAL = 3000
PIPELINED = 20000
WINDOW = 16


def measure(extra_args):
    server = Server("--rate", "1000000", "--burst", "1000000", "--log-level", "error", *extra_args).start()
    try:
        c = server.client()
        c.join()
        latencies = []
        for i in range(SEQUENTIAL):
            t = time.perf_counter()
            reply = c.intent("quantity", "set", {"value": i % 99})
            latencies.append((time.perf_counter() - t) * 1e6)
            assert reply["type"] == "ack"
            c.inbox.clear()  # patches are tracked in c.rooms; keep the buffer from growing
        latencies.sort()
        # Pipelined: WINDOW intents outstanding at a time.
        start = time.perf_counter()
        sent = acked = 0
        while acked < PIPELINED:
            while sent < PIPELINED and sent - acked < WINDOW:
                c.send({"type": "intent", "id": sent, "room": "demo", "control": "quantity", "intent": "set", "args": {"value": sent % 99}})
                sent += 1
            c.recv(lambda m: m["type"] == "ack")
            c.inbox.clear()
            acked += 1
        rate = PIPELINED / (time.perf_counter() - start)
        return statistics.median(latencies), latencies[int(len(latencies) * 0.99)], rate
    finally:
        server.stop()


def main():
    if len(sys.argv) > 1:
        livecontrols_server.BINARY = sys.argv[1]
    else:
        livecontrols_server.BINARY = str(livecontrols_server.REPO / ".build" / "release" / "livecontrols")
    rows = [("memory (no --data-dir)", measure([]))]
    with tempfile.TemporaryDirectory() as d:
        rows.append(("SQLite (--data-dir), ack after commit", measure(["--data-dir", d])))
    print(f"| store | ack latency p50 | ack latency p99 | acked intents/s, {WINDOW} outstanding |")
    print("|---|---|---|---|")
    for name, (p50, p99, rate) in rows:
        print(f"| {name} | {p50:.0f} µs | {p99:.0f} µs | {rate:,.0f} |")


if __name__ == "__main__":
    main()
