"""A real `redis-server` for the cluster tests: a free loopback port, AOF on, restartable on the same port."""
from __future__ import annotations

import pathlib
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def connect(port: int, tls=None, timeout: float = 2) -> socket.socket:
    """A connection to a Redis (or sentinel) on loopback; over TLS when `tls` (test certificates) is given."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    return tls.client_context().wrap_socket(s, server_hostname="127.0.0.1") if tls else s


class RedisServer:
    def __init__(self, *extra: str, tls=None, client_auth: bool = False):
        """`tls`: a `tls_certificates.Certificates`; the server then speaks TLS only (replication included), and
        with `client_auth` asks clients for a certificate."""
        self.extra = list(extra)
        self.tls = tls
        self.client_auth = client_auth
        if shutil.which("redis-server") is None:
            raise RuntimeError("redis-server is not installed (scripts/bootstrap --test installs it)")
        self.port = free_port()
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="lc-redis-"))
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"{'rediss' if self.tls else 'redis'}://127.0.0.1:{self.port}"

    def start(self, timeout: float = 10) -> "RedisServer":
        # AOF, so a restart of the process keeps every acked change (Redis writes the AOF before it replies; the
        # file's pages outlive the process). Not fsynced: `always` made every write wait for the disk, and on a busy
        # CI disk one fsync took longer than a 1 s lease's command time-out (333 ms) — the owner then gave its rooms
        # up, and a test's first intent got `unavailable`. Production asks for fsync (docs/DEPLOYMENT.md): there the
        # machine, not just the process, may go down.
        self.proc = subprocess.Popen(
            ["redis-server", *(self.tls.redis_args(self.port, self.client_auth) if self.tls else ["--port", str(self.port)]),
             "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
             "--appendfsync", "no", "--dir", str(self.dir), "--logfile", str(self.dir / "redis.log"), *self.extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"redis-server exited: {(self.dir / 'redis.log').read_text(errors='replace')}")
            try:
                if self.command("PING") == "PONG":
                    return self
            except OSError:
                pass
            time.sleep(0.01)
        raise RuntimeError("redis-server did not answer PING")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def command(self, *args: str):
        """One command over a fresh connection (RESP); simple replies only."""
        payload = f"*{len(args)}\r\n" + "".join(f"${len(a.encode())}\r\n{a}\r\n" for a in args)
        with connect(self.port, self.tls) as s:
            s.sendall(payload.encode())
            data = b""
            while not data.endswith(b"\r\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        line = data.split(b"\r\n", 1)[0].decode()
        if line[0] in "+-":
            return line[1:]
        if line[0] == ":":
            return int(line[1:])
        if line.startswith("$-1"):
            return None
        return data.split(b"\r\n")[1].decode()

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def redis_server():
    r = RedisServer().start()
    yield r
    r.cleanup()


CLUSTER_LEASE_MS = 1000


@pytest.fixture
def cluster(start_server, redis_server):  # noqa: F811
    """Factory: `cluster(n, *args)` starts n nodes on one Redis (node ids n0, n1, …), with a 1 s lease."""
    def start(n: int = 2, *extra: str):
        return [start_server("--redis", redis_server.url, "--node-id", f"n{i}", "--lease-ms", str(CLUSTER_LEASE_MS), *extra)
                for i in range(n)]
    return start
