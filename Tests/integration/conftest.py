"""Fixtures: a real `livecontrols` server on a free port, and protocol clients for it."""
from __future__ import annotations

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from livecontrols_client import Client  # noqa: E402,F401
from livecontrols_server import BINARY, REPO, Server, server, start_server  # noqa: E402,F401

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
