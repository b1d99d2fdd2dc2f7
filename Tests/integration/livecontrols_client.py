"""A small, independent protocol-v1 client for the integration tests.

Written from docs/PROTOCOL.md: it keeps the room documents it joined, applies each patch with the
`jsonpatch` library (RFC 6902), checks that versions arrive one by one, and resolves intents by id.
"""
from __future__ import annotations

import itertools
import json
import time
from typing import Any, Callable

import jsonpatch
from websockets.sync.client import connect as ws_connect

DEFAULT_TIMEOUT = 5.0


class ProtocolViolation(AssertionError):
    pass


class Client:
    _ids = itertools.count(1)

    def __init__(self, url: str, subprotocol: bool = False, timeout: float = DEFAULT_TIMEOUT):
        kwargs = {"subprotocols": ["livecontrols.v1"]} if subprotocol else {}
        # max_queue=None: the background reader never applies backpressure, so a busy test is never a slow consumer.
        self.ws = ws_connect(url, open_timeout=timeout, close_timeout=2, max_size=None, max_queue=None, **kwargs)
        self.timeout = timeout
        self.inbox: list[dict] = []
        self.log: list[dict] = []  # every message received, in order
        self.rooms: dict[str, dict] = {}  # room -> {"epoch", "version", "state"}
        self.patches: dict[str, list[dict]] = {}  # room -> patches applied, in order
        welcome = self._read(timeout)
        if welcome.get("type") != "welcome":
            raise ProtocolViolation(f"first message is not welcome: {welcome}")
        self.session = welcome["session"]

    # -- sending -----------------------------------------------------------------------------------
    def send(self, message: Any) -> None:
        self.ws.send(message if isinstance(message, (str, bytes)) else json.dumps(message))

    def join(self, room: str = "demo", **fields) -> dict:
        """Joins and returns the snapshot (or the `resumed` message)."""
        self.send({"type": "join", "room": room, **fields})
        return self.recv(lambda m: m.get("room") == room and m["type"] in ("snapshot", "resumed", "error"))

    def leave(self, room: str = "demo", id: Any = None) -> dict:
        msg = {"type": "leave", "room": room}
        if id is not None:
            msg["id"] = id
        self.send(msg)
        return self.recv(lambda m: m.get("room") == room and m["type"] in ("left", "error"))

    def intent(self, control: str, intent: str, args: dict | None = None, room: str = "demo", id: Any = None) -> dict:
        """Sends an intent and returns its `ack` or `error`."""
        if id is None:
            id = f"t{next(self._ids)}"
        msg = {"type": "intent", "id": id, "room": room, "control": control, "intent": intent}
        if args is not None:
            msg["args"] = args
        self.send(msg)
        return self.recv(lambda m: m["type"] in ("ack", "error") and m.get("id") == id)

    def presence(self, data: dict, room: str = "demo", id: Any = None) -> dict | None:
        """Sets presence data; with an id, returns its `ack` or `error`."""
        msg = {"type": "presence", "room": room, "data": data}
        if id is None:
            self.send(msg)
            return None
        msg["id"] = id
        self.send(msg)
        return self.recv(lambda m: m["type"] in ("ack", "error") and m.get("id") == id)

    # -- receiving ---------------------------------------------------------------------------------
    def _read(self, timeout: float) -> dict:
        raw = self.ws.recv(timeout=timeout)
        if isinstance(raw, bytes):
            raise ProtocolViolation("server sent a binary frame")
        msg = json.loads(raw)
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
