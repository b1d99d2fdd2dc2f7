#!/usr/bin/env python3
"""Many connections on one node (issue #18): connections joined to 1 room and to rooms of 100, one change per room
reaching every client; uWebSockets (socketify, `uws_relay.py`) in the same run with one topic: one message published
to every connection; and one hold in a room of 10,000 subscribers.

    python3 Benchmarks/scale.py [--connections 100000] [--rounds 5] [--hold-subscribers 10000] [--binary PATH]

Every client socket is an open file, in the server and in the load tool: the run asks for as many connections as
the hard open-file limit (`ulimit -Hn`) lets both processes hold (each raises its soft limit to it) and says when
that is fewer than `--connections`. The tool spreads its sockets over local addresses 127.0.0.2… (one address gives
~28,000 connections to one server port). Needs release builds of `livecontrols` and of the tool
(`swift build -c release --package-path Benchmarks`). Prints a Markdown table for docs/benchmarks/HISTORY.md.
"""
import argparse
import json
import resource
import subprocess
import sys
import urllib.request

from compare import SERVER, TOOL, server_lateness, settle, start_livecontrols, start_uws


def start_server(binary, max_connections):
    return start_livecontrols(binary, "--max-rooms", "5000", max_connections=max_connections)


def source_addresses(connections):
    """Local addresses 127.0.0.2… for the tool's sockets, one per 5,000 connections."""
    return ",".join(f"127.0.0.{2 + i}" for i in range(max(1, -(-connections // 5_000))))


def run_hold(binary, subscribers, seconds, sources, intents_per_second=0):
    """One hold in a room of `subscribers` for `seconds` (the tool's result), with the server's own record of how late
    its timers fired (`serverLatenessMicros`, from /metrics) and how often the room paused (`pauses`); with
    `intents_per_second`, another client sends that many `next` intents a second to the room meanwhile."""
    proc, port = start_server(binary, subscribers + 100)
    try:
        hold = tool(["hold", "--port", str(port), "--template", "bench", "--subscribers", str(subscribers),
                     "--seconds", str(seconds), "--source-addresses", sources,
                     "--intents-per-second", str(intents_per_second)])
        settle(proc.pid)
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
        hold["serverLatenessMicros"] = server_lateness(text)
        hold["pauses"] = next((int(float(line.split()[-1])) for line in text.splitlines()
                               if line.startswith("livecontrols_room_pauses_total ")), 0)
        return hold
    finally:
        proc.terminate()
        proc.wait(30)


def tool(args, timeout=900):
    out = subprocess.run([str(TOOL), *args], capture_output=True, text=True, timeout=timeout)
    lines = out.stdout.strip().splitlines()
    if not lines:
        raise RuntimeError(f"the load tool printed nothing: {out.stderr[-500:]}")
    return json.loads(lines[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--connections", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--hold-subscribers", type=int, default=10_000)
    ap.add_argument("--binary", default=str(SERVER))
    args = ap.parse_args()

    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    reserve = 1100  # the server's own files (--max-connections + 1,024) and the tool's
    count = min(args.connections, (hard - reserve) // 100 * 100)
    if count < args.connections:
        print(f"note: the hard open-file limit here is {hard}: {count:,} connections, not {args.connections:,} "
              f"(raise it with ulimit -Hn, which needs CAP_SYS_RESOURCE)", file=sys.stderr)
    sources = source_addresses(count)
    rows = []
    uws, uws_port = start_uws(17693)
    try:
        r = tool(["scale", "--port", str(uws_port), "--mirror", "--connections", str(count), "--rounds", str(args.rounds),
                  "--server-pid", str(uws.pid), "--source-addresses", sources])
        r["server"] = "uWebSockets"
    finally:
        uws.terminate()
        uws.wait(30)
    rows.append(r)
    print(f"scale uWebSockets: {r}", file=sys.stderr)
    for rooms in (1, count // 100):
        proc, port = start_server(args.binary, count + 100)
        try:
            r = tool(["scale", "--port", str(port), "--template", "bench", "--connections", str(count), "--rooms", str(rooms),
                      "--rounds", str(args.rounds), "--server-pid", str(proc.pid), "--source-addresses", sources])
        finally:
            proc.terminate()
            proc.wait(30)
        r["server"] = "LiveControls"
        rows.append(r)
        print(f"scale {rooms} room(s): {r}", file=sys.stderr)

    hold = run_hold(args.binary, args.hold_subscribers, 10, sources)

    print(f"| server | connections | rooms | connected and joined in | RSS per connection | one change per room: p50 | p99 | max | "
          f"all reached in (median of {args.rounds}) | lost | server CPU µs/delivery |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        lat = r["latencyMicros"]
        print(f"| {r['server']} | {r['connections']:,} of {r['requested']:,} | {r['rooms']:,} | {float(r['connectSeconds']):.2f} s | "
              f"{float(r['rssKiBPerConnection']):.2f} KiB | {lat['p50'] / 1000:.1f} ms | {lat['p99'] / 1000:.1f} ms | "
              f"{lat['max'] / 1000:.1f} ms | {float(r['allReachedMs']):.0f} ms | {r['lost']} | {float(r['serverCPUMicrosPerDelivery']):.2f} |")
    s = hold["serverLatenessMicros"]
    print(f"\nhold, {hold['subscribers']:,} subscribers, 10 s at 100 ms: {hold['ticks']} ticks, identical everywhere: "
          f"{hold['identical']}; server-side tick lateness (/metrics) p50 {s['0.5']:,.0f} µs, p99 {s['0.99']:,.0f} µs, "
          f"max ≤ {s['1']:,.0f} µs; at the clients p50 {hold['latenessMicros']['p50']:,} µs, p99 {hold['latenessMicros']['p99']:,} µs")
    if any(r["lost"] for r in rows) or not hold["identical"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
