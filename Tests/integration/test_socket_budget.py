"""Sockets are counted and bounded at accept, HTTP ones too, so that no client can take the process to its open-file
limit (issue 38: 2,313 held `GET /healthz` connections killed it — libdispatch traps when it cannot open a file). Run
under a low `ulimit -n`: floods from one address and from many are refused past their bounds, the process lives, keeps
its descriptors below the limit, serves other addresses meanwhile and everyone once the flood ends."""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time

import pytest

from livecontrols_server import BINARY, REPO

LIMIT = 256


def start_limited(*args: str) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen(["prlimit", f"--nofile={LIMIT}:{LIMIT}", BINARY, "--port", "0", *args], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    match = re.search(r"http://[^:]+:(\d+)/", line)
    assert match, f"no start line: {line!r} {proc.stderr.read() if proc.poll() is not None else ''}"
    return proc, int(match.group(1))


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def flood(port: int, count: int, sources: list[str]) -> list[socket.socket]:
    """`count` connections, spread over `sources` (loopback addresses), each sending a keep-alive request and holding."""
    held = []
    for i in range(count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(5)
        try:
            s.bind((sources[i % len(sources)], 0))
            s.connect(("127.0.0.1", port))
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        except OSError:
            s.close()
            continue
        held.append(s)
    return held


def serves(port: int, source: str) -> bool:
    """An HTTP request and a WebSocket join with an intent, from `source`."""
    with socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0)) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        if not s.recv(64).startswith(b"HTTP/1.1 200"):
            return False
    from websockets.sync.client import connect
    sock = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
    with connect(f"ws://127.0.0.1:{port}/ws", sock=sock, open_timeout=5) as ws:
        ws.recv(timeout=5)
        ws.send(json.dumps({"type": "join", "room": "demo"}))
        while json.loads(ws.recv(timeout=5))["type"] != "snapshot":
            pass
        ws.send(json.dumps({"type": "intent", "id": 1, "room": "demo", "control": "quantity", "intent": "set", "args": {"value": 2}}))
        while (m := json.loads(ws.recv(timeout=5))).get("id") != 1:
            pass
        return m["type"] == "ack"


def serves_yet(port: int, source: str) -> bool:
    """`serves`, or False while new sockets are still refused at accept (closed unanswered)."""
    try:
        return serves(port, source)
    except (ConnectionError, EOFError, OSError):
        return False
    except Exception as e:  # the WebSocket client's own "closed" errors
        if "closed" in str(e).lower() or "reset" in str(e).lower():
            return False
        raise


def close_all(held):
    for s in held:
        s.close()


def test_floods_of_held_http_connections_under_a_low_file_limit_are_refused_and_the_server_lives():
    proc, port = start_limited("--max-connections", "50", "--max-connections-per-address", "10",
                               "--max-http-connections-per-address", "10")
    try:
        # One address holding 600: it gets its share (20), the rest is closed at accept; others are served meanwhile.
        held = flood(port, 600, ["127.0.0.1"])
        assert proc.poll() is None
        assert open_files(proc.pid) < LIMIT - 64
        assert serves(port, "127.0.0.2")
        # Many addresses, 600 in all: past the HTTP and socket bounds they are closed at accept; the process lives.
        held += flood(port, 600, [f"127.0.0.{i}" for i in range(3, 60)])
        deadline = time.monotonic() + 3  # (the libdispatch monitor that trapped runs about once a second)
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read()[-2000:]
            assert open_files(proc.pid) < LIMIT - 16
            time.sleep(0.1)
        close_all(held)
        deadline = time.monotonic() + 10
        while not serves_yet(port, "127.0.0.2"):  # once the server has seen the flood's sockets close
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert proc.poll() is None
    finally:
        proc.terminate()
        out = proc.communicate(timeout=15)[1]
    assert proc.returncode == 0, out[-2000:]
    assert "connections refused at accept" in out
