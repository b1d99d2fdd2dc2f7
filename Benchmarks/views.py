#!/usr/bin/env python3
"""The new kinds' fan-out against a stepper's (issue 35): to `--subscribers`, side by side in one run on one server
build and one room (`views-config.json`: a stepper, a poll, a text). The driver keeps `--window` intents outstanding:
`set` on the stepper (every subscriber gets the same patch, encoded once); `vote`/`unvote` in turn on the poll (two
views per patch: the voter's, with its ballot, and everyone else's, with the count only; each encoded once); or a
`splice` on the text (a character typed at offset 10, every 64th splice 63 deleted at the start, so it stays 64–127 characters; each transformed against the splices still in flight).
For each: deliveries a second, latency p50/p99 from send to arrival, the message's size, server CPU per delivery.
Repetitions alternate them.

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
        for intent in ("set", "vote", "splice"):
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
    names = {"set": "stepper `set` (one view)", "vote": "poll `vote`/`unvote` (two views)", "splice": "text `splice` (transformed; one view)"}
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
