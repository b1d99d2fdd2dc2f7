#!/usr/bin/env python3
"""Where a connection's memory goes, in two steps: the server's RSS grows by so much per open WebSocket (welcome
read, no room), then by so much more per join (room membership). Usage: Benchmarks/connection_memory.py [N]
(release build of livecontrols, the bench config; N connections, default 5,000)."""
import asyncio
import json
import pathlib
import sys

import websockets

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import compare  # noqa: E402

def rss(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])

async def main(n=5000):
    proc, port = compare.start_livecontrols()
    await asyncio.sleep(0.5)
    base = rss(proc.pid)
    conns = []
    for i in range(0, n, 250):
        batch = await asyncio.gather(*[websockets.connect(f"ws://127.0.0.1:{port}/ws", max_queue=None, ping_interval=None) for _ in range(250)])
        for ws in batch:
            await ws.recv()  # welcome
        conns += batch
    await asyncio.sleep(1)
    connected = rss(proc.pid)
    for i in range(0, n, 500):
        part = conns[i:i + 500]
        for ws in part:
            await ws.send(json.dumps({"type": "join", "room": "bench"}))
        for ws in part:
            await ws.recv()  # snapshot
    await asyncio.sleep(1)
    joined = rss(proc.pid)
    print(f"base {base} KiB; connected +{(connected - base) / n:.2f} KiB/conn; joined +{(joined - connected) / n:.2f} KiB/conn more; total {(joined - base) / n:.2f}")
    for ws in conns:
        await ws.close()
    proc.terminate()

if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000))
