"""Fixtures: a real `livecontrols` server on a free port, and protocol clients for it."""
from __future__ import annotations

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from livecontrols_client import Client  # noqa: E402,F401
from livecontrols_server import BINARY, REPO, STARTED, Server, server, start_server  # noqa: E402,F401


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test's report shows what its servers logged at warning and above (a lost lease, a Redis time-out):
    the reason for a failure seen once in CI, where nothing else is kept."""
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for i, s in enumerate(STARTED):
            lines = [line for line in s.stderr_lines if any(f" {level} " in line for level in ("info", "notice", "warning", "error", "critical"))]
            if lines:
                report.sections.append((f"server {i} ({' '.join(s.args)[:80]}): warnings and errors", "".join(lines[-40:])))
    if report.when == "teardown":
        STARTED.clear()

@pytest.fixture
def connect():
    """Factory for clients of any server: `connect(server)`; all are closed at the end of the test."""
    made: list[Client] = []

    def make(server, **kwargs) -> Client:
        c = server.client(**kwargs)
        made.append(c)
        return c

    yield make
    for c in made:
        try:
            c.close()
        except Exception:
            pass


@pytest.fixture
def clients(server, connect):
    """Factory for clients of the `server` fixture."""
    return lambda **kwargs: connect(server, **kwargs)
