"""The server API's members route (`DELETE /api/v1/rooms/{room}/members/{session}`) against the real server: the close
with 4001, the session out of its rooms at once, and every intent of it acked or never applied."""
from __future__ import annotations

import json

import pytest
from websockets.exceptions import ConnectionClosed

from api_client import API, API_KEY, error
from rawws import RawClient, encode_frame
from test_api import api, api_server  # noqa: F401  (fixtures)


def test_disconnecting_a_member_closes_its_connection_with_4001(api, api_server, connect):
    ann = connect(api_server)
    ann.join()
    bob = connect(api_server)
    bob.join()
    response = api.delete(f"/rooms/demo/members/{ann.session}")
    assert response.status_code == 200 and response.json() == {"room": "demo", "session": ann.session, "disconnected": True}
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            ann.recv(timeout=5)
    assert closed.value.rcvd.code == 4001
    bob.wait_state(lambda s: ann.session not in s["presence"])
    assert error(api.delete(f"/rooms/demo/members/{ann.session}"))["code"] == "not_found"
    assert error(api.delete("/rooms/demo/members/s000"))["code"] == "not_found"
    unknown = api.delete("/rooms/nosuch/members/s000")  # was not_found, unlike every other route of a room
    assert unknown.status_code == 404 and error(unknown)["code"] == "unknown_room"
    for bad in ["s%20x", "s%C3%A9", "s" * 65, "s.x"]:  # no session id looks so
        refused = api.delete(f"/rooms/demo/members/{bad}")
        assert refused.status_code == 400 and error(refused)["code"] == "invalid_message", bad


def test_a_disconnected_session_is_out_of_its_rooms_before_its_client_answers_the_close(api, api_server):
    # A client that reads nothing never answers the 4001 close (lws waits 5 s for it): the session used to stay a
    # member, in presence and in GET …/members, until then, and a second DELETE was 200 again.
    silent = RawClient(api_server.port)
    session = silent.read_json()["session"]
    silent.send_text({"type": "join", "room": "demo", "id": "j"})
    assert silent.read_json()["type"] == "snapshot"
    assert api.delete(f"/rooms/demo/members/{session}").json()["disconnected"] is True
    assert all(m["session"] != session for m in api.get("/rooms/demo/members").json()["members"])
    assert error(api.delete(f"/rooms/demo/members/{session}"))["code"] == "not_found"
    assert silent.read_close() == 4001, "the close was still sent"


def test_a_disconnected_sessions_intents_are_acked_or_never_applied(start_server, tmp_path):
    # With --data-dir an ack waits for the store: the close used to drop the acks still waiting, though their intents
    # were applied and stored (the same as at shutdown: test_shutdown).
    s = start_server("--api-key", API_KEY, "--data-dir", str(tmp_path), "--rate", "100000", "--burst", "100000")
    durable = API(s)
    raw = RawClient(s.port)
    session = raw.read_json()["session"]
    raw.send_text({"type": "join", "room": "demo", "id": "j"})
    joined = raw.read_json()
    raw.sock.sendall(b"".join(encode_frame(0x1, json.dumps({"type": "intent", "room": "demo", "control": "quantity", "intent": "set",
                                                            "args": {"value": 10 + i % 2}, "id": f"f{i}"}).encode()) for i in range(150)))
    assert durable.delete(f"/rooms/demo/members/{session}").json()["disconnected"] is True
    acked = set()
    while True:
        try:
            message = raw.read_json()
        except ConnectionAbortedError as closed:
            assert closed.args[0] == 4001
            break
        if message["type"] == "ack":
            acked.add(message["id"])
    history = durable.get("/rooms/demo/patches", params={"after": joined["version"]}).json()["patches"]
    applied = {p["cause"]["id"] for p in history if p["cause"]["kind"] == "intent"}
    assert applied == acked, f"applied, never acked: {sorted(applied - acked)[:5]}"
