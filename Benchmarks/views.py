#!/usr/bin/env python3
"""Per-member views against one shared view (issue 35): fan-out to `--subscribers` of a poll's private votes against
a stepper's `set`, side by side in one run on one server build and one room (`views-config.json`: a stepper and a
poll). The driver keeps `--window` intents outstanding: `set` on the stepper (every subscriber gets the same patch,
encoded once), or `vote`/`unvote` in turn on the poll (two views per patch: the voter's, with its ballot, and
everyone else's, with the count only; each encoded once). For each: deliveries a second, latency p50/p99 from send
to arrival, the message's size, server CPU per delivery. Repetitions alternate the two.

    python3 Benchmarks/views.py [--subscribers 1000] [--window 16] [--seconds 5] [--repetitions 3] [--binary PATH]

Needs release builds of `livecontrols` and of the tool (`swift build -c release --package-path Benchmarks`).
Prints a Markdown table for docs/BENCHMARKS.md."""
import argparse
import json
import pathlib
import statistics

from compare import SERVER, run_tool, settle, start_livecontrols

CONFIG = pathlib.Path(__file__).resolve().parent / "views-config.json"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--subscribers", type=int, default=1000)
    ap.add_argument("--window", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--binary", default=str(SERVER))
    args = ap.parse_args()
    results = {}
    for rep in range(args.repetitions):
        for intent in ("set", "vote"):
            proc, port = start_livecontrols(args.binary, config=CONFIG, max_connections=args.subscribers + 100)
            try:
                r = run_tool("fanout", port, proc.pid, False, ["--subscribers", str(args.subscribers), "--window", str(args.window),
                                                                "--seconds", str(args.seconds), "--intent", intent])
            finally:
                settle(proc.pid)
                proc.terminate()
                proc.wait(30)
            results.setdefault(intent, []).append(r)
            print(f"rep {rep + 1} {intent}: {json.dumps(r)}", flush=True)
    names = {"set": "stepper `set` (one view)", "vote": "poll `vote`/`unvote` (two views)"}
    print(f"\n| {args.subscribers:,} subscribers, window {args.window} | deliveries/s | latency p50 | p99 | message bytes | lost | server CPU per delivery |")
    print("|---|---|---|---|---|---|---|")
    for intent, rs in results.items():
        def med(f):
            return statistics.median(f(r) for r in rs)
        print(f"| {names[intent]} | {med(lambda r: r['deliveriesPerSecond']):,.0f} | {med(lambda r: r['latencyMicros']['p50']) / 1000:,.1f} ms | "
              f"{med(lambda r: r['latencyMicros']['p99']) / 1000:,.1f} ms | {med(lambda r: r['messageBytes']):.0f} | {med(lambda r: r['lost']):.0f} | "
              f"{med(lambda r: r['serverCPUMicrosPerDelivery']):.2f} µs |")


if __name__ == "__main__":
    main()
