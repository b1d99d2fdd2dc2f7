"""A small client of the server API (`/api/v1/`), written from docs/PROTOCOL.md and docs/openapi.yaml: plain HTTP
with `requests`, keep-alive through one session."""
from __future__ import annotations

import requests

API_KEY = "test-api-key-0123456789abcdef"


class API:
    def __init__(self, server, key: str | None = API_KEY):
        self.base = server.http_url.rstrip("/") + "/api/v1"
        self.http = requests.Session()
        if key is not None:
            self.http.headers["Authorization"] = f"Bearer {key}"

    def call(self, method: str, path: str, body=None, **kwargs) -> requests.Response:
        return self.http.request(method, self.base + path, json=body, timeout=10, **kwargs)

    def get(self, path: str, **kwargs) -> requests.Response:
        return self.call("GET", path, **kwargs)

    def post(self, path: str, body=None, **kwargs) -> requests.Response:
        return self.call("POST", path, body, **kwargs)

    def delete(self, path: str, **kwargs) -> requests.Response:
        return self.call("DELETE", path, **kwargs)

    def intents(self, room: str, *intents: dict) -> requests.Response:
        """One intent as it is, several as `{"intents": [...]}`."""
        body = intents[0] if len(intents) == 1 else {"intents": list(intents)}
        return self.post(f"/rooms/{room}/intents", body)


def intent(control: str, name: str, args: dict | None = None) -> dict:
    body = {"control": control, "intent": name}
    if args is not None:
        body["args"] = args
    return body


def error(response: requests.Response) -> dict:
    """The `error` object of a refusal (and checks that it is one)."""
    body = response.json()
    assert set(body) == {"error"}, body
    assert {"code", "message"} <= set(body["error"]), body
    return body["error"]
