#!/usr/bin/env python3
"""Runs the load tool against LiveControls and the libwebsockets mirror baseline, interleaved, several
repetitions, and prints a Markdown report with medians (paste it into docs/BENCHMARKS.md).

Usage: python3 Benchmarks/compare.py [--repetitions 3] [--seconds 5] [--quick]
Needs: `libwebsockets-test-server` (Debian package libwebsockets-test-server), release builds of
`livecontrols` and of the tool (`swift build -c release --package-path Benchmarks`).
"""
import argparse
import json
import os
import pathlib
import platform
import re
import statistics
import subprocess
import sys
import time
import urllib.request

REPO = pathlib.Path(__file__).resolve().parents[1]
TOOL = REPO / "Benchmarks" / ".build" / "release" / "livecontrols-bench"
SERVER = REPO / ".build" / "release" / "livecontrols"


def start(cmd, ready):
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        match = ready(line)
        if match:
            return proc, match
        if proc.poll() is not None:
            break
    proc.kill()
    raise RuntimeError(f"{cmd[0]} did not start")


def start_livecontrols():
    proc, port = start([str(SERVER), "--port", "0", "--log-level", "error", "--rate", "1000000", "--burst", "1000000",
                        "--max-connections", "20000", "--config", str(REPO / "Benchmarks" / "bench-config.json")],
                       lambda line: (m := re.search(r"127\.0\.0\.1:(\d+)/", line)) and int(m.group(1)))
    return proc, port


def start_mirror(port=17681):
    proc = subprocess.Popen(["libwebsockets-test-server", f"--port={port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)  # the test server prints nothing machine-readable when ready; the tool retries its connects
    return proc, port


def run_tool(scenario, port, pid, mirror, extra):
    cmd = [str(TOOL), scenario, "--port", str(port), "--server-pid", str(pid), *extra] + (["--mirror"] if mirror else [])
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600).stdout.strip().splitlines()
    return json.loads(out[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--quick", action="store_true", help="tiny run (smoke test): N=20, 1 s, 1 repetition")
    args = ap.parse_args()
    runs = [("fanout", ["--subscribers", "100", "--window", "16"]), ("fanout", ["--subscribers", "1000", "--window", "16"]),
            ("fanout", ["--subscribers", "10000", "--window", "16"]), ("latency", ["--subscribers", "100"])]
    # LiveControls only: the mirror has no holds, and its idle numbers come from the same tool.
    solo = [("idle", ["--connections", "10000"]), ("hold", ["--subscribers", "1000", "--seconds", "10"]), ("churn", ["--cycles", "5000"])]
    if args.quick:
        args.repetitions, args.seconds = 1, 1
        runs = [("fanout", ["--subscribers", "20", "--window", "4"])]
        solo = []
    results = {}
    lc, lc_port = start_livecontrols()
    mirror, mirror_port = start_mirror()
    try:
        for rep in range(args.repetitions):
            for scenario, extra in runs:
                for name, proc, port in (("livecontrols", lc, lc_port), ("mirror", mirror, mirror_port)):
                    r = run_tool(scenario, port, proc.pid, name == "mirror", extra + ["--seconds", str(args.seconds)])
                    key = (scenario, " ".join(extra), name)
                    results.setdefault(key, []).append(r)
                    print(f"rep {rep + 1} {scenario} {' '.join(extra)} {name}: {r['deliveriesPerSecond']} /s, p99 {r['latencyMicros']['p99']} µs, lost {r['lost']}", file=sys.stderr)
            for scenario, extra in solo:
                r = run_tool(scenario, lc_port, lc.pid, False, extra + ["--template", "bench"])
                if scenario == "hold":  # the server's own record of how late its timers fired
                    text = urllib.request.urlopen(f"http://127.0.0.1:{lc_port}/metrics", timeout=5).read().decode()
                    metrics = dict(line.rsplit(" ", 1) for line in text.splitlines() if line and not line.startswith("#"))
                    r["serverLatenessMicros"] = {q: float(metrics[f'livecontrols_hold_tick_lateness_seconds{{quantile="{q}"}}']) * 1e6
                                                 for q in ("0.5", "0.99", "1")}
                results.setdefault((scenario, " ".join(extra), "livecontrols"), []).append(r)
                print(f"rep {rep + 1} {scenario}: {r}", file=sys.stderr)
    finally:
        lc.terminate()
        mirror.terminate()
    med = lambda rs, f: statistics.median(f(r) for r in rs)
    print(f"Machine: {os.cpu_count()} CPUs, {platform.platform()}; load tool on the same machine; "
          f"medians of {args.repetitions} interleaved repetitions of {args.seconds:g} s.\n")
    print("| scenario | server | deliveries/s | p50 µs | p90 µs | p99 µs | max µs | lost | server CPU µs/delivery | peak RSS KiB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (scenario, extra, name), rs in results.items():
        if scenario not in ("fanout", "latency"):
            continue
        print(f"| {scenario} {extra} | {name} | {med(rs, lambda r: r['deliveriesPerSecond']):,.0f} | "
              f"{med(rs, lambda r: r['latencyMicros']['p50']):,.0f} | {med(rs, lambda r: r['latencyMicros']['p90']):,.0f} | "
              f"{med(rs, lambda r: r['latencyMicros']['p99']):,.0f} | {med(rs, lambda r: r['latencyMicros']['max']):,.0f} | "
              f"{max(r['lost'] for r in rs)} | {med(rs, lambda r: r.get('serverCPUMicrosPerDelivery', 0)):.2f} | "
              f"{max(r.get('serverPeakRSSKiB', 0) for r in rs):,} |")
    for (scenario, extra, name), rs in results.items():
        if scenario == "idle":
            print(f"\nidle ({extra}, template without presence): connected in {med(rs, lambda r: r['seconds']):.2f} s (median), "
                  f"{med(rs, lambda r: r['rssKiBPerConnection']):.2f} KiB server RSS per connection")
        elif scenario == "hold":
            print(f"\nhold ({extra}, 100 ms interval): {med(rs, lambda r: r['ticks']):.0f} ticks, identical everywhere: "
                  f"{all(r['identical'] for r in rs)}; tick lateness at the clients p50 {med(rs, lambda r: r['latenessMicros']['p50']):,.0f} µs, "
                  f"p99 {med(rs, lambda r: r['latenessMicros']['p99']):,.0f} µs, max {med(rs, lambda r: r['latenessMicros']['max']):,.0f} µs; "
                  f"timer lateness in the server (/metrics) p50 {med(rs, lambda r: r['serverLatenessMicros']['0.5']):,.0f} µs, "
                  f"p99 {med(rs, lambda r: r['serverLatenessMicros']['0.99']):,.0f} µs, max {med(rs, lambda r: r['serverLatenessMicros']['1']):,.0f} µs")
        elif scenario == "churn":
            print(f"\nchurn ({extra}): RSS growth {med(rs, lambda r: r['rssGrowthKiB']):,.0f} KiB (median), "
                  f"holds left running: {any(r['leakedHold'] for r in rs)}")
    if any(r.get("lost", 0) for rs in results.values() for r in rs):
        sys.exit(1)


if __name__ == "__main__":
    main()
