"""SIGTERM ends the process within --shutdown-timeout whatever is under way; a second signal ends it at once."""
import signal
import sqlite3
import time


def stalled_store(start_server, tmp_path, *extra):
    """A server whose store cannot write: another process holds the SQLite database's write lock, so each write
    waits out SQLite's busy timeout (5 s) — as a stalled disk would. An intent is then under way in it."""
    node = start_server("--data-dir", str(tmp_path), *extra)
    c = node.client()
    c.join()
    blocker = sqlite3.connect(tmp_path / "livecontrols.sqlite3", isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    c.send({"type": "intent", "id": 1, "room": "demo", "control": "quantity", "intent": "next"})  # its write waits
    deadline = time.monotonic() + 10
    while not applied_intents(node):  # applied: its write is with the store now (the ack waits for it)
        assert time.monotonic() < deadline, "the intent was never applied"
        time.sleep(0.02)
    return node, blocker


def applied_intents(node) -> int:
    with node.get("/metrics") as r:
        for line in r.read().decode().splitlines():
            if line.startswith("livecontrols_intents_total "):
                return int(float(line.split()[1]))
    return 0


def test_sigterm_exits_within_the_shutdown_timeout_when_the_stop_cannot_finish(start_server, tmp_path):
    node, blocker = stalled_store(start_server, tmp_path, "--shutdown-timeout", "2")
    started = time.monotonic()
    node.proc.send_signal(signal.SIGTERM)
    status = node.proc.wait(15)
    elapsed = time.monotonic() - started
    blocker.close()
    assert status == 1, node.stderr()
    assert 2 <= elapsed < 4, elapsed
    assert "shutdown did not finish in time" in node.stderr()


def test_a_second_signal_exits_at_once(start_server, tmp_path):
    node, blocker = stalled_store(start_server, tmp_path, "--shutdown-timeout", "60")
    node.proc.send_signal(signal.SIGTERM)
    node.wait_for_log("shutting down")
    started = time.monotonic()
    node.proc.send_signal(signal.SIGINT)
    status = node.proc.wait(15)
    elapsed = time.monotonic() - started
    blocker.close()
    assert status == 1 and elapsed < 1.5, (status, elapsed)
    assert "second signal during shutdown" in node.stderr()
