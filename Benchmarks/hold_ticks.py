#!/usr/bin/env python3
"""One hold in a room of many subscribers (issue #18: 10,000, 100 ms ticks for 10 s): how late the server's timers
fire (its /metrics histogram), how late the ticks reach the clients, and whether every client saw the same ticks.
Builds given with --binary (and --baseline) run interleaved, `--repetitions` times each, in one run.

    python3 Benchmarks/hold_ticks.py [--subscribers 10000] [--repetitions 3] [--binary PATH] [--baseline PATH]
                                     [--also NAME=PATH …] [--intents-per-second N]

With --intents-per-second, another client sends that many `next` intents a second to the room during the hold: a busy
room, whose fan-out can leave the server's writing behind (the room then pauses, `livecontrols_room_pauses_total`).

Needs release builds of `livecontrols` and of the tool (`swift build -c release --package-path Benchmarks`).
Prints a Markdown table for docs/benchmarks/HISTORY.md."""
import argparse
import statistics

from compare import SERVER
from scale import run_hold, source_addresses


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--subscribers", type=int, default=10_000)
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--intents-per-second", type=int, default=0)
    ap.add_argument("--binary", default=str(SERVER))
    ap.add_argument("--baseline", help="another build of livecontrols, run interleaved with --binary")
    ap.add_argument("--also", action="append", default=[], metavar="NAME=PATH",
                    help="more builds (or a wrapper that runs one another way) to interleave, each named")
    args = ap.parse_args()
    builds = [("this build", args.binary)] + ([("baseline", args.baseline)] if args.baseline else [])
    builds += [tuple(item.split("=", 1)) for item in args.also]
    sources = source_addresses(args.subscribers)
    results = {name: [] for name, _ in builds}
    for rep in range(args.repetitions):
        for name, binary in builds:
            hold = run_hold(binary, args.subscribers, args.seconds, sources, args.intents_per_second)
            results[name].append(hold)
            s = hold["serverLatenessMicros"]
            print(f"rep {rep + 1} {name}: {hold['ticks']} ticks, identical {hold['identical']}, server p50 {s['0.5']:.0f} µs "
                  f"p99 {s['0.99']:.0f} µs max ≤ {s['1']:.0f} µs; clients p50 {hold['latenessMicros']['p50']} µs "
                  f"p99 {hold['latenessMicros']['p99']} µs; room pauses {hold['pauses']}", flush=True)
    print(f"\n| build | ticks | identical everywhere | server-side lateness p50 | p99 | max ≤ | at the clients p50 | p99 | room pauses |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, rs in results.items():
        def med(f):
            return statistics.median(f(r) for r in rs)
        print(f"| {name} | {med(lambda r: r['ticks']):.0f} | {all(r['identical'] for r in rs)} | "
              f"{med(lambda r: r['serverLatenessMicros']['0.5']):,.0f} µs | {med(lambda r: r['serverLatenessMicros']['0.99']):,.0f} µs | "
              f"{med(lambda r: r['serverLatenessMicros']['1']):,.0f} µs | {med(lambda r: r['latenessMicros']['p50']) / 1000:,.1f} ms | "
              f"{med(lambda r: r['latenessMicros']['p99']) / 1000:,.1f} ms | {med(lambda r: r['pauses']):.0f} |")


if __name__ == "__main__":
    main()
