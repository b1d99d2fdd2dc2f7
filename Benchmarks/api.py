#!/usr/bin/env python3
"""The server API and webhooks under load, side by side in one run (paste the report into docs/benchmarks/HISTORY.md).

1. Intents per second through `POST /api/v1/rooms/{room}/intents` with HTTP/1.1 keep-alive (wrk, an independent
   load generator: 1 and 8 connections), against a server without webhooks and one that sends every event (`*`)
   to a local receiver.
2. Fan-out (the load tool's scenario: N subscribers, one sender, window W) against the same two servers: what
   one webhook endpoint costs the room's hot path.

Servers and scenarios alternate every repetition. With --baseline, an older `livecontrols` binary runs as a third
server (no webhooks) in every scenario: a before/after check of a change in one run. Usage:
  python3 Benchmarks/api.py [--repetitions 3] [--seconds 5] [--baseline PATH/TO/older/livecontrols]
Needs: release builds of `livecontrols` and of the load tool (`swift build -c release --product livecontrols`,
`swift build -c release --package-path Benchmarks`) and `wrk` (Debian package wrk).
"""
import argparse
import base64
import json
import os
import pathlib
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from compare import REPO, SERVER, run_tool, settle, start_livecontrols  # noqa: E402

KEY = "bench-api-key-0123456789abcdef"


class Receiver:
    """Answers every webhook with 204 and counts them (no verification: the receiver's cost is not measured)."""

    def __init__(self):
        self.count = 0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                self.rfile.read(int(self.headers.get("content-length", "0")))
                receiver.count += 1
                self.send_response(204)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks"


def start_server(config: pathlib.Path, binary=SERVER):
    return start_livecontrols(binary, "--api-key", KEY, config=config)


def api(port, method, path, body=None):
    request = urllib.request.Request(f"http://127.0.0.1:{port}/api/v1{path}", method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"})
    return json.loads(urllib.request.urlopen(request, timeout=10).read())


def wrk(port, connections, seconds, script):
    out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{int(seconds)}s", "--latency", "-s", script,
                          f"http://127.0.0.1:{port}/api/v1/rooms/api-bench/intents"],
                         capture_output=True, text=True, timeout=int(seconds) + 60).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))

    def micros(label):
        value, unit = re.search(rf"^\s+{label}%\s+([\d.]+)(us|ms|s)$", out, re.M).groups()
        return float(value) * {"us": 1, "ms": 1e3, "s": 1e6}[unit]

    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"rps": rps, "p50": micros("50"), "p99": micros("99"), "non2xx": int(errors.group(1)) if errors else 0}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--baseline", type=pathlib.Path, help="an older livecontrols binary, run as a third server (no webhooks)")
    args = ap.parse_args()
    if not shutil.which("wrk"):
        sys.exit("wrk is needed: apt-get install wrk")
    receiver = Receiver()
    work = pathlib.Path(tempfile.mkdtemp())
    bench = json.loads((REPO / "Benchmarks" / "bench-config.json").read_text())
    plain = work / "plain.json"
    plain.write_text(json.dumps(bench))
    hooked = work / "hooked.json"
    secret = "whsec_" + base64.b64encode(os.urandom(32)).decode()
    hooked.write_text(json.dumps({**bench, "webhooks": [{"url": receiver.url, "events": ["*"], "secret": secret}]}))
    script = work / "intent.lua"
    script.write_text('wrk.method = "POST"\nwrk.body = \'{"control": "quantity", "intent": "next"}\'\n'
                      f'wrk.headers["Authorization"] = "Bearer {KEY}"\nwrk.headers["Content-Type"] = "application/json"\n')
    servers = []
    setups = [("no webhooks", plain, SERVER), ("webhooks: * to one endpoint", hooked, SERVER)]
    if args.baseline:
        setups.append(("baseline (older binary), no webhooks", plain, args.baseline))
    for name, config, binary in setups:
        proc, port = start_server(config, binary)
        api(port, "POST", "/rooms", {"room": "api-bench"})
        servers.append((name, proc, port))
    pids = [proc.pid for _, proc, _ in servers]
    results = {}
    try:
        for rep in range(args.repetitions):
            order = servers if rep % 2 == 0 else servers[::-1]
            for connections in (1, 8):
                for name, proc, port in order:
                    settle(*pids)
                    r = wrk(port, connections, args.seconds, str(script))
                    results.setdefault(("api", connections, name), []).append(r)
                    print(f"rep {rep + 1} api c={connections} {name}: {r}", file=sys.stderr)
            for name, proc, port in order:
                settle(*pids)
                r = run_tool("fanout", port, proc.pid, False, ["--subscribers", "1000", "--window", "16", "--seconds", str(args.seconds)])
                results.setdefault(("fanout", 1000, name), []).append(r)
                print(f"rep {rep + 1} fanout {name}: {r['deliveriesPerSecond']} /s, lost {r['lost']}", file=sys.stderr)
    finally:
        for _, proc, _ in servers:
            proc.terminate()
    med = lambda rs, f: statistics.median(f(r) for r in rs)
    print(f"Machine: {os.cpu_count()} CPUs, {platform.platform()}; wrk and the load tool on the same machine; medians of "
          f"{args.repetitions} interleaved repetitions of {args.seconds:g} s. Webhooks received: {receiver.count}.\n")
    print("| scenario | server | requests/s | p50 µs | p99 µs | non-2xx |")
    print("|---|---|---|---|---|---|")
    for (scenario, n, name), rs in results.items():
        if scenario == "api":
            print(f"| API intents, keep-alive, {n} connection{'s' if n > 1 else ''} | {name} | {med(rs, lambda r: r['rps']):,.0f} | "
                  f"{med(rs, lambda r: r['p50']):,.0f} | {med(rs, lambda r: r['p99']):,.0f} | {sum(r['non2xx'] for r in rs)} |")
    print("\n| scenario | server | deliveries/s | p50 µs | p99 µs | lost | server CPU µs/delivery |")
    print("|---|---|---|---|---|---|---|")
    for (scenario, n, name), rs in results.items():
        if scenario == "fanout":
            print(f"| fan-out N={n} W=16 | {name} | {med(rs, lambda r: r['deliveriesPerSecond']):,.0f} | "
                  f"{med(rs, lambda r: r['latencyMicros']['p50']):,.0f} | {med(rs, lambda r: r['latencyMicros']['p99']):,.0f} | "
                  f"{max(r['lost'] for r in rs)} | {med(rs, lambda r: r.get('serverCPUMicrosPerDelivery', 0)):.2f} |")


if __name__ == "__main__":
    main()
