#!/usr/bin/env python3
"""Overload: more intents than a room can apply, from 5,000 clients (issue #19's scenario).

    python3 Benchmarks/overload.py [--clients 5000] [--rate 10] [--seconds 20] [--baseline OLD_BINARY]

5,000 clients join one room (the built-in demo template, presence on) and each sends 10 intents per second, under
the per-connection rate limit; every applied intent is a patch for all 5,000, so the room falls behind. A probe in
another room sends one intent at a time. Reported per server: intents sent, acked, refused with `overloaded`, other
errors, connections the server closed, the probe's ack latency, the server's RSS (peak and at the end), how long the
server stays busy after every client has gone, and how long a SIGTERM sent in the middle of a second flood takes to
end the process. Needs the release binaries of `livecontrols` and of the tool
(`swift build -c release --package-path Benchmarks`).
"""
from __future__ import annotations

import argparse
import json
import pathlib
import re
import signal
import statistics
import subprocess
import threading
import time

import websocket

from compare import SERVER, TOOL, cpu_ticks, shares_off, start


def start_server(binary: pathlib.Path):
    return start([str(binary), "--port", "0", "--log-level", "error", "--max-connections", "20000", *shares_off(binary)],
                 lambda line: (m := re.search(r"127\.0\.0\.1:(\d+)/", line)) and int(m.group(1)))


def tool(port: int, pid: int, clients: int, rate: int, seconds: float, room: str,
         message: str = "intent") -> tuple[subprocess.Popen, threading.Event]:
    """The flood (`message`: intent or presence), and an event set once its clients have joined and it floods."""
    proc = subprocess.Popen([str(TOOL), "overload", "--port", str(port), "--server-pid", str(pid), "--clients", str(clients),
                             "--rate", str(rate), "--message", message, "--seconds", str(seconds), "--room", room],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    flooding = threading.Event()

    def watch():
        for line in proc.stderr:
            if "flooding:" in line:
                flooding.set()
    threading.Thread(target=watch, daemon=True).start()
    return proc, flooding


def probe(port: int, stop: threading.Event) -> list[float]:
    """One client in another room: an intent at a time, each ack's round trip in µs, until `stop`."""
    ws = websocket.create_connection(f"ws://127.0.0.1:{port}/ws", timeout=30)
    json.loads(ws.recv())  # welcome
    ws.send(json.dumps({"type": "join", "room": "probe"}))
    while json.loads(ws.recv())["type"] != "snapshot":
        pass
    rtts, i = [], 0
    while not stop.is_set():
        i += 1
        sent = time.perf_counter()
        ws.send(json.dumps({"type": "intent", "id": i, "room": "probe", "control": "quantity", "intent": "next" if i % 2 else "prev"}))
        while True:
            m = json.loads(ws.recv())
            if m.get("id") == i:
                break
        rtts.append((time.perf_counter() - sent) * 1e6)
        time.sleep(0.01)
    ws.close()
    return rtts


def quantile(values: list[float], q: float) -> int:
    return int(statistics.quantiles(values, n=100, method="inclusive")[int(q * 100) - 1]) if len(values) > 1 else int(values[0] if values else 0)


def busy_after(pid: int, limit: float = 300) -> float:
    """Seconds until the server uses under 5% of a core (over 0.5 s), from now."""
    started = time.monotonic()
    while time.monotonic() - started < limit:
        before = cpu_ticks(pid)
        time.sleep(0.5)
        if cpu_ticks(pid) - before <= 2:  # 100 ticks/s: ≤ 2 ticks in 0.5 s
            return time.monotonic() - started - 0.5
    return limit


def measure(binary: pathlib.Path, clients: int, rate: int, seconds: float) -> dict:
    proc, port = start_server(binary)
    try:
        run, flooding = tool(port, proc.pid, clients, rate, seconds, "flood")
        flooding.wait(timeout=300)
        stop, rtts = threading.Event(), []
        prober = threading.Thread(target=lambda: rtts.extend(probe(port, stop)))
        prober.start()
        out = run.stdout.read()
        run.wait(timeout=seconds + 300)
        stop.set()
        prober.join(timeout=60)
        result = json.loads(out.strip().splitlines()[-1])
        result.update(probeIntents=len(rtts), probeP50Us=quantile(rtts, 0.5), probeP99Us=quantile(rtts, 0.99),
                      probeMaxUs=int(max(rtts, default=0)))
        result["busySecondsAfterClientsLeft"] = round(busy_after(proc.pid), 1)
        # A second flood, and SIGTERM in the middle of it.
        second, flooding = tool(port, proc.pid, clients, rate, 30, "flood-2")
        flooding.wait(timeout=300)
        time.sleep(3)  # well into the flood
        sent_at = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        try:
            status = proc.wait(timeout=300)
            result["sigtermExitSeconds"] = round(time.monotonic() - sent_at, 2)
            result["sigtermExitStatus"] = status
        except subprocess.TimeoutExpired:
            result["sigtermExitSeconds"] = None
        second.kill()
        second.wait()
        return result
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=5000)
    ap.add_argument("--rate", type=int, default=10)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--baseline", type=pathlib.Path, help="an older livecontrols binary, measured the same way after")
    args = ap.parse_args()
    servers = [("livecontrols", SERVER)] + ([("baseline", args.baseline)] if args.baseline else [])
    print("| server | sent | acked | overloaded | closed by server | probe p50 µs | probe p99 µs | probe max µs | peak RSS MiB "
          "| RSS at end MiB | busy after clients left s | SIGTERM → exit s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, binary in servers:
        r = measure(binary, args.clients, args.rate, args.seconds)
        print(f"| {name} | {r['sent']:,} | {r['acked']:,} | {r['overloaded']:,} | {r['closed']:,} | {r['probeP50Us']:,} "
              f"| {r['probeP99Us']:,} | {r['probeMaxUs']:,} | {r['peakRSSKiB'] / 1024:.0f} | {r['finalRSSKiB'] / 1024:.0f} "
              f"| {r['busySecondsAfterClientsLeft']} | {r['sigtermExitSeconds']} (status {r.get('sigtermExitStatus')}) |", flush=True)


if __name__ == "__main__":
    main()
