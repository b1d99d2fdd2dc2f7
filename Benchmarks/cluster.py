#!/usr/bin/env python3
"""Cluster mode against one node: runs the load tool, interleaved, several repetitions, against
  (a) one node alone (no Redis), (b) one node in cluster mode (Redis in the path), (c) two nodes on one Redis,
  subscribers spread round-robin over both (node 0 joins first and owns the room; the driver is on node 1),
and prints medians as Markdown (paste into docs/benchmarks/HISTORY.md).

Usage: python3 Benchmarks/cluster.py [--repetitions 3] [--seconds 5] [--quick] [--json FILE]
Needs: `redis-server` on PATH, release builds of `livecontrols` and of the tool. Redis runs without
persistence (`--save '' --appendonly no`): the benchmark measures the path, not the disk.
"""
import argparse
import json
import os
import pathlib
import platform
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from compare import REPO, SERVER, shares_off, TOOL, settle, start

CONFIG = REPO / "Benchmarks" / "bench-config.json"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_node(*extra):
    return start([str(SERVER), "--port", "0", "--log-level", "error", "--rate", "1000000", "--burst", "1000000", *shares_off(),
                  "--max-connections", "20000", "--config", str(CONFIG), *extra],
                 lambda line: (m := re.search(r"127\.0\.0\.1:(\d+)/", line)) and int(m.group(1)))


def redis_cli(port, *args):
    return subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True, text=True, timeout=10).stdout


def commandstats(port):
    """{command: (calls, usec_per_call)} from INFO commandstats."""
    stats = {}
    for line in redis_cli(port, "INFO", "commandstats").splitlines():
        if m := re.match(r"cmdstat_(\w+):calls=(\d+),usec=\d+,usec_per_call=([\d.]+)", line):
            stats[m.group(1)] = (int(m.group(2)), float(m.group(3)))
    return stats


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--quick", action="store_true", help="tiny run (smoke): N=20, 1 s, 1 repetition")
    ap.add_argument("--json", type=pathlib.Path, help="also write every run's raw result here")
    args = ap.parse_args()
    runs = [("fanout", ["--subscribers", "1000", "--window", "16"]), ("fanout", ["--subscribers", "100", "--window", "16"]),
            ("latency", ["--subscribers", "100"])]
    if args.quick:
        args.repetitions, args.seconds = 1, 1
        runs = [("fanout", ["--subscribers", "20", "--window", "4"]), ("latency", ["--subscribers", "20"])]
    tmp = tempfile.TemporaryDirectory()
    redis_port = free_port()
    redis = subprocess.Popen(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                              "--dir", tmp.name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    procs = [redis]
    try:
        for _ in range(100):
            if redis_cli(redis_port, "PING").strip() == "PONG":
                break
            time.sleep(0.05)
        url = f"redis://127.0.0.1:{redis_port}"
        single, single_port = start_node()
        procs.append(single)
        one, one_port = start_node("--redis", url, "--redis-prefix", "one:", "--node-id", "solo", "--lease-ms", "3000")
        procs.append(one)
        node_a, port_a = start_node("--redis", url, "--redis-prefix", "two:", "--node-id", "a", "--lease-ms", "3000")
        procs.append(node_a)
        node_b, port_b = start_node("--redis", url, "--redis-prefix", "two:", "--node-id", "b", "--lease-ms", "3000")
        procs.append(node_b)
        setups = [("(a) one node, no Redis", ["--port", str(single_port), "--server-pid", str(single.pid)], False),
                  ("(b) one node + Redis", ["--ports", str(one_port), "--server-pid", str(one.pid), "--redis-pid", str(redis.pid),
                                            "--driver-node", "0", "--thread-split"], True),
                  ("(c) two nodes + Redis", ["--ports", f"{port_a},{port_b}", "--server-pid", f"{node_a.pid},{node_b.pid}",
                                             "--redis-pid", str(redis.pid), "--driver-node", "1", "--thread-split"], True)]
        all_pids = [p.pid for p in procs]
        results = {}
        for rep in range(args.repetitions):
            for scenario, extra in runs:
                for name, target, clustered in setups:
                    settle(*all_pids)
                    if clustered:
                        redis_cli(redis_port, "CONFIG", "RESETSTAT")
                    cmd = [str(TOOL), scenario, *target, *extra, "--template", "bench", "--seconds", str(args.seconds)]
                    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600).stdout.strip().splitlines()
                    r = json.loads(out[-1])
                    if clustered:
                        r["redisCommandStats"] = commandstats(redis_port)
                    results.setdefault((f"{scenario} {' '.join(extra)}", name), []).append(r)
                    print(f"rep {rep + 1} {scenario} {' '.join(extra)} {name}: {r['deliveriesPerSecond']} /s, "
                          f"p50 {r['latencyMicros']['p50']} µs, p99 {r['latencyMicros']['p99']} µs, lost {r['lost']}", file=sys.stderr)
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            p.wait(timeout=10)
        tmp.cleanup()
    med = lambda rs, f: statistics.median(f(r) for r in rs)
    note = (f"Machine: {os.cpu_count()} CPUs, {platform.platform()}; load tool, Redis and every node on the same machine; "
            f"Redis without persistence; medians of {args.repetitions} interleaved repetitions of {args.seconds:g} s.")
    if args.json:
        args.json.write_text(json.dumps({"note": note, "results": {"|".join(k): v for k, v in results.items()}}, indent=1))
    print(note + "\n")
    print("| scenario | setup | deliveries/s | intents/s | p50 µs | p90 µs | p99 µs | max µs | lost | server CPU µs/delivery | Redis CPU µs/delivery |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (scenario, name), rs in results.items():
        redis_cpu = f"{med(rs, lambda r: r['cluster']['redisCPUMicrosPerDelivery']):.2f}" if "cluster" in rs[0] else "–"
        print(f"| {scenario} | {name} | {med(rs, lambda r: r['deliveriesPerSecond']):,.0f} | {med(rs, lambda r: r['sent'] / r['seconds']):,.0f} | "
              f"{med(rs, lambda r: r['latencyMicros']['p50']):,.0f} | {med(rs, lambda r: r['latencyMicros']['p90']):,.0f} | "
              f"{med(rs, lambda r: r['latencyMicros']['p99']):,.0f} | {med(rs, lambda r: r['latencyMicros']['max']):,.0f} | "
              f"{max(r['lost'] for r in rs)} | {med(rs, lambda r: r.get('serverCPUMicrosPerDelivery', 0)):.2f} | {redis_cpu} |")
    print("\nCPU over the run, in cores (CPU seconds ÷ run seconds), medians; the rest of 2 cores is idle or other work:\n")
    print("| scenario | setup | node 0 (owner) | node 1 | redis-server | load tool | sum |")
    print("|---|---|---|---|---|---|---|")
    for (scenario, name), rs in results.items():
        if "cluster" not in rs[0]:
            continue
        def cores(r, i):
            c = r["cluster"]
            values = list(c["serverCPUSecondsByPid"].values())
            parts = values + [0] * (2 - len(values)) + [c["redisCPUSeconds"], c["toolCPUSeconds"]]
            return parts[i] / r["seconds"] if i < 4 else sum(parts) / r["seconds"]
        print(f"| {scenario} | {name} | " + " | ".join(f"{med(rs, lambda r, i=i: cores(r, i)):.2f}" for i in range(5)) + " |")
    print("\nRedis INFO commandstats per run (medians): calls per intent and µs per call inside Redis (commands a "
          "script runs are counted too, and inside evalsha's time):\n")
    for (scenario, name), rs in results.items():
        if "cluster" not in rs[0]:
            continue
        cmds = sorted({c for r in rs for c in r["redisCommandStats"]})
        parts = []
        for c in cmds:
            if c in ("config", "info", "ping"):
                continue
            calls = med(rs, lambda r: r["redisCommandStats"].get(c, (0, 0))[0] / max(r["sent"], 1))
            if calls < 0.01:  # lease renewals, liveness keys: not per intent
                continue
            usec = med(rs, lambda r: r["redisCommandStats"].get(c, (0, 0))[1])
            parts.append(f"{c} {calls:.2f}/intent at {usec:.1f} µs")
        print(f"- {scenario}, {name}: " + "; ".join(parts))
    print()
    for scenario in dict.fromkeys(s for s, _ in results):
        get = lambda name: results.get((scenario, name))
        a, b, c = get(setups[0][0]), get(setups[1][0]), get(setups[2][0])
        if a and b and c:
            d = lambda rs: med(rs, lambda r: r["deliveriesPerSecond"])
            p = lambda rs: med(rs, lambda r: r["latencyMicros"]["p50"])
            print(f"- {scenario}: two nodes ÷ one node alone = {d(c) / d(a):.2f}, two nodes ÷ one node + Redis = {d(c) / d(b):.2f}; "
                  f"p50 +{p(b) - p(a):,.0f} µs with Redis in the path, +{p(c) - p(a):,.0f} µs with two nodes")
    if any(r.get("lost", 0) or r.get("errors", 0) for rs in results.values() for r in rs):
        sys.exit(1)


if __name__ == "__main__":
    main()
