"""Tokens for the tests, made by the `livecontrols token` subcommand."""
from __future__ import annotations

import subprocess

from livecontrols_server import BINARY


def mint_token(secret: str, *args: str) -> str:
    result = subprocess.run([BINARY, "token", "--auth-secret", secret, *args], capture_output=True, text=True, timeout=20, check=True)
    return result.stdout.strip()
