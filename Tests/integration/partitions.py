"""Partition tests, Jepsen-style: three nodes and Redis, each in its own network namespace on one bridge, a seeded
schedule of faults (node ↔ Redis links cut both ways or one way, nodes killed with SIGKILL and restarted), clients
on every node sending intents and recording everything they see, and a checker over the recorded histories.

Only addresses inside the namespaces this module creates are touched (a 10.214.x.0/24 chosen by process id, on a
bridge in its own namespace; the clients are a member of their own, `h`, which the test's threads enter with
`Net.inside`), so runs side by side do not meet and the caller's namespace gets no address. A cut is a blackhole
route: packets to the peer are dropped silently, so established connections stall as on a real partition. Needs
root (CAP_NET_ADMIN, CAP_SYS_ADMIN for setns)."""
from __future__ import annotations

import contextlib
import ctypes
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import threading
import time

from livecontrols_server import URL_LINE

SUBNET = f"10.214.{os.getpid() % 250 + 1}"
HOST_IP = f"{SUBNET}.1"  # the clients' namespace, `h`
CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)
REDIS_IP = f"{SUBNET}.10"
HOLD_REASONS = {"release", "disconnect", "leave", "bound", "lease", "replaced", "restart", "expired", "failover", "reset"}


def sh(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), check=check, capture_output=True, text=True, timeout=20)


def namespaces_available() -> str | None:
    """None when namespaces can be made here, or why not."""
    if os.geteuid() != 0:
        return "partition tests need root (network namespaces)"
    if shutil.which("ip") is None:
        return "partition tests need the ip command (iproute2)"
    probe = f"lcjprobe{os.getpid() % 10000}"
    result = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if result.returncode != 0:
        return f"cannot create a network namespace: {result.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


class Net:
    """A bridge namespace and one namespace per member (`r`, `n1`, `n2`, `n3`), each with one address."""

    def __init__(self, members: dict[str, str]):
        self.tag = f"lcj{os.getpid() % 10000}"
        self.members = members  # name -> IP
        self.switch = f"{self.tag}-sw"
        sh("ip", "netns", "add", self.switch)
        sh("ip", "netns", "exec", self.switch, "ip", "link", "add", "br0", "type", "bridge")
        sh("ip", "netns", "exec", self.switch, "ip", "link", "set", "br0", "up")
        for name, ip in members.items():
            ns = self.ns(name)
            sh("ip", "netns", "add", ns)
            self._wire(f"{self.tag}{name}", ns, ip)
            sh("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
        self.cuts: set[tuple[str, str]] = set()

    def ns(self, name: str) -> str:
        return f"{self.tag}-{name}"

    def _wire(self, link: str, ns: str, ip: str):
        """A veth pair made inside the switch's namespace: one end on its bridge, the other moved into `ns`."""
        in_switch = ["ip", "netns", "exec", self.switch]
        sh(*in_switch, "ip", "link", "add", link, "type", "veth", "peer", "name", link + "b")
        sh(*in_switch, "ip", "link", "set", link + "b", "master", "br0")
        sh(*in_switch, "ip", "link", "set", link + "b", "up")
        sh(*in_switch, "ip", "link", "set", link, "netns", ns)
        sh("ip", "netns", "exec", ns, "ip", "addr", "add", f"{ip}/24", "dev", link)
        sh("ip", "netns", "exec", ns, "ip", "link", "set", link, "up")

    @contextlib.contextmanager
    def inside(self, name: str):
        """Runs the calling thread (and the threads it starts meanwhile) in member `name`'s namespace: the sockets it
        opens there stay there. Back in its own namespace afterwards."""
        own = os.open(f"/proc/thread-self/ns/net", os.O_RDONLY)
        target = os.open(f"/run/netns/{self.ns(name)}", os.O_RDONLY)
        try:
            if _libc.setns(target, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), f"setns into {self.ns(name)}")
            failed = True
            try:
                yield
                failed = False
            finally:
                if _libc.setns(own, CLONE_NEWNET) != 0:
                    error = OSError(ctypes.get_errno(), "setns back into the caller's namespace")
                    if not failed:
                        raise error
                    print(f"partitions: {error} (after the failure above)", file=sys.stderr)
        finally:
            os.close(target)
            os.close(own)

    def cut(self, source: str, target: str):
        """Drops every packet `source` sends to `target` (one way)."""
        if (source, target) not in self.cuts:
            sh("ip", "netns", "exec", self.ns(source), "ip", "route", "add", "blackhole", f"{self.members[target]}/32")
            self.cuts.add((source, target))

    def heal(self):
        for source, target in list(self.cuts):
            sh("ip", "netns", "exec", self.ns(source), "ip", "route", "del", "blackhole", f"{self.members[target]}/32", check=False)
        self.cuts.clear()

    def close(self):
        for name in self.members:
            sh("ip", "netns", "del", self.ns(name), check=False)
        sh("ip", "netns", "del", self.switch, check=False)


class Process:
    """A program run inside a namespace; for the server, waits for its URL line."""

    def __init__(self, net: Net, member: str, argv: list[str], log: pathlib.Path):
        self.net, self.member, self.argv, self.log = net, member, argv, log
        self.proc: subprocess.Popen | None = None

    def start(self, wait_url: bool) -> "Process":
        out = open(self.log, "a")
        self.proc = subprocess.Popen(["ip", "netns", "exec", self.net.ns(self.member), *self.argv],
                                     stdout=subprocess.PIPE if wait_url else out, stderr=out, text=True)
        if wait_url:
            found = threading.Event()

            def read():
                for line in self.proc.stdout:
                    if URL_LINE.search(line):
                        found.set()

            threading.Thread(target=read, daemon=True).start()
            deadline = time.monotonic() + 20
            while not found.wait(0.05):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{self.member} did not start: {self.log.read_text()[-2000:]}")
        return self

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        if self.alive:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self):
        if self.alive:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()
