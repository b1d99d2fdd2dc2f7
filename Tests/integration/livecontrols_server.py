"""The `livecontrols` server as a test fixture: started on a free port, stopped at the end."""
from __future__ import annotations

import json
import os
import pathlib
import re
import signal
import subprocess
import threading
import time
import urllib.request

import pytest

from livecontrols_client import Client

REPO = pathlib.Path(__file__).resolve().parents[2]
BINARY = os.environ.get("LIVECONTROLS_BIN", str(REPO / ".build" / "debug" / "livecontrols"))
#: The command-line client (`watch`, `send`): a product of its own, beside the server's binary.
CLIENT_BINARY = os.environ.get("LIVECONTROLS_CLIENT_BIN", str(pathlib.Path(BINARY).with_name("livecontrols-client")))
URL_LINE = re.compile(r"listening on (https?://[^/ ]+/) \(WebSocket (wss?://\S+/ws)\)")


class Server:
    """One server process; `start()` waits for the URL line it prints, never for a guessed time."""

    def __init__(self, *args: str, cwd: pathlib.Path = REPO):
        self.args = list(args)
        self.cwd = cwd
        self.proc: subprocess.Popen | None = None
        self.stderr_lines: list[str] = []
        self._stderr_grew = threading.Condition()
        self.http_url = self.ws_url = ""

    def start(self, timeout: float = 20) -> "Server":
        cmd = [BINARY, "--port", "0", "--log-level", "debug", *self.args]
        self.proc = subprocess.Popen(cmd, cwd=self.cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        found = threading.Event()

        def read_stdout():
            for line in self.proc.stdout:
                m = URL_LINE.search(line)
                if m and not found.is_set():
                    self.http_url, self.ws_url = m.group(1), m.group(2)
                    found.set()

        threading.Thread(target=read_stdout, daemon=True).start()
        deadline = time.monotonic() + timeout
        while not found.wait(0.05):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"server did not start: {self.stderr()}")
        return self

    def _drain_stderr(self):
        for line in self.proc.stderr:
            with self._stderr_grew:
                self.stderr_lines.append(line)
                self._stderr_grew.notify_all()

    def wait_for_log(self, text: str, count: int = 1, timeout: float = 10) -> None:
        """Waits until `count` lines of the server's log (it runs at debug level) contain `text`: woken by each
        new line, no polling. For what the protocol does not announce, such as a room being unloaded."""
        with self._stderr_grew:
            if not self._stderr_grew.wait_for(lambda: sum(text in line for line in self.stderr_lines) >= count, timeout):
                raise TimeoutError(f"{count} × {text!r} not logged within {timeout} s")

    def stderr(self) -> str:
        return "".join(self.stderr_lines)

    @property
    def port(self) -> int:
        return int(self.http_url.rsplit(":", 1)[1].strip("/"))

    def client(self, **kwargs) -> Client:
        return Client(self.ws_url, **kwargs)

    def get(self, path: str):
        return urllib.request.urlopen(self.http_url.rstrip("/") + path, timeout=5)

    def connections(self) -> int:
        """The WebSocket connections open now, as `/healthz` counts them."""
        with self.get("/healthz") as r:
            return json.loads(r.read())["connections"]

    def stop(self, sig=signal.SIGTERM, timeout: float = 10) -> int:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode if self.proc else 0


#: Every server the running test started, for `conftest.pytest_runtest_makereport` to show their warnings if it fails.
STARTED: list[Server] = []


@pytest.fixture
def server():
    """A fresh server with the built-in demo config."""
    s = Server().start()
    STARTED.append(s)
    yield s
    s.stop()


@pytest.fixture
def start_server():
    """Factory for servers with extra arguments; all are stopped at the end of the test."""
    started: list[Server] = []

    def start(*args: str, **kwargs) -> Server:
        s = Server(*args, **kwargs).start()
        started.append(s)
        STARTED.append(s)
        return s

    yield start
    for s in started:
        s.stop()
