"""Cluster mode: a Redis that stalls for a moment (a fork, a slow disk) does not move a node's rooms."""
from __future__ import annotations

import socket
import time

from redis_server import RedisServer, connect as redis_connect


def resp(*args: str) -> bytes:
    return (f"*{len(args)}\r\n" + "".join(f"${len(a.encode())}\r\n{a}\r\n" for a in args)).encode()


def metric(server, name: str) -> float:
    for line in server.get("/metrics").read().decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return 0.0


def test_a_redis_stall_longer_than_a_command_time_out_keeps_the_rooms(start_server, connect):
    redis = RedisServer("--enable-debug-command", "local").start()
    try:
        # A 3 s lease: renewals every 1 s, control commands bounded by 750 ms (1 s before this was tolerated), a retry
        # 250 ms after a renewal that failed.
        node = start_server("--redis", redis.url, "--node-id", "n0", "--lease-ms", "3000")
        client = connect(node)
        client.join()
        assert client.intent("quantity", "set", {"value": 4})["type"] == "ack"  # the node owns `demo`

        # Right after a renewal of the room's lease (seen through MONITOR), Redis sleeps 2.3 s: the next renewal, a
        # second later, waits 1.3 s for its answer — past its time-out (and past the 1 s time-out of the build before)
        # — and its retry, 250 ms after that failure, is answered once Redis wakes, 0.7 s before the lease would lapse.
        monitor = redis_connect(redis.port, timeout=10)
        monitor.sendall(resp("MONITOR"))
        seen = b""
        deadline = time.monotonic() + 10
        while b'"EVAL"' not in seen or b"lease:demo" not in seen.split(b'"EVAL"')[-1]:
            assert time.monotonic() < deadline, "no renewal of the room's lease within 10 s"
            seen += monitor.recv(65536)
        sleeper = redis_connect(redis.port, timeout=10)
        sleeper.sendall(resp("DEBUG", "SLEEP", "2.3"))
        monitor.close()

        node.wait_for_log("lease renewal failed; rooms stay owned while their leases last", timeout=5)
        node.wait_for_log("leases renewed again", timeout=5)
        assert sleeper.recv(64).startswith(b"+OK")
        sleeper.close()

        assert "room no longer owned here" not in node.stderr(), "the room was given up"
        assert metric(node, "livecontrols_cluster_relinquished_total") == 0
        reply = client.intent("quantity", "set", {"value": 5})
        assert reply["type"] == "ack", reply
        client.wait_state(lambda s: s["controls"]["quantity"]["value"] == 5)
        errors = [m for m in client.log if m.get("type") == "error"]
        assert errors == [], f"the client noticed the stall: {errors}"
    finally:
        redis.cleanup()
