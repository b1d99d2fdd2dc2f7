#!/usr/bin/env python3
"""Fairness: how a quiet room is served while another room floods (issue #38, item 3).

    python3 Benchmarks/fairness.py [--seconds 20] [--baseline OLD_BINARY] [--only presence|intents]

Two floods, each in its own fresh server, within the documented limits (the server's default rate limits):
  (a) presence: 500 members of one room each send 18 presence updates a second (the limit is 20);
  (b) intents: 3,000 members of one room each send 10 intents a second (the limit is 50).
While a flood runs, a probe in another room sends one intent at a time (25 ms apart) and measures each ack's round
trip, and a second probe opens a new connection every half second, joins a room of its own and measures the time
from connect to its snapshot. Reported per server and flood: the probe's intent p50/p99/max, the joins' p50/max,
and what the flood got (sent, acked, overloaded). The quiet room's numbers with no flood are measured first.
Needs the release binaries of `livecontrols` and of the tool (`swift build -c release --package-path Benchmarks`).
"""
from __future__ import annotations

import argparse
import itertools
import json
import pathlib
import threading
import time

import websocket

from compare import SERVER, TOOL
from overload import start_server, tool

FLOODS = {
    "presence": dict(clients=500, rate=18, message="presence"),
    "intents": dict(clients=3000, rate=10, message="intent"),
}


def intent_probe(port: int, stop: threading.Event, rtts: list[float], closes: list[str]) -> None:
    """One member of room `quiet`: an intent at a time, 25 ms apart; each ack's round trip in ms. A close by the
    server (its code and reason kept in `closes`) is followed by a new connection."""
    def connect():
        ws = websocket.create_connection(f"ws://127.0.0.1:{port}/ws", timeout=60)
        json.loads(ws.recv())  # welcome
        ws.send(json.dumps({"type": "join", "room": "quiet"}))
        while json.loads(ws.recv())["type"] != "snapshot":
            pass
        return ws

    ws = connect()
    for i in itertools.count(1):
        if stop.is_set():
            break
        sent = time.perf_counter()
        ws.send(json.dumps({"type": "intent", "id": i, "room": "quiet", "control": "quantity", "intent": "next" if i % 2 else "prev"}))
        while True:
            opcode, data = ws.recv_data()
            if opcode == websocket.ABNF.OPCODE_CLOSE:
                closes.append(f"{int.from_bytes(data[:2], 'big') if len(data) >= 2 else '-'} {data[2:].decode(errors='replace')}")
                ws = connect()
                break
            if json.loads(data).get("id") == i:
                rtts.append((time.perf_counter() - sent) * 1e3)
                break
        time.sleep(0.025)  # at most 40 a second: under the default rate limit (50)
    ws.close()


def join_probe(port: int, stop: threading.Event, times: list[float]) -> None:
    """Every half second a new connection joins a room of its own: connect → snapshot, in ms."""
    for i in itertools.count(1):
        if stop.wait(0.5):
            break
        started = time.perf_counter()
        ws = websocket.create_connection(f"ws://127.0.0.1:{port}/ws", timeout=60)
        json.loads(ws.recv())  # welcome
        ws.send(json.dumps({"type": "join", "room": f"newcomer-{i}"}))
        while json.loads(ws.recv())["type"] != "snapshot":
            pass
        times.append((time.perf_counter() - started) * 1e3)
        ws.close()


def probes(port: int, seconds: float | None, until: threading.Event | None = None) -> tuple[list[float], list[float], list[str]]:
    stop = until or threading.Event()
    rtts: list[float] = []
    joins: list[float] = []
    closes: list[str] = []
    threads = [threading.Thread(target=intent_probe, args=(port, stop, rtts, closes)), threading.Thread(target=join_probe, args=(port, stop, joins))]
    for t in threads:
        t.start()
    if seconds is not None:
        time.sleep(seconds)
        stop.set()
    for t in threads:
        t.join(timeout=120)
    return rtts, joins, closes


def pick(values: list[float], q: float) -> float:
    return round(sorted(values)[min(len(values) - 1, int(len(values) * q))], 1) if values else 0.0


def summary(rtts: list[float], joins: list[float], closes: list[str]) -> dict:
    return dict(intents=len(rtts), p50=pick(rtts, 0.5), p99=pick(rtts, 0.99), max=round(max(rtts, default=0), 1),
                joins=len(joins), joinP50=pick(joins, 0.5), joinMax=round(max(joins, default=0), 1), closes=closes)


def measure(binary: pathlib.Path, name: str | None, seconds: float) -> dict:
    proc, port = start_server(binary)
    try:
        if name is None:
            return summary(*probes(port, seconds))
        f = FLOODS[name]
        run, flooding = tool(port, proc.pid, f["clients"], f["rate"], seconds, "flood", f["message"])
        if not flooding.wait(timeout=300):
            raise RuntimeError("the flood's clients did not join")
        stop = threading.Event()
        result: dict = {}
        prober = threading.Thread(target=lambda: result.update(summary(*probes(port, None, stop))))
        prober.start()
        out = run.stdout.read()
        run.wait(timeout=seconds + 300)
        stop.set()
        prober.join(timeout=180)
        result["flood"] = json.loads(out.strip().splitlines()[-1])
        return result
    finally:
        proc.kill()
        proc.wait()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--baseline", type=pathlib.Path, help="an older livecontrols binary, measured the same way after")
    ap.add_argument("--only", choices=sorted(FLOODS))
    args = ap.parse_args()
    servers = [("livecontrols", SERVER)] + ([("baseline", args.baseline)] if args.baseline else [])
    floods = [args.only] if args.only else [None, *FLOODS]
    print("| server | flood in another room | quiet room: intent p50 ms | p99 ms | max ms | join p50 ms | join max ms "
          "| flood: sent | acked | overloaded |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for server, binary in servers:
        for name in floods:
            r = measure(binary, name, args.seconds)
            f = r.get("flood", {})
            label = "none" if name is None else f"{FLOODS[name]['clients']:,} × {FLOODS[name]['rate']} {name}/s"
            print(f"| {server} | {label} | {r['p50']} | {r['p99']} | {r['max']} | {r['joinP50']} | {r['joinMax']} "
                  f"| {f.get('sent', 0):,} | {f.get('acked', 0):,} | {f.get('overloaded', 0):,} |", flush=True)
            if r["closes"]:
                print(f"  (the server closed the quiet room's probe: {', '.join(r['closes'])})", flush=True)


if __name__ == "__main__":
    main()
