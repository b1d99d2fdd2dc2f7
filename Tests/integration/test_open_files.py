"""Every WebSocket is an open file: the server fits its own open-file limit to --max-connections (raising a low one,
lowering one above twice what it needs), and says so when the hard limit stops it."""
import resource
import socket
import subprocess
import threading

import pytest

from livecontrols_server import BINARY

NOFILE = resource.RLIMIT_NOFILE


def test_the_server_raises_a_low_open_file_limit_and_serves_past_it(start_server):
    soft, hard = resource.getrlimit(NOFILE)
    if hard < 2400:
        pytest.skip(f"the hard open-file limit here ({hard}) leaves no room above 1,024")
    resource.setrlimit(NOFILE, (1024, hard))  # what many systems start a process with
    try:
        s = start_server("--max-connections", "1200", "--max-connections-per-address", "0")
    finally:
        resource.setrlimit(NOFILE, (soft, hard))
    s.wait_for_log("open-file limit raised")
    limits = open(f"/proc/{s.proc.pid}/limits").read()
    assert int(next(line for line in limits.splitlines() if line.startswith("Max open files")).split()[3]) >= 2224
    # Past the limit the process started with: 1,100 WebSockets, each handshake answered.
    sockets = []
    try:
        for _ in range(1100):
            c = socket.create_connection(("127.0.0.1", s.port), timeout=10)
            c.sendall(b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
            sockets.append(c)
        for i, c in enumerate(sockets):
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = c.recv(4096)
                assert chunk, f"connection {i + 1} closed during its handshake"
                head += chunk
            assert head.startswith(b"HTTP/1.1 101"), f"connection {i + 1}: {head[:40]!r}"
    finally:
        for c in sockets:
            c.close()


def test_a_soft_limit_far_above_max_connections_is_lowered_to_it(start_server):
    # libwebsockets walks a table of one entry per file the limit allows on every close: a container's 1,048,576 (or
    # this machine's hard limit) would make each close walk all of it.
    soft, hard = resource.getrlimit(NOFILE)
    if hard < 4000:
        pytest.skip(f"the hard open-file limit here ({hard}) is too low to start above what is needed")
    resource.setrlimit(NOFILE, (hard, hard))
    try:
        s = start_server("--max-connections", "1000")
    finally:
        resource.setrlimit(NOFILE, (soft, hard))
    s.wait_for_log("open-file limit lowered to twice what --max-connections needs")
    limits = open(f"/proc/{s.proc.pid}/limits").read()
    line = next(line for line in limits.splitlines() if line.startswith("Max open files"))
    assert int(line.split()[3]) == 3024, line  # 2 × 1,000 + 1,024: room for handshakes, HTTP, Redis, webhooks
    assert int(line.split()[4]) == hard, "the hard limit stays"
    client = s.client()
    client.join()
    assert client.intent("quantity", "set", {"value": 3})["type"] == "ack"
    client.close()


def can_raise_hard_limits() -> bool:
    """Whether this process holds CAP_SYS_RESOURCE (then the server raises the hard limit itself: no warning)."""
    status = open("/proc/self/status").read()
    effective = int(next(line for line in status.splitlines() if line.startswith("CapEff:")).split()[1], 16)
    return bool(effective & (1 << 24))


@pytest.mark.skipif(can_raise_hard_limits(), reason="with CAP_SYS_RESOURCE the server raises the hard limit itself")
def test_a_hard_limit_too_low_for_max_connections_is_named_at_start():
    found = threading.Event()
    proc = subprocess.Popen([BINARY, "--port", "0", "--max-connections", "5000"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, preexec_fn=lambda: resource.setrlimit(NOFILE, (1024, 2000)))
    lines = []

    def read():
        for line in proc.stderr:
            lines.append(line)
            if "open-file limit too low" in line:
                found.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        assert found.wait(20), "".join(lines)
        warning = next(line for line in lines if "open-file limit too low" in line)
        assert "needed=6024" in warning and "limit=2000" in warning and "ulimit -Hn" in warning
    finally:
        proc.terminate()
        proc.wait(10)
