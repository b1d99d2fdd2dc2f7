"""Protocol v1 through the real server: join, snapshot, patches, acks, resume, leave."""
import json
import time
import jsonpatch
import pytest

from livecontrols_client import Client
from api_client import API, API_KEY


def test_welcome_names_session_and_protocol_and_the_server_time(clients):
    before = time.time() * 1000
    c = clients()
    after = time.time() * 1000
    assert c.session
    server_time = c.log[0].pop("serverTime")
    assert c.log[0] == {"type": "welcome", "session": c.session, "protocol": "livecontrols.v1"}
    # The server's clock and this machine's are the same one here: serverTime falls while the connection opened.
    assert isinstance(server_time, int) and before - 5 <= server_time <= after + 5


@pytest.mark.parametrize("subprotocol", [False, True])
def test_join_works_with_or_without_subprotocol(clients, subprotocol):
    c = clients(subprotocol=subprotocol)
    snap = c.join("demo", name="Ann")
    assert snap["type"] == "snapshot"
    quantity = snap["state"]["controls"]["quantity"]
    assert quantity["kind"] == "stepper"
    assert (quantity["min"], quantity["max"], quantity["value"]) == (0, 99, 1)
    assert snap["state"]["presence"][c.session] == {"name": "Ann", "user": None, "roles": ["admin"], "holding": [], "editing": [], "data": {}}
    assert isinstance(snap["epoch"], str) and snap["version"] >= 1


def raw_handshake(port: int, path: str = "/ws", extra: str = "") -> bytes:
    """A WebSocket upgrade request sent by hand; the head of a 101, or all of a refusal (its page ends with </html>)."""
    import base64
    import os
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n").encode())
        answer = b""
        while not (b" 101 " in answer.split(b"\r\n", 1)[0] and b"\r\n\r\n" in answer) and b"</html>" not in answer:
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
        return answer


def test_offering_only_other_subprotocols_is_answered_400_not_dropped(server):
    """Found by an audit: lws 4.1 hung up without a response when none of the offered subprotocols was ours."""
    def handshake(offer: str) -> bytes:
        return raw_handshake(server.port, extra=f"Sec-WebSocket-Protocol: {offer}\r\n")

    for offer in ("chat", "chat, http", "http, livecontrols.v1"):  # lws binds the first name it knows: `http` is its
        refused = handshake(offer)
        assert refused.split(b" ", 2)[1] == b"400" and b"offer the subprotocol livecontrols.v1" in refused, (offer, refused)
    for offer in ("chat, livecontrols.v1", "livecontrols.v1, http"):
        assert handshake(offer).startswith(b"HTTP/1.1 101"), offer


def test_an_upgrade_on_another_path_or_from_a_refused_origin_is_answered_not_dropped(start_server):
    """Found by an SDK audit: these upgrades were hung up on without a response, so a client waited out its connect
    time-out (10 s in LiveControlsKit) and reported a time-out instead of the reason."""
    s = start_server("--allowed-origin", "https://app.example.com")
    other_path = raw_handshake(s.port, path="/socket")
    assert other_path.split(b" ", 2)[1] == b"404" and b"/ws only" in other_path, other_path
    refused_origin = raw_handshake(s.port, extra="Origin: https://evil.example.net\r\n")
    assert refused_origin.split(b" ", 2)[1] == b"403" and b"--allowed-origin" in refused_origin, refused_origin
    assert raw_handshake(s.port, extra="Origin: https://app.example.com\r\n").startswith(b"HTTP/1.1 101")
    assert raw_handshake(s.port).startswith(b"HTTP/1.1 101"), "no Origin: not a browser"
    # An HTTP/2 upgrade (h2c) is lws's own business, not a WebSocket on the wrong path (found by a review).
    import subprocess
    h2c = subprocess.run(["curl", "-sS", "--http2", "-o", "/dev/null", "-w", "%{http_code}", s.http_url + "healthz"],
                         capture_output=True, text=True, timeout=20)
    assert h2c.stdout == "200", (h2c.stdout, h2c.stderr)


def test_intent_is_patched_then_acked_with_the_new_version(clients):
    c = clients()
    c.join()
    start = c.version()
    ack = c.intent("quantity", "next", id="n1")
    assert ack == {"type": "ack", "id": "n1", "room": "demo", "version": start + 1}
    patch = c.patches["demo"][-1]
    assert patch["version"] == start + 1
    assert patch["cause"]["kind"] == "intent" and patch["cause"]["id"] == "n1"
    assert patch["cause"]["session"] == c.session
    assert c.state()["controls"]["quantity"]["value"] == 2


def test_integer_request_ids_are_echoed(clients):
    c = clients()
    c.join()
    ack = c.intent("quantity", "set", {"value": 7}, id=42)
    assert ack["id"] == 42 and ack["type"] == "ack"


def test_two_clients_see_identical_patch_sequences(clients):
    a, b = clients(), clients()
    a.join()
    b.join()
    a.wait_version(b.version())
    for intent, args in [("next", None), ("set", {"value": 50}), ("prev", None), ("next", None)]:
        assert a.intent("quantity", intent, args)["type"] == "ack"
    assert b.intent("quantity", "set", {"value": 10})["type"] == "ack"
    a.wait_version(b.version())
    b.wait_version(a.version())
    since = b.patches["demo"][0]["version"]
    seq_a = [p for p in a.patches["demo"] if p["version"] >= since]
    assert seq_a == b.patches["demo"]
    assert a.state() == b.state()


def test_snapshot_plus_patches_equals_a_fresh_snapshot(clients):
    a = clients()
    a.join()
    for v in (5, 9, 99):
        a.intent("quantity", "set", {"value": v})
    a.intent("quantity", "prev")
    fresh = clients()
    snap = fresh.join()
    a.wait_version(snap["version"])
    assert a.state() == snap["state"]


def test_joins_in_a_room_without_presence_see_each_change(start_server, tmp_path):
    """In a room without presence a join changes nothing, so joins at one version share one encoded state (the bytes
    are LiveControlsProtocolTests' concern): a join at the same version gets the same state, a join after a change
    shows the change, and both equal what the other clients hold."""
    config = tmp_path / "rooms.json"
    config.write_text(json.dumps({"templates": {"quiet": {"presence": False, "controls": {
        "quantity": {"kind": "stepper", "max": 9}}}}, "defaultTemplate": "quiet"}))
    s = start_server("--config", str(config))
    a, b, c = s.client(), s.client(), s.client()
    first = a.join("q")
    assert b.join("q")["version"] == first["version"] and b.state("q") == first["state"]
    ack = a.intent("quantity", "next", room="q")
    snap = c.join("q")
    assert snap["version"] == ack["version"] and snap["state"]["controls"]["quantity"]["value"] == 1
    a.wait_version(ack["version"], room="q")
    assert a.state("q") == snap["state"]


def test_patch_ops_apply_with_any_rfc6902_library(clients):
    a = clients()
    snap = a.join()
    doc = snap["state"]
    a.intent("quantity", "next")
    a.intent("quantity", "set", {"value": 3})
    for p in a.patches["demo"]:
        doc = jsonpatch.JsonPatch(p["ops"]).apply(doc)
    assert doc == a.state()


def test_presence_lists_members_and_leave_removes_them(clients):
    a, b = clients(), clients()
    a.join(name="Ann")
    b.join(name="Bob")
    state = a.wait_state(lambda s: b.session in s["presence"])
    assert state["presence"][b.session]["name"] == "Bob"
    left = b.leave(id="bye")
    assert left == {"type": "left", "id": "bye", "room": "demo"}
    a.wait_state(lambda s: b.session not in s["presence"])
    assert b.intent("quantity", "next")["code"] == "not_joined"


def test_second_join_of_a_joined_room_is_a_resync(clients):
    c = clients()
    first = c.join()
    again = c.join(id="r1")
    assert again["type"] == "snapshot" and again["id"] == "r1"
    assert again["version"] == first["version"] and again["state"] == first["state"]


def test_resume_replays_every_version_in_order(server):
    a = server.client()
    snap = a.join()
    state, epoch, version = snap["state"], snap["epoch"], snap["version"]
    a.close()
    b = server.client()
    b.join()
    for v in (11, 12, 13):
        b.intent("quantity", "set", {"value": v})
    resumer = Client(server.ws_url)
    resumer.rooms["demo"] = {"epoch": epoch, "version": version, "state": state}
    resumer.patches["demo"] = []
    resumed = resumer.join(since={"epoch": epoch, "version": version})
    assert resumed["type"] == "resumed"
    # Every missed version arrives, then the resumer's own join.
    target = b.version() + 1
    resumer.wait_version(target)
    versions = [p["version"] for p in resumer.patches["demo"]]
    assert versions == list(range(version + 1, target + 1))
    b.wait_version(target)
    assert resumer.state() == b.state()
    b.close()
    resumer.close()


def test_resume_from_an_unknown_epoch_gets_a_snapshot_marked_not_resumed(clients):
    c = clients()
    snap = c.join(since={"epoch": "not-this-one", "version": 3})
    assert snap["type"] == "snapshot" and snap["resumed"] is False


def test_join_can_name_a_template_for_a_new_room(clients):
    c = clients()
    snap = c.join("fresh-room", template="demo")
    assert snap["room"] == "fresh-room"
    assert snap["state"]["controls"]["quantity"]["value"] == 1
    assert c.intent("quantity", "next", room="fresh-room")["type"] == "ack"


def test_rooms_are_independent(clients):
    a = clients()
    a.join("demo")
    a.join("other")
    a.intent("quantity", "set", {"value": 77}, room="other")
    assert a.state("other")["controls"]["quantity"]["value"] == 77
    fresh = clients()
    assert fresh.join("demo")["state"]["controls"]["quantity"]["value"] != 77


def test_history_limit_zero_disables_resume_even_from_the_current_version(start_server, tmp_path):
    """Issue 17: with `historyLimit: 0` a `since` at the current version still got `resumed`."""
    import json
    path = tmp_path / "rooms.json"
    path.write_text(json.dumps({"historyLimit": 0, "templates": {"t": {"controls": {"quantity": {"kind": "stepper"}}}},
                                "defaultTemplate": "t", "rooms": {"demo": {}}}))
    s = start_server("--config", str(path), "--api-key", API_KEY)
    a = s.client()
    snap = a.join()
    current = {"epoch": snap["epoch"], "version": snap["version"]}
    # The server API's history keeps none either (PROTOCOL.md: every request gets 409).
    kept = API(s).get(f"/rooms/demo/patches?after={snap['version']}")
    assert kept.status_code == 409 and kept.json()["error"]["code"] == "conflict", kept.text
    b = s.client()
    again = b.join(since=current)
    assert again["type"] == "snapshot" and again["resumed"] is False
    a.intent("quantity", "next")
    c = s.client()
    later = c.join(since=current)
    assert later["type"] == "snapshot" and later["resumed"] is False
