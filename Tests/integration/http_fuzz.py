"""A fuzzer of the server's HTTP side: random pipelined requests (methods, paths, headers, bodies, framing mistakes),
cut into random TCP segments, on many connections at once. What it checks is what every input must leave true: each
connection is answered or closed within a bound (never left hanging), every answer is a well-formed HTTP/1.1 status
line, and after each round the server still answers /healthz and a WebSocket join and intent.

    python3 Tests/integration/http_fuzz.py --seconds 60 [--seed N]   (starts its own server; scripts/fuzz runs it)
"""
from __future__ import annotations

import argparse
import json
import random
import re
import socket
import sys
import time
from concurrent.futures import ThreadPoolExecutor

KEY = "http-fuzz-key-0123456789"
METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "get", "Post", "CONNECT", "TRACE", "BREW", ""]
PATHS = ["/", "/index.html", "/app.js", "/healthz", "/readyz", "/metrics", "/nope", "/api/v1/rooms", "/api/v1/rooms/demo",
         "/api/v1/rooms/demo/intents", "/api/v1/rooms/demo/members", "/api/v1/rooms/demo/patches?after=0",
         "/api/v1/rooms/demo/reset", "/api/v1/webhooks", "/api/v1/rooms/fz%2F1", "/ws", "/healthz?x=1", "/%00", "/..%2f..",
         "/api/v1/rooms/" + "a" * 300, "*"]
VERSIONS = ["HTTP/1.1"] * 8 + ["HTTP/1.0", "HTTP/2.0", "HTTP/1.1 x", ""]


def body_for(rng: random.Random) -> bytes:
    return rng.choice([
        b"{}", b"{", b"[]", b"null", json.dumps({"room": f"fz-{rng.randrange(10**6)}", "template": "demo"}).encode(),
        json.dumps({"intents": [{"control": "quantity", "intent": rng.choice(["next", "prev", "set"]), "args": {"value": 3}}]}).encode(),
        bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))), b"x" * rng.randrange(1, 5000),
    ])


def request(rng: random.Random) -> bytes:
    method, path, version = rng.choice(METHODS), rng.choice(PATHS), rng.choice(VERSIONS)
    lines = [f"{method} {path} {version}".rstrip().encode()]
    if rng.random() < 0.95:
        lines.append(b"Host: x")
    if rng.random() < 0.6:
        lines.append(f"Authorization: Bearer {KEY if rng.random() < 0.8 else 'wrong'}".encode())
    body = b""
    kind = rng.random()
    if kind < 0.35:
        body = body_for(rng)
        lines.append(b"Content-Length: %d" % len(body))
    elif kind < 0.40:
        body = body_for(rng)
        lines.append(b"Content-Length: %d" % (len(body) + rng.choice([-1, 1, 1000])))
    elif kind < 0.44:
        lines.append(rng.choice([b"Content-Length: -1", b"Content-Length: 1, 2", b"Content-Length: 99999999999999999999",
                                 b"Content-Length : 2", b"Transfer-Encoding: chunked", b"Transfer-Encoding: xchunked"]))
        body = rng.choice([b"", b"2\r\n{}\r\n0\r\n\r\n", b"{}"])
    for _ in range(rng.randrange(0, 4)):
        lines.append(rng.choice([b"Connection: close", b"Connection: keep-alive", b"Content-Type: application/json",
                                 b"X-Forwarded-For: 10.0.0.1", b"Upgrade: websocket", b"Expect: 100-continue",
                                 b"X-Long: " + b"v" * rng.randrange(1, 9000), b"Bad Header", b"Accept:\t*/*",
                                 b"Origin: http://evil.example"]))
    eol = b"\n" if rng.random() < 0.05 else b"\r\n"
    return eol.join(lines) + eol + eol + body


def converse(port: int, rng: random.Random, bound: float) -> None:
    """One connection: some pipelined requests in random segments; whatever comes back must be HTTP."""
    raw = b"".join(request(rng) for _ in range(rng.randrange(1, 5)))
    sock = socket.create_connection(("127.0.0.1", port), timeout=bound)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        cuts = sorted(rng.sample(range(1, len(raw)), min(len(raw) - 1, rng.randrange(0, 4))))
        start = 0
        for cut in cuts + [len(raw)]:
            try:
                sock.sendall(raw[start:cut])
            except OSError:
                return  # the server closed it (a refusal): nothing more to check on this one
            start = cut
            if rng.random() < 0.3:
                time.sleep(0.001)
        # Read until the server closes, or is quiet for a moment once it answered (keep-alive), or for a second if it
        # has not (a request whose declared body never came waits for it: not a hang; liveness is `still_serving`'s).
        received = b""
        deadline = time.monotonic() + bound
        while time.monotonic() < deadline:
            sock.settimeout(0.15 if received else 1.0)
            try:
                chunk = sock.recv(65536)
            except (socket.timeout, OSError):
                break
            if not chunk:
                break
            received += chunk
        if received:
            assert re.match(rb"HTTP/1\.[01] \d{3}", received), f"not an HTTP answer: {received[:80]!r} to {raw[:300]!r}"
    finally:
        sock.close()


def still_serving(port: int) -> None:
    import urllib.request
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as r:
        assert r.status == 200
    from websockets.sync.client import connect
    with connect(f"ws://127.0.0.1:{port}/ws", open_timeout=5) as ws:
        ws.recv(timeout=5)  # welcome
        ws.send(json.dumps({"type": "join", "room": "demo"}))
        while json.loads(ws.recv(timeout=5))["type"] != "snapshot":
            pass
        ws.send(json.dumps({"type": "intent", "id": 1, "room": "demo", "control": "quantity", "intent": "set", "args": {"value": 2}}))
        while True:
            m = json.loads(ws.recv(timeout=5))
            if m.get("id") == 1:
                assert m["type"] == "ack", m
                break


def fuzz(port: int, seconds: float, seed: int, log=print) -> int:
    rng = random.Random(seed)
    end = time.monotonic() + seconds
    rounds = conversations = 0
    while time.monotonic() < end:
        seeds = [rng.randrange(2**32) for _ in range(32)]
        with ThreadPoolExecutor(max_workers=16) as pool:  # many connections at once, each its own random stream
            for _ in pool.map(lambda s: converse(port, random.Random(s), bound=5), seeds):
                conversations += 1
        still_serving(port)
        rounds += 1
    log(f"http fuzz: seed {seed}, {conversations} connections in {rounds} rounds, server still serving")
    return conversations


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    args = parser.parse_args()
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    from livecontrols_server import Server
    s = Server("--api-key", KEY, "--rate", "100000", "--burst", "100000").start()
    try:
        fuzz(s.port, args.seconds, args.seed)
    finally:
        s.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
