"""A node stopped with SIGTERM hands its rooms over at once, and never takes one back during its own shutdown (issue
42: it sometimes did — a client of its own asking for the room while it stopped — and then exited holding the lease,
so the next owner waited the whole lease)."""
from __future__ import annotations

import os
import threading
import time

from redis_server import redis_server  # noqa: F401  (fixture)

LEASE_MS = 5000  # long, so that a wait for the lease cannot pass for a hand-over


def test_sigterm_hands_rooms_over_without_a_lease_wait_every_time(start_server, redis_server, connect):  # noqa: F811
    rounds = int(os.environ.get("HANDOVER_ROUNDS", "50"))
    common = ("--redis", redis_server.url, "--lease-ms", str(LEASE_MS), "--rate", "100000", "--burst", "100000")
    survivor = start_server(*common, "--node-id", "survivor")
    waits = []
    for i in range(rounds):
        room = f"handover-{i}"
        stopping = start_server(*common, "--node-id", f"stopping-{i}")
        own = connect(stopping)
        joined = own.join(room)
        assert joined["type"] == "snapshot", joined  # first to need it: the stopping node owns it
        other = connect(survivor)
        joined = other.join(room)
        assert joined["type"] == "snapshot", joined
        # The stopping node's own client keeps asking for the room while the node shuts down: what made it take the
        # room back.
        done = threading.Event()

        def keep_asking():
            n = 0
            while not done.is_set():
                try:
                    own.intent("quantity", "set", {"value": n % 10}, room=room)
                except Exception:
                    return  # its connection closed
                n += 1

        asker = threading.Thread(target=keep_asking, daemon=True)
        asker.start()
        time.sleep(0.01 * (i % 5))  # (varies where in its stream of intents the stop lands)
        stopped_at = time.monotonic()
        assert stopping.stop() == 0
        done.set()
        asker.join(timeout=10)
        # The survivor takes the room at its next request: an ack, not a wait for a lapsed lease.
        while True:
            reply = other.intent("quantity", "set", {"value": 7}, room=room)
            if reply["type"] == "ack":
                break
            assert reply["code"] == "unavailable", reply
            assert time.monotonic() - stopped_at < LEASE_MS / 1000 - 1, f"round {i}: still unavailable: {reply}"
            time.sleep(0.02)
        waits.append(time.monotonic() - stopped_at)
        assert "room taken over" not in "".join(stopping.stderr_lines), f"round {i}: the stopping node took a room"
        other.close()
    assert max(waits) < LEASE_MS / 1000 - 1, f"hand-over waits: {sorted(waits)[-5:]}"
