"""A real intent-hook backend for the tests: an HTTP server on a free port that verifies every call with the
`standardwebhooks` library (as a user's backend would), records it, and answers as `decide(call)` says."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

from standardwebhooks.webhooks import Webhook

from webhook_receiver import new_secret


class Answer:
    """What the backend answers: `body` (a dict is sent as JSON, bytes as they are) after `delay` seconds."""

    def __init__(self, body=None, status: int = 200, delay: float = 0.0):
        self.body = {"allow": True} if body is None else body
        self.status = status
        self.delay = delay


ALLOW = Answer()


class HookReceiver:
    def __init__(self, decide: Callable[[dict], Answer] | None = None, secret: str | None = None):
        self.secret = secret or new_secret()
        self.verifier = Webhook(self.secret)
        self.decide = decide or (lambda call: ALLOW)
        self.calls: list[dict] = []  # verified calls, in arrival order: the body, with "headers"
        self.invalid: list[str] = []
        self.changed = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                headers = {k.lower(): v for k, v in self.headers.items()}
                try:
                    call = receiver.verifier.verify(body, headers)
                except Exception as error:  # noqa: BLE001 - any verification failure is recorded
                    with receiver.changed:
                        receiver.invalid.append(str(error))
                        receiver.changed.notify_all()
                    self.reply(400, b"")
                    return
                call["headers"] = headers
                with receiver.changed:
                    receiver.calls.append(call)
                    receiver.changed.notify_all()
                answer = receiver.decide(call)
                if answer.delay:
                    time.sleep(answer.delay)  # a slow backend: what waits for it is what is tested
                payload = answer.body if isinstance(answer.body, bytes) else json.dumps(answer.body).encode()
                try:
                    self.reply(answer.status, payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the server gave up on it (its time-out)

            def reply(self, status: int, payload: bytes):
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/allow"

    def hook(self, controls="*", **extra) -> dict:
        return {"intent": {"url": self.url, "controls": controls, "secret": self.secret, **extra}}

    def wait_calls(self, count: int, timeout: float = 10) -> list[dict]:
        with self.changed:
            if not self.changed.wait_for(lambda: len(self.calls) >= count, timeout):
                raise TimeoutError(f"{count} hook calls not received within {timeout} s; got {len(self.calls)}")
            return list(self.calls)

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
