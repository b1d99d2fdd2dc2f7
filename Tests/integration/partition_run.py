"""One partition schedule: start Redis and three nodes in namespaces, run clients and a seeded fault schedule, heal,
then check the recorded histories. `run_schedule(seed, seconds)` returns a `Result` (violations empty when every
check held). Used by test_partitions.py (a short schedule in CI) and Benchmarks/partitions.py (many schedules)."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import pathlib
import random
import shutil
import socket
import tempfile
import threading
import time

from livecontrols_client import Client, ProtocolViolation
from livecontrols_server import BINARY
from partitions import HOLD_REASONS, HOST_IP, REDIS_IP, SUBNET, Net, Process

NODES = ("n1", "n2", "n3")
NODE_IP = {name: f"{SUBNET}.{11 + i}" for i, name in enumerate(NODES)}


@dataclasses.dataclass
class Result:
    seed: int
    events: list[str]
    intents: int = 0
    acked: int = 0
    patches: int = 0
    violations: list[str] = dataclasses.field(default_factory=list)


class Recorder:
    """What one client saw: every patch by (epoch, version), the state hash after each version, its acked values."""

    def __init__(self, index: int, urls: list[str], stop: threading.Event):
        self.index, self.urls, self.stop = index, urls, stop
        self.patches: dict[tuple[str, int], str] = {}
        self.states: dict[tuple[str, int], str] = {}
        self.acked: list[str] = []
        self.sent = 0
        self.problems: list[str] = []
        self.ended: list[dict] = []
        self.errors: list[str] = []  # connections lost on the way (expected under faults; for the report)

    def _keep(self, client: Client):
        room = client.rooms.get("demo")
        for p in client.patches.get("demo", []):
            key = (p["epoch"], p["version"])
            body = json.dumps([p["ops"], p["cause"]], sort_keys=True)
            if self.patches.setdefault(key, body) != body:
                self.problems.append(f"client {self.index}: two patches at {key}")
            self.ended += p["cause"].get("ended", [])
        client.patches["demo"] = []
        if room:
            self.states[(room["epoch"], room["version"])] = hashlib.sha1(json.dumps(room["state"], sort_keys=True).encode()).hexdigest()

    def run(self):
        n = 0
        node = self.index
        client = None
        while not self.stop.is_set():
            url = self.urls[node % len(self.urls)]
            node += 1
            try:
                if client is not None:
                    client.close()
                client = Client(url, timeout=3)
                client.join()
                self._keep(client)
                while not self.stop.is_set():
                    n += 1
                    value = f"c{self.index}-{n}"
                    self.sent += 1
                    if self.index == 0 and n % 10 == 0:
                        reply = client.intent("quantity", "press", {"direction": "next"})
                        self._keep(client)
                        time.sleep(0.3)
                        reply = client.intent("quantity", "release")
                    else:
                        reply = client.intent("person", "append", {"value": value})
                        if reply["type"] == "ack":
                            self.acked.append(value)
                    self._keep(client)
                    if reply["type"] == "error" and reply["code"] in ("unavailable", "not_joined"):
                        if any(m.get("type") == "error" and "id" not in m for m in client.inbox) or reply["code"] == "not_joined":
                            client.inbox.clear()
                            client.join()
                            self._keep(client)
                    time.sleep(0.15)
            except ProtocolViolation as e:
                self.problems.append(f"client {self.index}: {e}")
            except Exception as e:  # the node went away, a reply did not come: go on through another node
                self.errors.append(type(e).__name__)
            time.sleep(0.1)
        if client is not None:
            try:
                client.close()  # leaving ends this session's holds (reason disconnect)
            except Exception:
                pass


def schedule(rng: random.Random, seconds: float) -> list[tuple[float, str, str | None]]:
    """(at, action, node): cuts of node ↔ Redis (both ways, or one way either way) and of clients ↔ node (both ways),
    kills and restarts, heals."""
    events, t = [], 1.0
    while t < seconds:
        node = rng.choice(NODES)
        action = rng.choice(["cut-both", "cut-out", "cut-in", "cut-clients", "kill", "heal", "restart"])
        events.append((round(t, 2), action, node))
        t += rng.uniform(0.5, 2.5)
    return events


def run_schedule(seed: int, seconds: float = 15, workdir: pathlib.Path | None = None) -> Result:
    rng = random.Random(seed)
    plan = schedule(rng, seconds)
    result = Result(seed=seed, events=[f"{at}s {action} {node}" for at, action, node in plan])
    work = pathlib.Path(workdir or tempfile.mkdtemp(prefix="lc-partition-"))
    members = {"h": HOST_IP, "r": REDIS_IP, **NODE_IP}
    net = Net(members)
    try:
        with net.inside("h"):  # every client socket, the recorders' threads included, is opened in `h`
            return _run(net, plan, seconds, work, result)
    finally:
        if not result.violations:
            shutil.rmtree(work, ignore_errors=True)
        else:
            result.violations.append(f"logs kept in {work}")
        net.close()


def _run(net: Net, plan: list[tuple[float, str, str | None]], seconds: float, work: pathlib.Path, result: Result) -> Result:
    redis = nodes = None
    try:
        # AOF not fsynced: a killed Redis process keeps what it acked (its file's pages outlive it), and no write
        # waits for a busy disk longer than the nodes' command time-out (redis_server.py says why).
        redis = Process(net, "r", ["redis-server", "--port", "6379", "--bind", REDIS_IP, "--protected-mode", "no", "--save", "", "--appendonly", "yes",
                                   "--appendfsync", "no", "--dir", str(work)], work / "redis.log").start(False)
        wait_for_redis()
        nodes = {name: Process(net, name, [BINARY, "--host", NODE_IP[name], "--port", "8080", "--log-level", "info",
                                           "--redis", f"redis://{REDIS_IP}:6379", "--node-id", name, "--lease-ms", "1000",
                                           "--rate", "1000", "--burst", "1000", "--ping-interval", "1", "--idle-timeout", "3"],
                               work / f"{name}.log").start(True)
                 for name in NODES}
        urls = [f"ws://{NODE_IP[name]}:8080/ws" for name in NODES]
        stop = threading.Event()
        recorders = [Recorder(i, urls, stop) for i in range(3)]
        threads = [threading.Thread(target=r.run, daemon=True) for r in recorders]
        for thread in threads:
            thread.start()
        start = time.monotonic()
        for at, action, node in plan:
            time.sleep(max(0.0, start + at - time.monotonic()))
            apply(action, node, net, nodes)
        time.sleep(max(0.0, start + seconds - time.monotonic()))
        net.heal()
        for node in nodes.values():
            if not node.alive:
                node.start(True)
        settle(urls, result)
        stop.set()
        for thread in threads:
            thread.join(10)
        try:
            check(recorders, urls, result)
        except Exception as e:  # a checker that cannot finish is a finding, not a crash of the run
            result.violations.append(f"the checker failed: {type(e).__name__}: {e}")
    finally:
        for node in (nodes or {}).values():
            node.kill()
        if redis:
            redis.kill()
    return result


def wait_for_redis(timeout: float = 10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((REDIS_IP, 6379), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return
        except OSError:
            pass
        time.sleep(0.02)
    raise RuntimeError("redis-server in its namespace did not answer PING")


def apply(action: str, node: str, net: Net, nodes: dict[str, Process]):
    if action == "cut-both":
        net.cut(node, "r")
        net.cut("r", node)
    elif action == "cut-out":
        net.cut(node, "r")
    elif action == "cut-in":
        net.cut("r", node)
    elif action == "cut-clients":
        # The node keeps the cut clients' sessions (and their holds) until its keepalive drops them.
        net.cut("h", node)
        net.cut(node, "h")
    elif action == "heal":
        net.heal()
    elif action == "kill":
        nodes[node].kill()
    elif action == "restart" and not nodes[node].alive:
        nodes[node].start(True)


def settle(urls: list[str], result: Result, timeout: float = 30):
    """After healing: waits until an intent is acked again (the cluster serves)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            client = Client(urls[0], timeout=3)
            client.join()
            if client.intent("quantity", "set", {"value": 50})["type"] == "ack":
                client.close()
                return
            client.close()
        except Exception:
            pass
        time.sleep(0.2)
    result.violations.append(f"the cluster did not serve again within {timeout} s of healing")


def check(recorders: list[Recorder], urls: list[str], result: Result):
    patches: dict[tuple[str, int], str] = {}
    states: dict[tuple[str, int], str] = {}
    for r in recorders:
        result.violations += r.problems
        result.intents += r.sent
        result.acked += len(r.acked)
        for key, body in r.patches.items():
            if patches.setdefault(key, body) != body:
                result.violations.append(f"two different patches at (epoch, version) {key}")
        for key, digest in r.states.items():
            if states.setdefault(key, digest) != digest:
                result.violations.append(f"two different states at (epoch, version) {key}")
        for entry in r.ended:
            if entry.get("reason") not in HOLD_REASONS:
                result.violations.append(f"a hold ended without a known reason: {entry}")
    result.patches = len(patches)
    state = final_state(urls, result)
    if state is None:
        return
    values = {json.dumps(item["value"]) for section in state["controls"]["person"]["sections"] for item in section["items"]}
    for r in recorders:
        lost = [v for v in r.acked if json.dumps(v) not in values]
        if lost:
            result.violations.append(f"client {r.index}: {len(lost)} acked appends missing, e.g. {lost[:3]}")
    # Every client has left: a hold must end (its holder disconnected, or left with its dead node about a lease
    # later), within a bound and with a reason.
    if state["controls"]["quantity"]["holding"] is not None and not hold_ends(urls):
        result.violations.append(f"a hold still runs 10 s after every client left: {state['controls']['quantity']['holding']}")


def hold_ends(urls: list[str], timeout: float = 10) -> bool:
    """Watches the room until no hold runs (the patch that ends it), up to `timeout`."""
    try:
        client = Client(urls[0], timeout=5)
        client.join()
        client.wait_state(lambda s: s["controls"]["quantity"]["holding"] is None, timeout=timeout)
        client.close()
        return True
    except Exception:
        return False


def final_state(urls: list[str], result: Result, timeout: float = 30) -> dict | None:
    """The room's state after healing, from a fresh join on any node (retried while the room changes hands)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for url in urls:
            try:
                client = Client(url, timeout=5)
                reply = client.join()
                client.close()
                if reply["type"] == "snapshot":
                    return reply["state"]
            except Exception:
                pass
        time.sleep(0.2)
    result.violations.append(f"no node gave the room's state within {timeout} s of healing")
    return None
