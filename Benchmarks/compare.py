#!/usr/bin/env python3
"""Runs the load tool against LiveControls, uWebSockets (socketify, a pub/sub relay: `uws_relay.py`) and the
libwebsockets mirror, interleaved, several repetitions, and prints a Markdown report with medians: the summary at the
top of docs/BENCHMARKS.md comes from it (the full report goes into docs/benchmarks/HISTORY.md).

Usage: python3 Benchmarks/compare.py [--repetitions 3] [--seconds 5] [--quick] [--only SCENARIO ...]
                                     [--json Benchmarks/results.json] [--svg docs/benchmarks.svg]
                                     [--baseline PATH/TO/older/livecontrols] [--uws-bytes N]
       python3 Benchmarks/compare.py --plot-from results.json [--svg docs/benchmarks.svg]
Needs: `libwebsockets-test-server` (Debian package libwebsockets-test-server, found on PATH), release builds of
`livecontrols` and of the tool (`swift build -c release --package-path Benchmarks`); socketify (uWebSockets) is
installed from PyPI by the script when missing.

With --baseline, an older `livecontrols` binary (built from an earlier commit, e.g. in a `git worktree`) runs as a
third server, "baseline", interleaved with the others in every scenario: a before/after check of a change in one run.

uWebSockets relays the load tool's message, a number of a few bytes; LiveControls sends a versioned patch of ~240
bytes (the tables' "msg B" column). With --uws-bytes N a second uWebSockets, "uws-NB", relays messages padded to N
bytes, so the same run shows how much of a difference is the message's size.

Before every run the script waits until both servers are quiet (their CPU time stops growing), so a
scenario never pays for the teardown of the previous one (10,000 closes take the server a while).
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

from plot import write_svg

REPO = pathlib.Path(__file__).resolve().parents[1]
TOOL = REPO / "Benchmarks" / ".build" / "release" / "livecontrols-bench"
SERVER = REPO / ".build" / "release" / "livecontrols"


def shares_off(binary=SERVER):
    """Flags that lift the per-address shares (every load-tool socket comes from 127.0.0.1), for binaries that have
    them (an older --baseline may not)."""
    flags = ["--max-connections-per-address", "0", "--room-creations-per-minute", "0"]
    usage = subprocess.run([str(binary), "serve", "--help"], capture_output=True, text=True).stdout
    return flags if flags[0] in usage else []


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


BENCH_CONFIG = REPO / "Benchmarks" / "bench-config.json"


def start_livecontrols(binary=SERVER, *flags: str, config=BENCH_CONFIG, max_connections: int = 20_000):
    """A LiveControls server on a free port, without rate limits or per-address shares, on `config`, with `flags`
    added; returns the process and its port."""
    return start([str(binary), "--port", "0", "--log-level", "error", "--rate", "1000000", "--burst", "1000000",
                  "--max-connections", str(max_connections), *shares_off(binary), "--config", str(config), *flags],
                 lambda line: (m := re.search(r"127\.0\.0\.1:(\d+)/", line)) and int(m.group(1)))


def start_uws(port=17682):
    """uWebSockets through socketify (installed here when missing): every message published to every connection."""
    try:
        import socketify  # noqa: F401
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "socketify"], check=True)
    return start([sys.executable, str(REPO / "Benchmarks" / "uws_relay.py"), str(port)],
                 lambda line: line.startswith("listening on") and port)


def start_mirror(port=17681):
    proc = subprocess.Popen(["libwebsockets-test-server", f"--port={port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)  # the test server prints nothing machine-readable when ready; the tool retries its connects
    return proc, port


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def settle(*pids, quiet_ticks=2, window=0.3, timeout=30):
    """Waits until each server used less than `quiet_ticks` clock ticks of CPU over `window` seconds."""
    deadline = time.monotonic() + timeout
    for pid in pids:
        while time.monotonic() < deadline:
            before = cpu_ticks(pid)
            time.sleep(window)
            if cpu_ticks(pid) - before < quiet_ticks:
                break


def histogram_quantiles(text, name, qs):
    """Quantiles (seconds) of the Prometheus histogram `name` in `text`, interpolated in their bucket as
    PromQL's histogram_quantile does; q = 1 gives the upper bound of the highest bucket in use (the max is at
    most that). A quantile past the last finite bound gives that bound."""
    buckets = sorted((float(m.group(1)), int(m.group(2)))
                     for m in re.finditer(rf'^{name}_bucket{{le="([^"]+)"}} (\d+)$', text, re.M))
    count = buckets[-1][1]

    def quantile(q):
        rank, lower, below = q * count, 0.0, 0
        for upper, cumulative in buckets:
            if cumulative >= rank and cumulative > below:
                if upper == float("inf"):
                    return lower
                return upper if q == 1 else lower + (upper - lower) * (rank - below) / (cumulative - below)
            lower, below = upper, cumulative
        return lower

    return {q: quantile(float(q)) for q in qs}


def run_tool(scenario, port, pid, mirror, extra):
    cmd = [str(TOOL), scenario, "--port", str(port), "--server-pid", str(pid), *extra] + (["--mirror"] if mirror else [])
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600).stdout.strip().splitlines()
    return json.loads(out[-1])


def server_lateness(text):
    """Hold-tick lateness quantiles (µs) from /metrics: the histogram's (`histogram_quantiles`), or the quantiles
    of the summary that releases before the histogram exported (a `--baseline` binary may be one)."""
    name = "livecontrols_hold_tick_lateness_seconds"
    metrics = dict(line.rsplit(" ", 1) for line in text.splitlines() if line and not line.startswith("#"))
    if f'{name}{{quantile="0.5"}}' in metrics:
        return {q: float(metrics[f'{name}{{quantile="{q}"}}']) * 1e6 for q in ("0.5", "0.99", "1")}
    return {q: v * 1e6 for q, v in histogram_quantiles(text, name, ("0.5", "0.99", "1")).items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--quick", action="store_true", help="tiny run (smoke test): N=20, 1 s, 1 repetition")
    ap.add_argument("--only", nargs="+", metavar="SCENARIO", help="run only these scenarios (fanout, latency, idle, hold, churn)")
    ap.add_argument("--json", type=pathlib.Path, help="also write every run's raw result here")
    ap.add_argument("--svg", type=pathlib.Path, help="where to write the plot (default: docs/benchmarks.svg after a full run; "
                    "--quick and --only runs write none unless asked)")
    ap.add_argument("--plot-from", type=pathlib.Path, help="no runs: plot the results a previous --json wrote")
    ap.add_argument("--baseline", type=pathlib.Path, help="an older livecontrols binary, run as a third server ('baseline')")
    ap.add_argument("--uws-bytes", type=int, metavar="N", help="also run uWebSockets relaying messages padded to N bytes ('uws-NB')")
    args = ap.parse_args()
    if args.svg is None and not (args.quick or args.only):
        args.svg = REPO / "docs" / "benchmarks.svg"
    if args.plot_from:
        args.svg = args.svg or REPO / "docs" / "benchmarks.svg"
        saved = json.loads(args.plot_from.read_text())
        write_svg(args.svg, {tuple(k.split("|")): v for k, v in saved["results"].items()}, saved["note"])
        return
    runs = [("fanout", ["--subscribers", "100", "--window", "16"]), ("fanout", ["--subscribers", "1000", "--window", "16"]),
            ("fanout", ["--subscribers", "10000", "--window", "16"]), ("latency", ["--subscribers", "100"])]
    # LiveControls only: the relays have no holds, and their idle numbers come from the same tool.
    solo = [("idle", ["--connections", "10000"]), ("hold", ["--subscribers", "1000", "--seconds", "10"]), ("churn", ["--cycles", "5000"])]
    if args.quick:
        args.repetitions, args.seconds = 1, 1
        runs = [("fanout", ["--subscribers", "20", "--window", "4"])]
        solo = []
    if args.only:
        runs = [r for r in runs if r[0] in args.only]
        solo = [r for r in solo if r[0] in args.only]
    results = {}
    lc, lc_port = start_livecontrols()
    mirror, mirror_port = start_mirror()
    uws, uws_port = start_uws()
    servers = [("livecontrols", lc, lc_port), ("uws", uws, uws_port), ("mirror", mirror, mirror_port)]
    # Relays speak the mirror's protocol (a message is a number, echoed to every connection); these are their flags.
    relays = {"mirror": ["--mirror"], "uws": ["--mirror"]}
    if args.uws_bytes:
        sized, sized_port = start_uws(port=17683)
        servers.append((f"uws-{args.uws_bytes}B", sized, sized_port))
        relays[f"uws-{args.uws_bytes}B"] = ["--mirror", "--mirror-bytes", str(args.uws_bytes)]
    if args.baseline:
        base, base_port = start_livecontrols(args.baseline)
        servers.append(("baseline", base, base_port))
    pids = [proc.pid for _, proc, _ in servers]
    try:
        for rep in range(args.repetitions):
            # Every other repetition runs the servers in the opposite order, so no server always goes first
            # (right after the previous scenario's teardown) or last.
            order = servers if rep % 2 == 0 else servers[::-1]
            for scenario, extra in runs:
                for name, proc, port in order:
                    settle(*pids)
                    r = run_tool(scenario, port, proc.pid, False, extra + ["--seconds", str(args.seconds)] + relays.get(name, []))
                    key = (scenario, " ".join(extra), name)
                    results.setdefault(key, []).append(r)
                    print(f"rep {rep + 1} {scenario} {' '.join(extra)} {name}: {r['deliveriesPerSecond']} /s, p99 {r['latencyMicros']['p99']} µs, lost {r['lost']}", file=sys.stderr)
            for scenario, extra in solo:
                for name, proc, port in order:
                    if name in relays:
                        continue
                    settle(*pids)
                    r = run_tool(scenario, port, proc.pid, False, extra + ["--template", "bench"])
                    if scenario == "hold":  # the server's own record of how late its timers fired
                        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
                        r["serverLatenessMicros"] = server_lateness(text)
                    results.setdefault((scenario, " ".join(extra), name), []).append(r)
                    print(f"rep {rep + 1} {scenario} {name}: {r}", file=sys.stderr)
    finally:
        for _, proc, _ in servers:
            proc.terminate()
    med = lambda rs, f: statistics.median(f(r) for r in rs)
    note = (f"Machine: {os.cpu_count()} CPUs, {platform.platform()}; load tool on the same machine; "
            f"medians of {args.repetitions} interleaved repetitions of {args.seconds:g} s.")
    if args.json:
        args.json.write_text(json.dumps({"note": note, "results": {"|".join(k): v for k, v in results.items()}}, indent=1))
    if args.svg and str(args.svg) not in ("", ".") and any(k[0] in ("fanout", "latency") for k in results):
        write_svg(args.svg, results, note)
        print(f"plot written to {args.svg}", file=sys.stderr)
    print(note + "\n")
    print("| scenario | server | deliveries/s | p50 µs | p90 µs | p99 µs | max µs | lost | server CPU µs/delivery | peak RSS KiB | msg B |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (scenario, extra, name), rs in results.items():
        if scenario not in ("fanout", "latency"):
            continue
        print(f"| {scenario} {extra} | {name} | {med(rs, lambda r: r['deliveriesPerSecond']):,.0f} | "
              f"{med(rs, lambda r: r['latencyMicros']['p50']):,.0f} | {med(rs, lambda r: r['latencyMicros']['p90']):,.0f} | "
              f"{med(rs, lambda r: r['latencyMicros']['p99']):,.0f} | {med(rs, lambda r: r['latencyMicros']['max']):,.0f} | "
              f"{max(r['lost'] for r in rs)} | {med(rs, lambda r: r.get('serverCPUMicrosPerDelivery', 0)):.2f} | "
              f"{max(r.get('serverPeakRSSKiB', 0) for r in rs):,} | {med(rs, lambda r: r.get('messageBytes', 0)):.0f} |")
    for (scenario, extra, name), rs in results.items():
        if scenario == "idle":
            print(f"\nidle ({extra}, template without presence, {name}): connected in {med(rs, lambda r: r['seconds']):.2f} s (median), "
                  f"{med(rs, lambda r: r['rssKiBPerConnection']):.2f} KiB server RSS per connection")
        elif scenario == "hold":
            print(f"\nhold ({extra}, 100 ms interval, {name}): {med(rs, lambda r: r['ticks']):.0f} ticks, identical everywhere: "
                  f"{all(r['identical'] for r in rs)}; tick lateness at the clients p50 {med(rs, lambda r: r['latenessMicros']['p50']):,.0f} µs, "
                  f"p99 {med(rs, lambda r: r['latenessMicros']['p99']):,.0f} µs, max {med(rs, lambda r: r['latenessMicros']['max']):,.0f} µs; "
                  f"timer lateness in the server (/metrics histogram, interpolated in its buckets) p50 "
                  f"{med(rs, lambda r: r['serverLatenessMicros']['0.5']):,.0f} µs, p99 {med(rs, lambda r: r['serverLatenessMicros']['0.99']):,.0f} µs, "
                  f"max ≤ {med(rs, lambda r: r['serverLatenessMicros']['1']):,.0f} µs")
        elif scenario == "churn":
            print(f"\nchurn ({extra}, {name}): RSS growth {med(rs, lambda r: r['rssGrowthKiB']):,.0f} KiB (median), "
                  f"holds left running: {any(r['leakedHold'] for r in rs)}")
    if any(r.get("lost", 0) for rs in results.values() for r in rs):
        sys.exit(1)


if __name__ == "__main__":
    main()
