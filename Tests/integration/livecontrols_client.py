"""A small, independent protocol-v1 client for the integration tests.

Written from docs/PROTOCOL.md: it keeps the room documents it joined, applies each patch with the
`jsonpatch` library (RFC 6902), checks that versions arrive one by one, and resolves intents by id. Every message
it sends (a dict; raw text or bytes, or `validate=False`, for bad input on purpose) and every message it receives is
checked against docs/asyncapi.yaml (`protocol_schema`): a mismatch raises ProtocolViolation.
"""
from __future__ import annotations

import itertools
import json
import time
from typing import Any, Callable

import jsonpatch
from websockets.sync.client import connect as ws_connect

from protocol_schema import ProtocolViolation, check_client_message, check_server_message, check_state_parts

DEFAULT_TIMEOUT = 5.0


class Client:
    _ids = itertools.count(1)

    def __init__(self, url: str, subprotocol: bool = False, timeout: float = DEFAULT_TIMEOUT, validate: bool = True):
        kwargs = {"subprotocols": ["livecontrols.v1"]} if subprotocol else {}
        # max_queue=None: the background reader never applies backpressure, so a busy test is never a slow consumer.
        self.ws = ws_connect(url, open_timeout=timeout, close_timeout=2, max_size=None, max_queue=None, **kwargs)
        self.timeout = timeout
        self.validate = validate  # check every message against docs/asyncapi.yaml
        self.inbox: list[dict] = []
        self.log: list[dict] = []  # every message received, in order
        self.rooms: dict[str, dict] = {}  # room -> {"epoch", "version", "state"}
        self.patches: dict[str, list[dict]] = {}  # room -> patches applied, in order
        welcome = self._read(timeout)
        if welcome.get("type") != "welcome":
            raise ProtocolViolation(f"first message is not welcome: {welcome}")
        self.session = welcome["session"]

    # -- sending -----------------------------------------------------------------------------------
    def send(self, message: Any, validate: bool = True) -> None:
        """Sends a message: a dict is checked against docs/asyncapi.yaml first (unless `validate=False`, for a
        malformed one on purpose); str and bytes go out as they are."""
        if isinstance(message, (str, bytes)):
            self.ws.send(message)
            return
        if validate and self.validate:
            check_client_message(message, self.kind_of)
        self.ws.send(json.dumps(message))

    def kind_of(self, room: str, control: str) -> str | None:
        """The kind of a control in a room this client holds the state of (None when unknown)."""
        return self.rooms.get(room, {}).get("state", {}).get("controls", {}).get(control, {}).get("kind")

    def join(self, room: str = "demo", validate: bool = True, **fields) -> dict:
        """Joins and returns the snapshot (or the `resumed` message)."""
        self.send({"type": "join", "room": room, **fields}, validate=validate)
        return self.recv(lambda m: m.get("room") == room and m["type"] in ("snapshot", "resumed", "error"))

    def leave(self, room: str = "demo", id: Any = None, validate: bool = True) -> dict:
        msg = {"type": "leave", "room": room}
        if id is not None:
            msg["id"] = id
        self.send(msg, validate=validate)
        return self.recv(lambda m: m.get("room") == room and m["type"] in ("left", "error"))

    def intent(self, control: str, intent: str, args: Any = None, room: str = "demo", id: Any = None,
               validate: bool = True) -> dict:
        """Sends an intent and returns its `ack` or `error`; `validate=False` for args that are wrong on purpose."""
        if id is None:
            id = f"t{next(self._ids)}"
        msg = {"type": "intent", "id": id, "room": room, "control": control, "intent": intent}
        if args is not None:
            msg["args"] = args
        self.send(msg, validate=validate)
        return self.recv(lambda m: m["type"] in ("ack", "error") and m.get("id") == id)

    def presence(self, data: Any, room: str = "demo", id: Any = None, validate: bool = True) -> dict | None:
        """Sets presence data; with an id, returns its `ack` or `error`."""
        msg = {"type": "presence", "room": room, "data": data}
        if id is None:
            self.send(msg, validate=validate)
            return None
        msg["id"] = id
        self.send(msg, validate=validate)
        return self.recv(lambda m: m["type"] in ("ack", "error") and m.get("id") == id)

    # -- receiving ---------------------------------------------------------------------------------
    def _read(self, timeout: float) -> dict:
        raw = self.ws.recv(timeout=timeout)
        if isinstance(raw, bytes):
            raise ProtocolViolation("server sent a binary frame")
        try:
            msg = json.loads(raw)
        except ValueError as e:
            raise ProtocolViolation(f"server sent a text frame that is not JSON ({e}): {raw[:200]!r}") from None
        if self.validate:
            check_server_message(msg)
        self.log.append(msg)
        self._track(msg)
        return msg

    def _track(self, msg: dict) -> None:
        t = msg.get("type")
        if t == "snapshot":
            self.rooms[msg["room"]] = {"epoch": msg["epoch"], "version": msg["version"], "state": msg["state"]}
            self.patches[msg["room"]] = []
        elif t == "resumed":
            room = self.rooms[msg["room"]]
            if room["epoch"] != msg["epoch"] or room["version"] != msg["from"]:
                raise ProtocolViolation(f"resumed from {msg['from']} but we are at {room['version']}")
        elif t == "patch":
            room = self.rooms.get(msg["room"])
            if room is None:
                raise ProtocolViolation(f"patch for a room without snapshot: {msg}")
            if msg["epoch"] != room["epoch"] or msg["version"] != room["version"] + 1:
                raise ProtocolViolation(f"version gap: at {room['version']}, got {msg['version']}")
            room["state"] = jsonpatch.apply_patch(room["state"], msg["ops"])
            if self.validate:
                check_state_parts(room["state"], msg["ops"])
            room["version"] = msg["version"]
            self.patches[msg["room"]].append(msg)

    def recv(self, predicate: Callable[[dict], bool] | None = None, timeout: float | None = None) -> dict:
        """Returns the first message (already buffered or new) that matches, within `timeout`."""
        for i, m in enumerate(self.inbox):
            if predicate is None or predicate(m):
                return self.inbox.pop(i)
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no matching message within the timeout")
            try:
                m = self._read(left)
            except TimeoutError:
                raise TimeoutError("no matching message within the timeout") from None
            if predicate is None or predicate(m):
                return m
            self.inbox.append(m)

    def expect_silence(self, predicate: Callable[[dict], bool], timeout: float) -> None:
        """Reads new messages for `timeout` seconds; fails if one matches `predicate`."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                m = self._read(left)
            except TimeoutError:
                return
            if predicate(m):
                raise ProtocolViolation(f"unexpected message: {m}")
            self.inbox.append(m)

    def wait_version(self, version: int, room: str = "demo", timeout: float | None = None) -> dict:
        """Reads until the room document reaches `version`; returns the document."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while self.rooms.get(room, {}).get("version", -1) < version:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"room {room} did not reach version {version}")
            self.inbox.append(self._read(left))
        return self.rooms[room]

    def wait_state(self, predicate: Callable[[dict], bool], room: str = "demo", timeout: float | None = None) -> dict:
        """Reads until the room's state satisfies `predicate`; returns the state."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while not (room in self.rooms and predicate(self.rooms[room]["state"])):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("state never satisfied the predicate")
            self.inbox.append(self._read(left))
        return self.rooms[room]["state"]

    def state(self, room: str = "demo") -> dict:
        return self.rooms[room]["state"]

    def version(self, room: str = "demo") -> int:
        return self.rooms[room]["version"]

    def close(self) -> None:
        self.ws.close()
