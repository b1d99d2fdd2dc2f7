"""Webhook endpoints are shown only to the API key, with their credentials and query redacted in every answer and
log line (issue 38: a room-scoped admin token read every endpoint URL with its password and token)."""
from __future__ import annotations

import json

from api_client import API, API_KEY
from livecontrols_server import Server
from webhook_receiver import webhook_config


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
