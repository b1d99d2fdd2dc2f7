"""Undo and redo (docs/PROTOCOL.md, *Undo and redo*): a member takes back its user's last change (the parts it changed go
back), one more change of the room; conflict naming who changed the part since; the user's devices share the stacks and
hear their sizes (undoable); a reconnect keeps them; typed refusals; a text undo keeps what others typed; a cluster."""
from __future__ import annotations

import json
import time

import pytest

from auth_tokens import mint_token
from redis_server import cluster, redis_server  # noqa: F401  (fixtures)

SECRET = "z" * 32


@pytest.fixture
def configured(start_server, tmp_path):
    def start(undo=None, *args):
        template = {"controls": {"q": {"kind": "stepper", "min": 0, "max": 100, "value": 0},
                                 "note": {"kind": "text", "text": "one two three"}}}
        if undo is not None:
            template["undo"] = undo
        path = tmp_path / f"config-{time.monotonic_ns()}.json"
        path.write_text(json.dumps({"templates": {"t": template}, "rooms": {"r": {"template": "t"}}}))
        return start_server("--config", str(path), "--auth", "required", "--auth-secret", SECRET, *args)
    return start


def token(*args: str) -> str:
    return mint_token(SECRET, "--role", "editor", "--room", "r", *args)


def undo(client, id, redo=False, room="r"):
    client.send({"type": "redo" if redo else "undo", "room": room, "id": id})
    return client.recv(lambda m: m["type"] in ("ack", "error") and m.get("id") == id)


def undoable(client, room="r"):
    m = client.recv(lambda m: m["type"] == "undoable" and m["room"] == room)
    return m["undo"], m["redo"]


def join(client, room="r", **fields):
    """Joins, and returns the sizes of the user's stacks the server tells after the snapshot."""
    client.join(room, **fields)
    return undoable(client, room)


def test_a_users_devices_share_its_stacks_and_hear_their_sizes(configured):
    s = configured()
    laptop, phone, bob = s.client(), s.client(), s.client()
    assert join(laptop, token=token("--subject", "ann", "--name", "Ann")) == (0, 0)
    join(phone, token=token("--subject", "ann", "--name", "Ann"))
    join(bob, token=token("--subject", "bob", "--name", "Bob"))
    assert laptop.intent("q", "set", {"value": 5}, room="r")["type"] == "ack"
    assert undoable(laptop) == (1, 0) and undoable(phone) == (1, 0), "both of Ann's devices"
    bob.expect_silence(lambda m: m["type"] == "undoable", 0.2)

    ack = undo(phone, "u1")
    assert ack["type"] == "ack", ack
    patch = bob.recv(lambda m: m["type"] == "patch" and m["cause"]["kind"] == "undo")
    assert patch["cause"] == {"kind": "undo", "session": phone.session, "control": "q", "intent": "set", "id": "u1"}
    assert {"op": "replace", "path": "/controls/q/value", "value": 0} in patch["ops"]
    assert patch["version"] == ack["version"]
    assert undoable(laptop) == (0, 1) and undoable(phone) == (0, 1)
    assert undo(laptop, "r1", redo=True)["type"] == "ack"
    bob.wait_state(lambda st: st["controls"]["q"]["value"] == 5, room="r")
    laptop.send({"type": "join", "room": "r", "id": "again"})  # a resync is told the sizes again
    assert laptop.recv(lambda m: m.get("id") == "again")["type"] == "snapshot"
    assert undoable(laptop) == (1, 0) and undoable(laptop) == (1, 0), "after the redo, then after the resync"
    assert bob.recv(lambda m: m["type"] == "patch" and m["cause"]["kind"] == "redo")["cause"]["session"] == laptop.session

    # Bob's change of the same value since: conflict, naming him; nothing changes.
    assert bob.intent("q", "set", {"value": 9}, room="r")["type"] == "ack"
    laptop.wait_state(lambda st: st["controls"]["q"]["value"] == 9, room="r")
    refused = undo(laptop, "u2")
    assert refused["code"] == "conflict", refused
    assert refused["by"] == {"session": bob.session, "name": "Bob", "user": "bob"}
    assert "Bob" in refused["message"]
    bob.expect_silence(lambda m: m["type"] == "patch", 0.2)
    assert undo(bob, "b1")["type"] == "ack"
    assert undo(bob, "b2")["code"] == "nothing_to_undo"


def test_a_reconnect_keeps_the_stack_and_a_text_undo_keeps_what_others_typed(configured):
    s = configured()
    ann, bob = s.client(), s.client()
    join(ann, token=token("--subject", "ann", "--name", "Ann"))
    join(bob, token=token("--subject", "bob", "--name", "Bob"))
    ann.intent("note", "splice", {"at": 3, "insert": " and a half", "base": 0}, room="r")
    bob.intent("note", "splice", {"at": 0, "insert": "Just ", "base": 1}, room="r")
    ann.close()

    again = s.client()
    assert join(again, token=token("--subject", "ann", "--name", "Ann")) == (1, 0), "told at the join: the user has a change to undo"
    assert undo(again, "u1")["type"] == "ack"
    patch = bob.recv(lambda m: m["type"] == "patch" and m["cause"]["kind"] == "undo")
    assert patch["cause"]["splices"] == [{"at": 8, "delete": 11, "insert": ""}], "Ann's edit as applied, moved past Bob's"
    lines = bob.wait_state(lambda st: st["controls"]["note"]["rev"] == 3, room="r")["controls"]["note"]["lines"]
    assert lines == ["Just one two three"]


def test_refusals_are_typed(configured):
    s = configured()
    ann, viewer = s.client(), s.client()
    join(ann, token=token("--subject", "ann"))
    join(viewer, token=mint_token(SECRET, "--role", "viewer", "--room", "r"))
    assert undo(ann, "n")["code"] == "nothing_to_undo"
    assert undo(ann, "n2", redo=True)["code"] == "nothing_to_undo"
    assert undo(viewer, "v")["code"] == "forbidden"
    assert undo(ann, "j", room="elsewhere")["code"] == "not_joined"
    ann.send({"type": "undo", "id": "x"}, validate=False)
    assert ann.recv(lambda m: m.get("id") == "x")["code"] == "invalid_message"
    # A click (a press and its release) is one change; a timer is not recorded.
    ann.intent("q", "press", {"direction": "next"}, room="r")
    ann.intent("q", "release", room="r")
    assert undoable(ann) == (1, 0)
    assert undo(ann, "h")["type"] == "ack"
    assert ann.state("r")["controls"]["q"]["value"] == 0
    assert undoable(ann) == (0, 1)

    off = configured(False)
    c = off.client()
    c.join("r", token=token("--subject", "ann"))
    c.intent("q", "next", room="r")
    c.expect_silence(lambda m: m["type"] == "undoable", 0.2)  # a room that records nothing tells nothing
    refused = undo(c, "o")
    assert refused["code"] == "nothing_to_undo" and "turned undo off" in refused["message"]


def test_a_cluster_undoes_at_the_owner_and_tells_every_node(cluster):  # noqa: F811
    n0, n1 = cluster(2)
    ann, bob, phone = n0.client(), n1.client(), n1.client()
    join(ann, "team", name="Ann")
    join(bob, "team", name="Bob")
    assert ann.intent("quantity", "set", {"value": 7}, room="team")["type"] == "ack"
    assert undoable(ann, room="team") == (1, 0)
    assert bob.intent("quantity", "set", {"value": 3}, room="team")["type"] == "ack"
    assert undoable(bob, room="team") == (1, 0), "told through Redis: the owner is n0"
    refused = undo(ann, "u1", room="team")
    assert refused["code"] == "conflict" and refused["by"]["name"] == "Bob", refused
    assert undo(bob, "b1", room="team")["type"] == "ack"
    assert undoable(bob, room="team") == (0, 1)
    assert undo(ann, "u2", room="team")["type"] == "ack"
    assert join(phone, "team", name="Phone") == (0, 0), "told through Redis at a join on another node"
    phone.wait_state(lambda st: st["controls"]["quantity"]["value"] == 1, room="team")
