"""Every bad input gets a typed error (or the right close code) and the server keeps serving."""
import json

import pytest
from websockets.exceptions import ConnectionClosed


def error_for(client, raw):
    client.send(raw)
    return client.recv(lambda m: m["type"] == "error")


@pytest.mark.parametrize(
    "raw, code",
    [
        ("{not json", "invalid_json"),
        ("", "invalid_json"),
        ('{"type": "join", "room": "demo"} trailing', "invalid_json"),
        ("[1, 2]", "invalid_message"),
        ('"join"', "invalid_message"),
        ('{"room": "demo"}', "invalid_message"),
        ('{"type": 7}', "invalid_message"),
        ('{"type": "subscribe", "room": "demo"}', "unknown_type"),
        ('{"type": "join"}', "invalid_message"),
        ('{"type": "join", "room": ""}', "invalid_message"),
        ('{"type": "join", "room": "has space"}', "invalid_message"),
        ('{"type": "join", "room": "demo", "since": {"epoch": 1}}', "invalid_message"),
        ('{"type": "intent", "room": "demo", "control": "quantity", "intent": "next"}', "invalid_message"),
        ('{"type": "intent", "id": "x", "room": "demo", "control": "quantity", "intent": "next", "args": [1]}', "invalid_message"),
        ('{"type": "intent", "id": {}, "room": "demo", "control": "quantity", "intent": "next"}', "invalid_message"),
        # PROTOCOL.md: required fields may not be null, integers are written as integers.
        ('{"type": "join", "room": null}', "invalid_message"),
        ('{"type": "intent", "id": null, "room": "demo", "control": "quantity", "intent": "next"}', "invalid_message"),
        ('{"type": "intent", "id": "x", "room": "demo", "control": null, "intent": "next"}', "invalid_message"),
        ('{"type": "join", "room": "demo", "since": {"epoch": "e", "version": 4.0}}', "invalid_message"),
    ],
)
def test_malformed_messages_get_typed_errors(clients, raw, code):
    c = clients()
    err = error_for(c, raw)
    assert err["code"] == code, err
    assert err["message"]
    # The connection stays usable.
    assert c.join()["type"] == "snapshot"


def test_null_optional_fields_count_as_absent(clients):
    """PROTOCOL.md: `null` for an optional field is the field missing — `args`, a join's `template`, `name`, `token`,
    `since`, a leave's `id`."""
    c = clients()
    c.send(json.dumps({"type": "join", "room": "demo", "template": None, "name": None, "token": None, "since": None, "id": None}))
    assert c.recv(lambda m: m["type"] in ("snapshot", "error"))["type"] == "snapshot"
    c.send(json.dumps({"type": "intent", "id": "n", "room": "demo", "control": "quantity", "intent": "next", "args": None}))
    assert c.recv(lambda m: m.get("id") == "n")["type"] == "ack"


def test_errors_echo_the_request_id(clients):
    c = clients()
    err = error_for(c, json.dumps({"type": "bogus", "id": "q7"}))
    assert err["code"] == "unknown_type" and err["id"] == "q7"


@pytest.mark.parametrize(
    "control, intent, args, code",
    [
        ("nope", "next", None, "unknown_control"),
        ("quantity", "jump", None, "unknown_intent"),
        ("quantity", "set", None, "invalid_args"),
        ("quantity", "set", {"value": "3"}, "invalid_args"),
        ("quantity", "set", {"value": 2.5}, "invalid_args"),
        ("quantity", "set", {"value": 100}, "out_of_range"),
        ("quantity", "set", {"value": -1}, "out_of_range"),
        ("quantity", "press", None, "invalid_args"),
        ("quantity", "press", {"direction": "up"}, "invalid_args"),
        ("quantity", "release", None, "not_holder"),
    ],
)
def test_bad_intents_are_refused_and_change_nothing(clients, control, intent, args, code):
    c = clients()
    c.join()
    before = (c.version(), c.state())
    # Malformed on purpose (unknown_intent, invalid_args): not checked against docs/asyncapi.yaml before sending.
    err = c.intent(control, intent, args, id="bad", validate=code not in ("unknown_intent", "invalid_args"))
    assert err["type"] == "error" and err["code"] == code and err["id"] == "bad" and err["room"] == "demo", err
    assert (c.version(), c.state()) == before
    assert c.intent("quantity", "next")["type"] == "ack"


def test_intent_before_join_is_not_joined(clients):
    c = clients()
    err = c.intent("quantity", "next", id=1)
    assert err["code"] == "not_joined" and err["id"] == 1


def test_leave_of_a_room_not_joined_is_not_joined(clients):
    c = clients()
    assert c.leave("demo")["code"] == "not_joined"


def test_unknown_template_is_refused(clients):
    c = clients()
    err = c.join("new-room", template="nope", id="j")
    assert err["type"] == "error" and err["code"] == "unknown_template" and err["id"] == "j"


def test_prev_at_the_lower_bound_is_at_bound(clients):
    c = clients()
    c.join()
    c.intent("quantity", "set", {"value": 0})
    assert c.intent("quantity", "prev")["code"] == "at_bound"


def close_code(client):
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            client.ws.recv(timeout=5)
    return closed.value.rcvd.code if closed.value.rcvd else None


def test_oversized_message_closes_with_1009_and_others_carry_on(clients):
    big, other = clients(), clients()
    other.join()
    big.join()
    big.send(json.dumps({"type": "join", "room": "demo", "name": "x" * (70 * 1024)}))
    assert close_code(big) == 1009
    assert other.intent("quantity", "next")["type"] == "ack"


def test_message_just_under_the_limit_is_accepted(clients):
    c = clients()
    msg = json.dumps({"type": "intent", "id": "p", "room": "demo", "control": "quantity", "intent": "next", "args": {"pad": ""}})
    pad = 64 * 1024 - len(msg)
    c.join()
    c.send(msg.replace('"pad": ""', '"pad": "' + "y" * pad + '"'))
    assert c.recv(lambda m: m.get("id") == "p")["type"] == "ack"


def test_fragmented_message_is_reassembled(clients):
    c = clients()
    text = json.dumps({"type": "join", "room": "demo", "name": "frag"})
    c.ws.send(iter([text[:5], text[5:17], text[17:]]))
    assert c.recv(lambda m: m["type"] == "snapshot")["state"]["presence"][c.session]["name"] == "frag"


def test_binary_frame_closes_with_1003(clients):
    c, other = clients(), clients()
    other.join()
    c.send(b'{"type": "join", "room": "demo"}')
    assert close_code(c) == 1003
    assert other.intent("quantity", "next")["type"] == "ack"


def test_invalid_utf8_closes_the_connection_and_others_carry_on(clients):
    c, other = clients(), clients()
    other.join()
    with c.ws.protocol_mutex:  # websockets refuses to send invalid UTF-8 through its public API
        c.ws.protocol.send_text(b'{"type": "join", "room": "\xff"}')
        c.ws.send_data()
    code = close_code(c)
    assert code == 1007
    assert other.intent("quantity", "next")["type"] == "ack"


def test_an_intent_read_just_before_a_frame_lws_refuses_is_acked_or_dropped_never_cut_short(server):
    """An intent and a frame libwebsockets closes the connection for (invalid UTF-8), in one write. When the room applies
    the intent in the pass that read it (its queue idle: the usual case), its patch and ack leave before lws's close
    frame (found by a review: for a while they were dropped, applied but never acked). When the room still had work
    queued (here, often, the previous connection's leave), the intent waits for it, lws's close comes first, and the
    intent is dropped, never applied (issue 41: this test assumed the first case only, and failed 3 runs in 5)."""
    import json
    from rawws import RawClient, encode_frame

    acked = 0
    for _ in range(20):
        raw = RawClient(server.port)
        assert raw.read_json()["type"] == "welcome"
        raw.send_text({"type": "join", "room": "demo"})
        while (m := raw.read_json())["type"] != "snapshot":
            pass
        value = 2 if m["state"]["controls"]["quantity"]["value"] == 1 else 1  # a change: a patch, then the ack
        intent = {"type": "intent", "id": "last", "room": "demo", "control": "quantity", "intent": "set", "args": {"value": value}}
        raw.sock.sendall(encode_frame(1, json.dumps(intent).encode()) + encode_frame(1, b'{"x": "\xff"}'))
        seen = []
        while True:
            opcode, body = raw.read_frame()
            if opcode == 8:
                seen.append(("close", int.from_bytes(body[:2], "big")))
                break
            if (kind := json.loads(body)["type"]) != "undoable":  # (the sizes of the session's undo stack: not this test's)
                seen.append(kind)
        raw.close()
        assert seen in (["patch", "ack", ("close", 1007)], [("close", 1007)]), seen
        acked += seen[0] == "patch"
    assert acked > 0, "an intent the room applied in the pass that read it is acked before the close frame"


@pytest.mark.parametrize("opcode, payload, code", [
    (0x2, b"{}", 1003),  # a binary frame: the server asks for the close
    (0x1, b'{"type": "join", "room": "\xff"}', 1007),  # invalid UTF-8: libwebsockets closes by itself
], ids=["1003-binary", "1007-invalid-utf8"])
def test_nothing_follows_the_servers_close_frame(server, clients, opcode, payload, code):
    """After the server's close frame the client gets no more data, even though lws waits a while for the close
    answer this client never sends and the room keeps changing meanwhile — whether the server asked for the close or
    libwebsockets began it (it then sends the close frame itself)."""
    import os
    import socket
    from rawws import RawClient

    raw = RawClient(server.port)
    assert raw.read_json()["type"] == "welcome"
    raw.send_text({"type": "join", "room": "demo"})
    while raw.read_json()["type"] != "snapshot":
        pass
    other = clients()
    other.join()
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    raw.sock.sendall(bytes([0x80 | opcode, 0x80 | len(masked)]) + mask + masked)
    while True:
        frame_opcode, body = raw.read_frame()
        if frame_opcode == 8:
            assert int.from_bytes(body[:2], "big") == code
            break
    for _ in range(5):  # patches for everyone in the room, the closing client still among them
        assert other.intent("quantity", "next")["type"] == "ack"
    raw.sock.settimeout(1)
    try:
        while True:
            frame_opcode, _ = raw.read_frame()
            assert frame_opcode not in (1, 2), "data after the server's close frame"
    except (socket.timeout, EOFError, ConnectionResetError):
        pass
    raw.close()
