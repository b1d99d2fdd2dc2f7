#!/usr/bin/env python3
"""A fader dragged at display rate while many watch (issue 35): one client sends `set` to a `range` at `--rates` a
second, `--subscribers` watch. Side by side in one run: the range as shipped (patches at most every 16 ms, the
default `minIntervalMs`) and the same range with `minIntervalMs` 0 (every set a patch, as a stepper's `set` would be).
For each: sets sent and acked, `rate_limited` refusals (the server keeps its default rate limit, 50 messages a second),
patches each watcher got, deliveries a second, the watchers' delay from a set's send to the patch that shows it
(p50/p99), whether every watcher ended on the last value, and the server's CPU per delivery.

    python3 Benchmarks/drag.py [--subscribers 1000] [--rates 60,120] [--seconds 5] [--repetitions 2] [--binary PATH]

Needs release builds of `livecontrols` and of the tool (`swift build -c release --package-path Benchmarks`).
Prints a Markdown table for docs/BENCHMARKS.md."""
import argparse
import json
import re
import statistics
import tempfile

import pathlib

from compare import SERVER, settle, shares_off, start
from scale import tool


DRAG_CONFIG = pathlib.Path(__file__).resolve().parent / "drag-config.json"


def run(binary, config, subscribers, rate, seconds):
    proc, port = start([str(binary), "--port", "0", "--log-level", "error", "--max-connections", str(subscribers + 100),
                        *shares_off(binary), "--config", str(config)],
                       lambda line: (m := re.search(r"127\.0\.0\.1:(\d+)/", line)) and int(m.group(1)))
    try:
        return tool(["drag", "--port", str(port), "--subscribers", str(subscribers), "--rate", str(rate),
                     "--seconds", str(seconds), "--server-pid", str(proc.pid)])
    finally:
        settle(proc.pid)
        proc.terminate()
        proc.wait(30)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--subscribers", type=int, default=1000)
    ap.add_argument("--rates", default="60,120")
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--repetitions", type=int, default=2)
    ap.add_argument("--binary", default=str(SERVER))
    args = ap.parse_args()
    base = json.loads(DRAG_CONFIG.read_text())
    variants = {}
    with tempfile.TemporaryDirectory() as tmp:
        for interval in (16, 0):
            config = json.loads(json.dumps(base))
            config["templates"]["drag"]["controls"]["fader"]["minIntervalMs"] = interval
            path = f"{tmp}/drag-{interval}.json"
            with open(path, "w") as f:
                json.dump(config, f)
            variants[f"minIntervalMs {interval}"] = path
        results = {}
        for rep in range(args.repetitions):
            for rate in (int(r) for r in args.rates.split(",")):
                for name, path in variants.items():
                    r = run(args.binary, path, args.subscribers, rate, args.seconds)
                    results.setdefault((rate, name), []).append(r)
                    print(f"rep {rep + 1} {rate}/s {name}: {json.dumps(r)}", flush=True)
    print(f"\n| drag, {args.subscribers:,} watching | sets (acked, rate_limited) | patches per watcher | deliveries/s | "
          "delay p50 | p99 | last value everywhere | server CPU per delivery |")
    print("|---|---|---|---|---|---|---|---|")
    for (rate, name), rs in results.items():
        def med(f):
            return statistics.median(f(r) for r in rs)
        print(f"| {rate}/s, {name} | {med(lambda r: r['sets']):.0f} ({med(lambda r: r['acks']):.0f}, {med(lambda r: r['rateLimited']):.0f}) | "
              f"{med(lambda r: r['patchesPerWatcher']):.0f} | {med(lambda r: r['deliveriesPerSecond']):,.0f} | "
              f"{med(lambda r: r['delayMicros']['p50']) / 1000:,.1f} ms | {med(lambda r: r['delayMicros']['p99']) / 1000:,.1f} ms | "
              f"{all(r['lastValueEverywhere'] for r in rs)} | {med(lambda r: r['serverCPUMicrosPerDelivery']):.2f} µs |")


if __name__ == "__main__":
    main()
