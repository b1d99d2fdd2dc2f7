"""Security: signed tokens with roles, origin allowlist, TLS. Every refusal path through the real server."""
import base64
import hashlib
import hmac
import json
import socket
import ssl
import subprocess
import time
import urllib.request

import pytest
from websockets.sync.client import connect as ws_connect

from livecontrols_server import BINARY, REPO
from livecontrols_client import Client
from protocol_schema import check_client_message, check_server_message

SECRET = "test-secret-0123456789abcdef"


def received(ws) -> dict:
    """The next message of a plain WebSocket connection, checked against docs/asyncapi.yaml."""
    message = json.loads(ws.recv(timeout=5))
    check_server_message(message)
    return message


def mint(*args: str, secret: str = SECRET) -> str:
    """A token from the `livecontrols token` subcommand."""
    result = subprocess.run([BINARY, "token", "--auth-secret", secret, *args], capture_output=True, text=True, timeout=20, check=True)
    return result.stdout.strip()


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def handmade(claims: dict, secret: str = SECRET, alg: str = "HS256") -> str:
    """A token signed here with Python's hmac: the server must accept any correct HS256 JWT."""
    signing_input = b64(json.dumps({"alg": alg, "typ": "JWT"}).encode()) + "." + b64(json.dumps(claims).encode())
    signature = hmac.new(secret.encode(), signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + b64(signature)


@pytest.fixture
def secured(start_server):
    return start_server("--auth", "required", "--auth-secret", SECRET)


def test_required_mode_refuses_a_join_without_token(secured):
    c = secured.client()
    err = c.join(id="j")
    assert err["type"] == "error" and err["code"] == "unauthorized" and err["id"] == "j"


def test_editor_token_joins_acts_and_shows_its_name(secured):
    c = secured.client()
    snap = c.join(token=mint("--role", "editor", "--room", "demo", "--name", "Ann"))
    assert snap["type"] == "snapshot"
    assert snap["state"]["presence"][c.session]["name"] == "Ann"
    assert c.intent("quantity", "next")["type"] == "ack"


def test_a_resync_without_a_token_keeps_what_the_session_joined_with(secured):
    """PROTOCOL.md: send `join` again to resync. A client that joined with a token need not send it again: before, such a
    resync was refused (`unauthorized` here; `conflict` on an open server, as the default role differed)."""
    c = secured.client()
    assert c.join(token=mint("--role", "admin", "--room", "demo"))["type"] == "snapshot"
    again = c.join(id="again")
    assert again["type"] == "snapshot" and again["id"] == "again" and "resumed" not in again, again
    assert again["state"]["presence"][c.session]["roles"] == ["admin"]
    assert c.intent("quantity", "next")["type"] == "ack"


def test_token_in_the_url_works_for_browsers(secured):
    token = mint("--role", "editor", "--room", "demo")
    c = Client(secured.ws_url + "?token=" + token)
    assert c.join()["type"] == "snapshot"
    c.close()


def test_a_python_signed_token_is_accepted(secured):
    c = secured.client()
    token = handmade({"role": "editor", "rooms": ["demo"], "exp": int(time.time()) + 60, "name": "Py"})
    assert c.join(token=token)["type"] == "snapshot"


def test_viewer_receives_state_but_every_intent_is_forbidden(secured):
    viewer, editor = secured.client(), secured.client()
    viewer.join(token=mint("--role", "viewer", "--room", "demo"))
    editor.join(token=mint("--role", "editor", "--room", "demo"))
    err = viewer.intent("quantity", "next", id="v1")
    assert err["type"] == "error" and err["code"] == "forbidden" and err["id"] == "v1"
    ack = editor.intent("quantity", "next")
    viewer.wait_version(ack["version"])
    assert viewer.state() == editor.state()


def test_token_for_another_room_is_forbidden(secured):
    c = secured.client()
    err = c.join("demo", token=mint("--room", "other"))
    assert err["code"] == "forbidden"


def test_room_prefix_grants_matching_rooms_only(secured):
    c = secured.client()
    token = mint("--role", "editor", "--room", "team-*")
    assert c.join("team-1", token=token)["type"] == "snapshot"
    assert c.join("demo", token=token)["code"] == "forbidden"


def test_expired_token_is_refused_with_token_expired(secured):
    c = secured.client()
    token = handmade({"role": "editor", "rooms": ["demo"], "exp": int(time.time()) - 5})
    assert c.join(token=token)["code"] == "token_expired"


@pytest.mark.parametrize(
    "token",
    [
        "not-a-token",
        "a.b.c",
        handmade({"role": "editor", "rooms": ["demo"], "exp": 9999999999}, secret="another-secret-0123456789"),
        handmade({"role": "owner", "rooms": ["demo"], "exp": 9999999999}),
        handmade({"role": "editor", "rooms": "demo", "exp": 9999999999}),
        handmade({"role": "editor", "rooms": ["demo"]}),
        handmade({"role": "editor", "rooms": ["demo"], "exp": 9999999999}, alg="none"),
    ],
)
def test_malformed_or_forged_tokens_are_unauthorized(secured, token):
    c = secured.client()
    err = c.join(token=token)
    assert err["type"] == "error" and err["code"] == "unauthorized", err


def test_only_admins_create_rooms_from_other_templates(start_server, tmp_path):
    config = {"templates": {"demo": {"controls": {"quantity": {"kind": "stepper"}}},
                            "big": {"controls": {"n": {"kind": "stepper", "max": 1000}}}},
              "defaultTemplate": "demo", "rooms": {"demo": {}}}
    path = tmp_path / "rooms.json"
    path.write_text(json.dumps(config))
    s = start_server("--auth", "required", "--auth-secret", SECRET, "--config", str(path))
    editor, viewer, admin = s.client(), s.client(), s.client()
    assert editor.join("ed-room", token=mint("--room", "*"))["type"] == "snapshot"
    assert editor.join("big-1", template="big", token=mint("--room", "*"))["code"] == "forbidden"
    assert viewer.join("v-room", token=mint("--role", "viewer", "--room", "*"))["code"] == "forbidden"
    snap = admin.join("big-2", template="big", token=mint("--role", "admin", "--room", "*"))
    assert list(snap["state"]["controls"]) == ["n"]


def test_room_creators_admin_leaves_room_creation_to_admins(start_server):
    s = start_server("--auth", "required", "--auth-secret", SECRET, "--room-creators", "admin")
    editor, admin = s.client(), s.client()
    refused = editor.join("new-room", token=mint("--role", "editor", "--room", "*"))
    assert refused["code"] == "forbidden" and "--room-creators" in refused["message"]
    assert editor.join("demo", token=mint("--role", "editor", "--room", "*"))["type"] == "snapshot", "existing rooms stay open"
    assert admin.join("new-room", token=mint("--role", "admin", "--room", "*"))["type"] == "snapshot"
    assert editor.join("new-room", token=mint("--role", "editor", "--room", "*"))["type"] == "snapshot"


def test_a_token_that_expires_while_connected_removes_the_session(secured):
    watcher, short = secured.client(), secured.client()
    watcher.join(token=mint("--room", "demo"))
    short.join(token=handmade({"role": "editor", "rooms": ["demo"], "exp": int(time.time()) + 2}))
    short.intent("quantity", "press", {"direction": "next"})
    watcher.wait_state(lambda s: s["controls"]["quantity"]["holding"] is not None)
    err = short.recv(lambda m: m["type"] == "error" and m["code"] == "token_expired", timeout=10)
    assert err["room"] == "demo"
    state = watcher.wait_state(lambda s: short.session not in s["presence"])
    assert state["controls"]["quantity"]["holding"] is None
    ended = [e for p in watcher.patches["demo"] for e in p["cause"].get("ended", [])]
    assert {"control": "quantity", "session": short.session, "reason": "expired"} in ended
    assert short.intent("quantity", "next")["code"] == "not_joined"
    # Joining again with a fresh token restores access.
    assert short.join(token=mint("--room", "demo"))["type"] == "snapshot"


def test_open_mode_accepts_joins_without_token_and_still_honours_tokens(start_server):
    s = start_server("--auth-secret", SECRET)
    anyone, viewer = s.client(), s.client()
    assert anyone.join()["type"] == "snapshot"
    assert anyone.intent("quantity", "next")["type"] == "ack"
    viewer.join(token=mint("--role", "viewer", "--room", "demo"))
    assert viewer.intent("quantity", "next")["code"] == "forbidden"
    assert "open mode" in s.stderr()
    assert SECRET not in s.stderr()


def test_origin_allowlist_refuses_other_browser_origins(start_server):
    s = start_server("--allowed-origin", "https://app.example.com")
    with ws_connect(s.ws_url, origin="https://app.example.com", open_timeout=5) as ws:
        assert received(ws)["type"] == "welcome"
    with pytest.raises(Exception):
        with ws_connect(s.ws_url, origin="https://evil.example.net", open_timeout=5) as ws:
            ws.recv(timeout=5)
    with ws_connect(s.ws_url, open_timeout=5) as ws:  # no Origin header: not a browser
        assert received(ws)["type"] == "welcome"


def test_tls_serves_https_and_wss_on_the_same_port(start_server, tmp_path):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    s = start_server("--tls-cert", str(cert), "--tls-key", str(key))
    assert s.http_url.startswith("https://") and s.ws_url.startswith("wss://")
    context = ssl.create_default_context(cafile=str(cert))
    with urllib.request.urlopen(s.http_url + "healthz", context=context, timeout=5) as r:
        assert json.loads(r.read())["status"] == "ok"
    # HTTP/1.1 only, even to a client that asks for h2 (ALPN): a browser with an HTTP/2 connection would open its
    # WebSocket as an HTTP/2 stream (RFC 8441), which lws 4.1 does not serve (found by a review: the socket never opened).
    for path in ("healthz", ""):
        h2 = subprocess.run(["curl", "-sS", "--http2", "--cacert", str(cert), "-o", "/dev/null", "-w", "%{http_version} %{http_code}",
                             s.http_url + path], capture_output=True, text=True, timeout=20)
        assert h2.stdout == "1.1 200", (path, h2.stdout, h2.stderr)
    alpn = ssl.create_default_context(cafile=str(cert))
    alpn.set_alpn_protocols(["h2", "http/1.1"])
    with alpn.wrap_socket(socket.create_connection(("127.0.0.1", s.port), timeout=5), server_hostname="127.0.0.1") as tls:
        assert tls.selected_alpn_protocol() == "http/1.1"
    with ws_connect(s.ws_url, ssl=context, open_timeout=5) as ws:
        assert received(ws)["type"] == "welcome"
        join = {"type": "join", "room": "demo"}
        check_client_message(join)
        ws.send(json.dumps(join))
        assert received(ws)["type"] == "snapshot"


def test_required_mode_without_secret_does_not_start():
    result = subprocess.run([BINARY, "--port", "0", "--auth", "required"], cwd=REPO, capture_output=True, text=True, timeout=20,
                            env={"PATH": "/usr/bin:/bin"})
    assert result.returncode != 0 and "secret" in result.stderr
