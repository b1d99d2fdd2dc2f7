#!/usr/bin/env python3
"""Issue 36's numbers, side by side in one run on one server build:

1. Intent hook overhead: `set` round trips (send → ack, one at a time, a Python client) on a stepper whose `set` is
   hooked to a local backend (uWebSockets through socketify, answering `{"allow": true}`) against the same intent on a
   stepper without a hook, in the same room, alternating blocks. p50/p99, and the server's own view of the calls
   (`livecontrols_intent_hook_seconds`).
2. A slow hook (2 s) in one room against intent latency in another: the same two measurements in room `r1` before and
   while four clients keep room `s1`'s hooked stepper busy (a backend that takes 2 s: its room's 64 waiting places
   full, the rest refused `overloaded`).
3. Broadcast fan-out against a patch of the same size: the load tool's fan-out to `--subscribers`, `set` on a stepper
   against `broadcast` with its event padded so its message is as large as the patch.

    python3 Benchmarks/collaboration.py [--round-trips 3000] [--subscribers 1000] [--seconds 5] [--repetitions 3]

Needs release builds of `livecontrols` and of the tool (`swift build -c release --package-path Benchmarks`), and
socketify (uWebSockets, from PyPI). Prints Markdown tables for docs/BENCHMARKS.md."""
import argparse
import asyncio
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import websockets

from compare import SERVER, histogram_quantiles, run_tool, settle, start_livecontrols

HERE = pathlib.Path(__file__).resolve().parent
SECRET = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
FAST_BACKEND = """
import sys
from socketify import App
app = App()
def allow(res, req):
    res.write_header("Content-Type", "application/json")
    res.end('{"allow": true}')
app.post("/*", allow)
app.listen(int(sys.argv[1]), lambda config: print("listening", flush=True))
app.run()
"""


def slow_backend(seconds: float) -> ThreadingHTTPServer:
    class Slow(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            self.rfile.read(int(self.headers.get("content-length", "0")))
            time.sleep(seconds)
            body = b'{"allow": true}'
            try:
                self.send_response(200)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except OSError:
                pass

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def config(fast_url: str, slow_url: str) -> dict:
    stepper = {"kind": "stepper", "min": 0, "max": 1000000, "value": 0, "wrap": True}
    return {"templates": {
        "fast": {"controls": {"hooked": stepper, "plain": stepper}, "presence": False,
                 "hooks": {"intent": {"url": fast_url, "controls": ["hooked"], "intents": ["set"], "secret": SECRET}}},
        "slow": {"controls": {"hooked": stepper}, "presence": False,
                 "hooks": {"intent": {"url": slow_url, "controls": ["hooked"], "secret": SECRET, "timeoutMs": 5000}}},
    }, "rooms": {"r1": {"template": "fast"}, "s1": {"template": "slow"}}}


async def round_trips(url: str, room: str, control: str, count: int) -> list[float]:
    """`count` `set` intents one at a time: microseconds from send to ack."""
    times = []
    async with websockets.connect(url, max_size=None) as ws:
        await ws.recv()  # welcome
        await ws.send(json.dumps({"type": "join", "room": room}))
        while json.loads(await ws.recv())["type"] != "snapshot":
            pass
        for i in range(count):
            started = time.perf_counter()
            await ws.send(json.dumps({"type": "intent", "id": i, "room": room, "control": control, "intent": "set", "args": {"value": i % 1000 + 1}}))
            while True:
                m = json.loads(await ws.recv())
                if m.get("id") == i:
                    break
            assert m["type"] == "ack", m
            times.append((time.perf_counter() - started) * 1e6)
    return times


async def interleaved(url: str, count: int, block: int = 250) -> dict:
    got = {"hooked": [], "plain": []}
    while len(got["plain"]) < count:
        for control in ("hooked", "plain"):
            got[control] += await round_trips(url, "r1", control, block)
    return got


async def slow_load(url: str, stop: asyncio.Event, counts: dict):
    """Four clients each sending 50 hooked intents a second to room s1, whose backend takes 2 s (run in a process of
    its own, `--slow-load URL`, so it does not share the measuring client's event loop)."""
    async def one(n):
        async with websockets.connect(url) as ws:
            await ws.recv()
            await ws.send(json.dumps({"type": "join", "room": "s1"}))
            i = 0
            async def reader():
                try:
                    async for raw in ws:
                        m = json.loads(raw)
                        if m["type"] in ("ack", "error"):
                            counts[m.get("code", "ack")] = counts.get(m.get("code", "ack"), 0) + 1
                except websockets.ConnectionClosed:
                    pass
            task = asyncio.create_task(reader())
            while not stop.is_set():
                await ws.send(json.dumps({"type": "intent", "id": f"{n}-{i}", "room": "s1", "control": "hooked", "intent": "next"}))
                i += 1
                await asyncio.sleep(0.02)
            task.cancel()
    async def guarded(n):
        try:
            await one(n)
        except websockets.ConnectionClosed:
            pass  # stopped mid-send (the measurement is over)
    await asyncio.gather(*(guarded(n) for n in range(4)))


def quantiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return ordered[len(ordered) // 2], ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--round-trips", type=int, default=3000)
    ap.add_argument("--subscribers", type=int, default=1000)
    ap.add_argument("--window", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--binary", default=str(SERVER))
    ap.add_argument("--skip-fanout", action="store_true")
    ap.add_argument("--slow-load", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.slow_load:
        counts = {}
        try:
            asyncio.run(slow_load(args.slow_load, asyncio.Event(), counts))
        except KeyboardInterrupt:
            pass
        finally:
            print(json.dumps(counts), flush=True)
        return

    fast_port = free_port()
    fast = subprocess.Popen([sys.executable, "-c", FAST_BACKEND, str(fast_port)], stdout=subprocess.PIPE, text=True)
    assert fast.stdout.readline().startswith("listening")
    slow = slow_backend(2.0)
    workdir = tempfile.mkdtemp()
    path = pathlib.Path(workdir) / "hooks-config.json"
    path.write_text(json.dumps(config(f"http://127.0.0.1:{fast_port}/allow", f"http://127.0.0.1:{slow.server_address[1]}/slow")))
    rows = {}
    try:
        for rep in range(args.repetitions):
            proc, port = start_livecontrols(args.binary, config=path)
            url = f"ws://127.0.0.1:{port}/ws"
            try:
                before = asyncio.run(interleaved(url, args.round_trips))
                for control, values in before.items():
                    rows.setdefault(("idle", control), []).append(quantiles(values))

                load = subprocess.Popen([sys.executable, __file__, "--slow-load", url], stdout=subprocess.PIPE, text=True)
                time.sleep(3)  # its 64 waiting places fill
                during = asyncio.run(interleaved(url, args.round_trips))
                load.send_signal(2)
                counts = json.loads(load.communicate(timeout=30)[0].strip().splitlines()[-1])
                for control, values in during.items():
                    rows.setdefault(("slow room busy", control), []).append(quantiles(values))
                metrics = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics").read().decode()
                served = histogram_quantiles(metrics.replace('{template="fast",', "{"), "livecontrols_intent_hook_seconds", (0.5, 0.99))
                print(f"rep {rep + 1}: slow room answers {counts}; fast backend as the server saw it {served}", flush=True)
            finally:
                proc.terminate()
                proc.wait(30)
    finally:
        fast.kill()
        slow.shutdown()
    print("\n| round trip, one at a time (µs) | p50 | p99 |")
    print("|---|---|---|")
    for (phase, control), qs in rows.items():
        name = f"`set` {'hooked (local backend)' if control == 'hooked' else 'without a hook'}, room r1, {phase}"
        print(f"| {name} | {statistics.median(q[0] for q in qs):,.0f} | {statistics.median(q[1] for q in qs):,.0f} |")

    if args.skip_fanout:
        return
    fanout = {}
    for rep in range(args.repetitions):
        for intent in ("set", "broadcast"):
            proc, port = start_livecontrols(args.binary, config=HERE / "views-config.json", max_connections=args.subscribers + 100)
            try:
                extra = ["--subscribers", str(args.subscribers), "--window", str(args.window), "--seconds", str(args.seconds), "--intent", intent]
                if intent == "broadcast":
                    # The event padded so the broadcast is as large as the set's patch.
                    probe = run_tool("fanout", port, proc.pid, False, ["--subscribers", "2", "--window", "1", "--seconds", "0.3", "--intent", "broadcast"])
                    target = statistics.median(r["messageBytes"] for r in fanout.get("set", [])) if fanout.get("set") else probe["messageBytes"]
                    extra += ["--mirror-bytes", str(max(0, int(target - probe["messageBytes"])))]
                r = run_tool("fanout", port, proc.pid, False, extra)
            finally:
                settle(proc.pid)
                proc.terminate()
                proc.wait(30)
            fanout.setdefault(intent, []).append(r)
            print(f"rep {rep + 1} {intent}: {json.dumps(r)}", flush=True)
    print(f"\n| {args.subscribers:,} subscribers, window {args.window} | deliveries/s | latency p50 | p99 | message bytes | lost | server CPU per delivery |")
    print("|---|---|---|---|---|---|---|")
    for intent, rs in fanout.items():
        def med(f):
            return statistics.median(f(r) for r in rs)
        name = {"set": "stepper `set` patch", "broadcast": "`broadcast` of the same size"}[intent]
        print(f"| {name} | {med(lambda r: r['deliveriesPerSecond']):,.0f} | {med(lambda r: r['latencyMicros']['p50']) / 1000:,.2f} ms | "
              f"{med(lambda r: r['latencyMicros']['p99']) / 1000:,.2f} ms | {med(lambda r: r['messageBytes']):.0f} | {med(lambda r: r['lost']):.0f} | "
              f"{med(lambda r: r['serverCPUMicrosPerDelivery']):.2f} µs |")


if __name__ == "__main__":
    main()
