"""Webhook I/O is bounded (issue 38): a receiver's answer counts by its status alone — an endless body is never read
nor kept (it took the server to 3.5 GB) — and endpoint URLs are shown only to the API key, with their credentials and
query redacted in every answer and log line (a room-scoped admin token read them with their password and token)."""
from __future__ import annotations

import json
import socket
import threading
import time

from api_client import API, API_KEY
from livecontrols_server import Server
from webhook_receiver import webhook_config


class EndlessReceiver:
    """Answers every request `200 OK` and then a body that never ends (chunked, 64 KiB chunks, as fast as it is
    read), counting the requests and the body bytes the server took."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.requests = 0
        self.sent = 0
        self.stopped = threading.Event()
        threading.Thread(target=self.serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}/hooks"

    def serve(self):
        self.listener.settimeout(0.2)
        while not self.stopped.is_set():
            try:
                conn, _ = self.listener.accept()
            except (socket.timeout, OSError):
                continue
            threading.Thread(target=self.answer, args=(conn,), daemon=True).start()

    def answer(self, conn):
        with conn:
            while True:  # keep-alive: one request after another
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                self.requests += 1
                conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n")
                piece = b"10000\r\n" + b"x" * 0x10000 + b"\r\n"
                try:
                    while not self.stopped.is_set():
                        conn.sendall(piece)
                        self.sent += len(piece)
                except OSError:
                    return  # the server hung up: the body is not wanted

    def stop(self):
        self.stopped.set()
        self.listener.close()


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return int(next(line for line in f if line.startswith("VmRSS:")).split()[1])


def test_an_endless_answer_body_is_not_read_and_the_event_counts_as_delivered(tmp_path):
    receiver = EndlessReceiver()
    path = tmp_path / "config.json"
    path.write_text(json.dumps(webhook_config({"url": receiver.url, "events": ["member.*"], "secret": "whsec_" + "A" * 32,
                                               "timeoutMs": 8000, "retryMs": 50}, interval_ms=50)))
    s = Server("--config", str(path), "--api-key", API_KEY).start()
    try:
        before = rss_kib(s.proc.pid)
        for i in range(5):
            c = s.client()
            c.join("main", name=f"m{i}")
            c.close()
        api = API(s)
        deadline = time.monotonic() + 15
        while True:  # every event delivered (200), none pending: the status was enough
            status = api.get("/webhooks").json()["endpoints"][0]
            if status["pending"] == 0 and receiver.requests >= 10:
                break
            assert time.monotonic() < deadline, (status, receiver.requests, receiver.sent)
            time.sleep(0.05)
        assert api.get("/webhooks/failed").json()["failed"] == []
        grown = rss_kib(s.proc.pid) - before
        assert grown < 32 * 1024, f"RSS grew by {grown} KiB while the receiver sent {receiver.sent} body bytes"
        assert receiver.sent < 64 * 1024 * 1024, f"the server read {receiver.sent} bytes of answer bodies"
    finally:
        s.stop()
        receiver.stop()


def test_only_the_api_key_sees_webhook_endpoints_and_never_their_secrets(tmp_path):
    url = "http://user:hunter2@127.0.0.1:9/hook?token=SECRET123"
    path = tmp_path / "config.json"
    path.write_text(json.dumps(webhook_config({"url": url, "events": ["member.*"], "secret": "whsec_" + "A" * 32,
                                               "timeoutMs": 200, "retryMs": 10000})))
    s = Server("--config", str(path), "--api-key", API_KEY, "--auth-secret", "s" * 32).start()
    try:
        c = s.client()
        c.join("main", name="x")
        c.close()
        body = API(s).get("/webhooks").text
        assert "hunter2" not in body and "SECRET123" not in body and "user:" not in body, body
        assert json.loads(body)["endpoints"][0]["url"] == "http://127.0.0.1:9/hook"
        import subprocess
        from livecontrols_server import BINARY
        token = subprocess.run([BINARY, "token", "--role", "admin", "--room", "t-*", "--ttl", "600"], capture_output=True, text=True,
                               env={"LIVECONTROLS_AUTH_SECRET": "s" * 32}).stdout.strip()
        scoped = API(s, key=token).get("/webhooks")
        assert scoped.status_code == 403, scoped.text
        failed = API(s, key=token).get("/webhooks/failed")
        assert "hunter2" not in failed.text and "SECRET123" not in failed.text
        s.wait_for_log("webhook")
        assert "hunter2" not in s.stderr() and "SECRET123" not in s.stderr()
    finally:
        s.stop()


def test_the_outbox_on_disk_is_bounded_per_endpoint_and_the_rest_is_given_up_into_the_failed_list(tmp_path):
    """Issue 38: with --data-dir a receiver that never answers grew the store without end (33k events in 60 s). Past
    `maxPending` deliveries waiting for an endpoint, a new event is given up at once into the failed list, counted and
    logged; the deliveries kept stay at the bound."""
    import sqlite3

    dead = socket.create_server(("127.0.0.1", 0))  # accepts, never answers
    url = f"http://127.0.0.1:{dead.getsockname()[1]}/hooks"
    path = tmp_path / "config.json"
    path.write_text(json.dumps(webhook_config({"url": url, "events": ["member.*"], "secret": "whsec_" + "A" * 32,
                                               "timeoutMs": 60000, "retryMs": 60000, "maxPending": 20})))
    data = tmp_path / "data"
    s = Server("--config", str(path), "--api-key", API_KEY, "--data-dir", str(data)).start()
    try:
        for i in range(20):  # 40 events: member.joined and member.left each
            c = s.client()
            c.join("main", name=f"m{i}")
            c.close()
        s.wait_for_log("webhook deliveries given up: the endpoint's outbox is full")
        api = API(s)
        deadline = time.monotonic() + 10
        while len(failed := api.get("/webhooks/failed", params={"limit": 1000}).json()["failed"]) < 20:
            assert time.monotonic() < deadline, len(failed)
            time.sleep(0.05)
        assert len(failed) == 20 and all("maxPending" in f["error"] and f["attempts"] == 0 for f in failed), failed[:2]
        db = sqlite3.connect(f"file:{data / 'livecontrols.sqlite3'}?mode=ro", uri=True)
        pending = db.execute("SELECT count(*) FROM webhook_delivery WHERE state = 'pending'").fetchone()[0]
        db.close()
        assert pending == 20
        metrics = s.get("/metrics").read().decode()
        assert 'livecontrols_webhook_failed_total{endpoint="0"} 20' in metrics, [l for l in metrics.splitlines() if "webhook_failed" in l]
    finally:
        s.stop()
        dead.close()
