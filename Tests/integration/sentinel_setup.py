"""Redis with Sentinel for the cluster tests: a master, two replicas and one sentinel (quorum 1), real processes on
free loopback ports. The sentinel marks the master down after 2 s without an answer and fails over to a
replica (not 1 s: a sentinel pings once a second, and right after a failover the new master's first answer can
come just over 1 s after the sentinel linked to it — a spurious second failover, seen in CI); the other replica
then follows the new master, so `WAIT 1` is answered after the failover too."""
from __future__ import annotations

import pathlib
import shutil
import subprocess
import tempfile
import time

import pytest

from redis_server import RedisServer, connect, free_port

MASTER = "lcmaster"


def resp(port: int, *args: str, timeout: float = 2, password: str | None = None, tls=None):
    """One command over a fresh connection (after AUTH with `password`; over TLS with `tls`, test certificates);
    replies of any shape as Python values."""
    commands = ([("AUTH", password)] if password else []) + [args]
    payload = "".join(f"*{len(c)}\r\n" + "".join(f"${len(a.encode())}\r\n{a}\r\n" for a in c) for c in commands)
    with connect(port, tls, timeout) as s:
        s.sendall(payload.encode())
        reader = s.makefile("rb")

        def read():
            line = reader.readline().rstrip(b"\r\n").decode()
            kind, rest = line[0], line[1:]
            if kind in "+-":
                return rest
            if kind == ":":
                return int(rest)
            if kind == "$":
                return None if rest == "-1" else reader.read(int(rest) + 2)[:-2].decode()
            if kind == "*":
                return None if rest == "-1" else [read() for _ in range(int(rest))]
            raise ValueError(line)
        if password:
            read()  # AUTH's OK
        return read()


def wait_until(predicate, timeout: float, what: str):
    """Polls Redis or Sentinel state (which announces nothing) every 20 ms, up to `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = predicate()
        except OSError:
            value = None
        if value:
            return value
        time.sleep(0.02)
    raise TimeoutError(what)


class Sentinel:
    def __init__(self, master_port: int, tls=None, password: str | None = None):
        """`tls`: test certificates; the sentinel then listens on TLS only and reaches the servers over TLS.
        `password`: the sentinel's own `requirepass`."""
        self.port = free_port()
        self.tls = tls
        self.password = password
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="lc-sentinel-"))
        listen = f"port {self.port}\n"
        if tls:
            listen = "".join(f"{k} {v}\n" for k, v in zip(tls.redis_args(self.port)[::2], tls.redis_args(self.port)[1::2])).replace("--", "")
        auth = f'requirepass "{password}"\n' if password else ""
        (self.dir / "sentinel.conf").write_text(
            f"{listen}{auth}bind 127.0.0.1\ndir {self.dir}\nlogfile {self.dir / 'sentinel.log'}\n"
            f"sentinel monitor {MASTER} 127.0.0.1 {master_port} 1\n"
            f"sentinel down-after-milliseconds {MASTER} 2000\nsentinel failover-timeout {MASTER} 5000\n")
        self.proc = subprocess.Popen(["redis-server", str(self.dir / "sentinel.conf"), "--sentinel"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(lambda: self.master_port() == master_port, 10, "the sentinel did not start")
        # A failover needs a replica the sentinel knows (it learns them from the master's INFO).
        wait_until(lambda: len(resp(self.port, "SENTINEL", "replicas", MASTER, tls=tls, password=password) or []) == 2, 15,
                   "the sentinel found no replicas")

    def master_port(self) -> int | None:
        reply = resp(self.port, "SENTINEL", "get-master-addr-by-name", MASTER, tls=self.tls, password=self.password)
        return int(reply[1]) if reply else None

    def url(self, extra: str = "") -> str:
        return f"{'rediss' if self.tls else 'redis'}-sentinel://127.0.0.1:{self.port}/{MASTER}{extra}"

    def cleanup(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def start_sentinel_redis(tls=None, sentinel_password: str | None = None):
    """(master, replicas, sentinel): both replicas in sync with the master. `tls`: every one of them on TLS only;
    `sentinel_password`: the sentinel's own."""
    master = RedisServer(tls=tls).start()
    replicas = [RedisServer("--replicaof", "127.0.0.1", str(master.port), tls=tls).start() for _ in range(2)]
    for replica in replicas:
        wait_until(lambda: "master_link_status:up" in resp(replica.port, "INFO", "replication", tls=tls), 10,
                   "a replica did not sync")
    return master, replicas, Sentinel(master.port, tls, sentinel_password)


def stop_sentinel_redis(master, replicas, sentinel):
    sentinel.cleanup()
    for replica in replicas:
        replica.cleanup()
    master.cleanup()


@pytest.fixture
def sentinel_redis():
    """(master, replicas, sentinel): both replicas in sync with the master before the test starts."""
    started = start_sentinel_redis()
    yield started
    stop_sentinel_redis(*started)
