"""A real webhook receiver for the tests: an HTTP server on a free port that verifies every request with the
`standardwebhooks` library (as a user's backend would) and records the events, in arrival order."""
from __future__ import annotations

import base64
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook


def new_secret() -> str:
    return "whsec_" + base64.b64encode(os.urandom(32)).decode()


class Receiver:
    def __init__(self, secret: str | None = None):
        self.secret = secret or new_secret()
        self.verifier = Webhook(self.secret)
        self.events: list[dict] = []  # verified deliveries, in arrival order: {"id", "type", "data", "timestamp", "headers"}
        self.attempts: list[str] = []  # webhook-id of every request, accepted or not
        self.invalid: list[str] = []  # requests whose signature did not verify
        self.answers: list[int] = []  # statuses to answer next (then 204)
        self.delay = 0.0  # seconds to wait before answering
        self.changed = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                headers = {k.lower(): v for k, v in self.headers.items()}
                with receiver.changed:
                    receiver.attempts.append(headers.get("webhook-id", ""))
                    status = receiver.answers.pop(0) if receiver.answers else 204
                    delay = receiver.delay
                if delay:
                    time.sleep(delay)  # a slow receiver: the server's per-attempt timeout is what is tested
                try:
                    payload = receiver.verifier.verify(body, headers)
                except Exception as error:  # noqa: BLE001 - any verification failure is recorded
                    with receiver.changed:
                        receiver.invalid.append(f"{headers.get('webhook-id')}: {error}")
                        receiver.changed.notify_all()
                    status = 400
                else:
                    if status < 300:
                        with receiver.changed:
                            receiver.events.append({"id": headers["webhook-id"], "headers": headers, **payload})
                            receiver.changed.notify_all()
                with receiver.changed:
                    receiver.changed.notify_all()
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hooks"

    def endpoint(self, events=("*",), **extra) -> dict:
        return {"url": self.url, "events": list(events), "secret": self.secret, **extra}

    def wait(self, predicate, timeout: float = 10, what: str = "events") -> list[dict]:
        """Waits (woken by each request) until `predicate(events)` holds; returns the events."""
        with self.changed:
            if not self.changed.wait_for(lambda: predicate(self.events), timeout):
                raise TimeoutError(f"{what} not received within {timeout} s; got {[e['type'] for e in self.events]}")
            return list(self.events)

    def of(self, type_: str) -> list[dict]:
        return [e for e in self.events if e["type"] == type_]

    def wait_for(self, type_: str, count: int = 1, timeout: float = 10) -> list[dict]:
        self.wait(lambda events: sum(e["type"] == type_ for e in events) >= count, timeout, f"{count} × {type_}")
        return self.of(type_)

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


TEMPLATE = {"controls": {
    "q": {"kind": "stepper", "min": 0, "max": 10, "value": 0, "hold": {"delayMs": 100, "intervalMs": 50}},
    "f": {"kind": "form", "elements": [{"id": "who", "fields": [{"id": "name", "type": "text", "required": True}]}]},
    "w": {"kind": "wizard", "steps": [{"id": "one"}, {"id": "two"}]},
}}


def webhook_config(*endpoints: dict, interval_ms: int = 200, **extra) -> dict:
    """A small template (a stepper `q`, a one-field form `f`, a two-step wizard `w`), a room `main`, and webhooks."""
    return {"templates": {"t": TEMPLATE}, "rooms": {"main": {"template": "t"}}, "webhooks": list(endpoints),
            "webhookChangeIntervalMs": interval_ms, **extra}
