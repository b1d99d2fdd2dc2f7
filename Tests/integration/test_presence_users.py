"""Presence per user (docs/PROTOCOL.md, *Presence*, People, not sessions): sessions whose tokens carry the same `sub` show
the same `user`; webhooks tell user.joined at a user's first session and user.left at its last, also after a restart
(the embedded store keeps each member's user); the server API lists it."""
from __future__ import annotations

import json
import signal
import time

import pytest

from api_client import API, API_KEY
from auth_tokens import mint_token
from webhook_receiver import Receiver, webhook_config

SECRET = "u" * 32


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.stop()


def token(*args: str) -> str:
    return mint_token(SECRET, "--role", "editor", "--room", "main", *args)


def start(start_server, tmp_path, receiver, *extra):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(webhook_config(receiver.endpoint(["member.*", "user.*"]), interval_ms=0)))
    return start_server("--config", str(path), "--api-key", API_KEY, "--auth", "required", "--auth-secret", SECRET, *extra)


def user_events(receiver):
    return [(e["type"], e["data"]["session"], e["data"]["user"]) for e in receiver.events if e["data"]["room"] == "main"]


def test_two_devices_are_one_user_in_presence_webhooks_and_the_api(start_server, tmp_path, receiver):
    s = start(start_server, tmp_path, receiver)
    laptop, phone, bob, anon = s.client(), s.client(), s.client(), s.client()
    laptop.join("main", token=token("--subject", "user-ann", "--name", "Ann"))
    phone.join("main", token=token("--subject", "user-ann", "--name", "Ann"))
    bob.join("main", token=token("--subject", "user-bob", "--name", "Bob"))
    anon.join("main", token=token())
    presence = anon.state("main")["presence"]
    assert {session: m["user"] for session, m in presence.items()} == {
        laptop.session: "user-ann", phone.session: "user-ann", bob.session: "user-bob", anon.session: None}
    members = API(s).get("/rooms/main/members").json()["members"]
    assert [m["user"] for m in members] == ["user-ann", "user-ann", "user-bob", None]

    receiver.wait_for("member.joined", 4)
    assert user_events(receiver) == [
        ("member.joined", laptop.session, "user-ann"), ("user.joined", laptop.session, "user-ann"),
        ("member.joined", phone.session, "user-ann"),
        ("member.joined", bob.session, "user-bob"), ("user.joined", bob.session, "user-bob"),
        ("member.joined", anon.session, None),
    ]
    laptop.leave("main")
    receiver.wait_for("member.left", 1)
    phone.close()
    receiver.wait_for("user.left", 1)
    left = [e for e in user_events(receiver) if e[0] in ("member.left", "user.left")]
    assert left == [("member.left", laptop.session, "user-ann"), ("member.left", phone.session, "user-ann"),
                    ("user.left", phone.session, "user-ann")], "user.left only when the last device left"
    leave = [bob.recv(lambda m: m["type"] == "patch" and m["cause"].get("kind") == "leave") for _ in range(2)]
    assert [(p["cause"].get("user"), p["cause"].get("userLeft")) for p in leave] == [("user-ann", None), ("user-ann", True)]


def test_after_a_restart_every_user_leaves_with_its_last_session(start_server, tmp_path, receiver):
    data = tmp_path / "data"
    s = start(start_server, tmp_path, receiver, "--data-dir", str(data))
    a, b = s.client(), s.client()
    a.join("main", token=token("--subject", "user-ann"))
    b.join("main", token=token("--subject", "user-ann"))
    receiver.wait_for("user.joined", 1)
    s.proc.send_signal(signal.SIGKILL)
    s.proc.wait(10)
    start(start_server, tmp_path, receiver, "--data-dir", str(data))
    receiver.wait_for("user.left", 1)
    left = [e for e in user_events(receiver) if e[0] in ("member.left", "user.left")]
    assert left == [("member.left", a.session, "user-ann"), ("member.left", b.session, "user-ann"), ("user.left", b.session, "user-ann")]
    assert all(e["data"]["reason"] == "restart" for e in receiver.of("member.left"))


def test_a_join_again_with_another_users_token_is_refused(start_server, tmp_path, receiver):
    s = start(start_server, tmp_path, receiver)
    c = s.client()
    c.join("main", token=token("--subject", "user-ann"))
    again = c.join("main", token=token("--subject", "user-bob"))
    assert again["type"] == "error" and again["code"] == "conflict" and "another user" in again["message"], again
    assert c.join("main", token=token("--subject", "user-ann"))["type"] == "snapshot", "the same user's fresh token is fine"
