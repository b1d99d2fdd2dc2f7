"""A deliberately crude WebSocket client on a plain socket, for misbehaving on purpose:
it can stop reading (with a tiny receive buffer) while the server keeps sending. The messages it sends as dicts and
the ones `read_json` returns are checked against docs/asyncapi.yaml (`protocol_schema`); text sent as a str, and
frames sent with `send_frame`, are not."""
from __future__ import annotations

import base64
import json
import os
import socket
import struct

from protocol_schema import check_client_message, check_server_message


def encode_frame(opcode: int, payload: bytes, *, announced: int | None = None, masked: bool = True, fin: bool = True) -> bytes:
    """One WebSocket frame as a client sends it (masked unless told otherwise); `announced` puts another length in
    its header (a lie)."""
    n = len(payload) if announced is None else announced
    mask_bit = 0x80 if masked else 0
    header = bytes([(0x80 if fin else 0) | opcode])
    if n < 126:
        header += bytes([mask_bit | n])
    elif n < 65536:
        header += bytes([mask_bit | 126]) + struct.pack("!H", n)
    else:
        header += bytes([mask_bit | 127]) + struct.pack("!Q", n)
    if masked:
        mask = os.urandom(4)
        header += mask
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return header + payload


class RawClient:
    def __init__(self, port: int, recv_buffer: int | None = None, path: str = "/ws", headers: dict | None = None):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if recv_buffer:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, recv_buffer)
        self.sock.settimeout(10)
        self.sock.connect(("127.0.0.1", port))
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
            + "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items()) + "\r\n"
        ).encode())
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("closed during handshake")
            self.buffer += chunk
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise ConnectionError(head.decode(errors="replace"))

    def send_text(self, text: str | dict, validate: bool = True) -> None:
        if isinstance(text, dict) and validate:
            check_client_message(text)
        self.sock.sendall(encode_frame(0x1, (json.dumps(text) if isinstance(text, dict) else text).encode()))

    def send_frame(self, opcode: int, payload: bytes, *, announced: int | None = None, masked: bool = True,
                   fin: bool = True) -> None:
        """One frame (final unless told otherwise), masked unless told otherwise; `announced` puts another length
        in its header (a lie)."""
        self.sock.sendall(encode_frame(opcode, payload, announced=announced, masked=masked, fin=fin))

    def read_close(self) -> int | None:
        """Reads until the server's close frame; its code (None: a close without a code, or none at all)."""
        try:
            while True:
                op, payload = self.read_frame()
                if op == 8:
                    return struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
        except (EOFError, ConnectionResetError):
            return None

    def _need(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("connection closed")
            self.buffer += chunk
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def read_frame(self) -> tuple[int, bytes]:
        """Returns (opcode, payload); opcode 8 is a close frame."""
        op, payload, _ = self.read_frame_fin()
        return op, payload

    def read_frame_fin(self) -> tuple[int, bytes, bool]:
        """Returns (opcode, payload, FIN); opcode 0 is a continuation (of a message sent in fragments)."""
        b0, b1 = self._need(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack("!H", self._need(2))[0]
        elif n == 127:
            n = struct.unpack("!Q", self._need(8))[0]
        return b0 & 0x0F, self._need(n), bool(b0 & 0x80)

    def read_json(self) -> dict:
        """The next text message, its fragments (RFC 6455 §5.4) put together; control frames may come between them."""
        fragments: list[bytes] | None = None
        while True:
            op, payload, fin = self.read_frame_fin()
            if op == 1 or (op == 0 and fragments is not None):
                assert (op == 1) == (fragments is None), "a new message began inside a fragmented one"
                fragments = (fragments or []) + [payload]
                if not fin:
                    continue
                message = json.loads(b"".join(fragments))
                check_server_message(message)
                return message
            assert op != 0, "a continuation frame with no message begun"
            if op == 8:
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                raise ConnectionAbortedError(code)

    def close(self) -> None:
        self.sock.close()
