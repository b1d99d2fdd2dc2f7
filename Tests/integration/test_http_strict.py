"""HTTP/1.1 framing on a raw socket: pipelined requests each get their own whole response, and requests whose framing
is in doubt are refused with a status (and the connection closed) instead of being guessed at."""
from __future__ import annotations

import json
import os
import pathlib
import socket
import time

import pytest


def exchange(port: int, raw: bytes, responses: int = 1, timeout: float = 5) -> list[tuple[int, dict, bytes]]:
    """Sends `raw` in one write; reads `responses` whole responses (status, headers, body by Content-Length)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    sock.sendall(raw)
    buffer = b""
    out = []

    def need(predicate):
        nonlocal buffer
        while not predicate():
            chunk = sock.recv(65536)
            if not chunk:
                raise EOFError(f"closed after {len(out)} responses; unread: {buffer[:200]!r}")
            buffer += chunk

    try:
        for _ in range(responses):
            need(lambda: b"\r\n\r\n" in buffer)
            head, buffer = buffer.split(b"\r\n\r\n", 1)
            lines = head.decode("latin-1").split("\r\n")
            status = int(lines[0].split()[1])
            headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
            length = int(headers.get("content-length", "0"))
            need(lambda: len(buffer) >= length)
            body, buffer = buffer[:length], buffer[length:]
            out.append((status, headers, body))
    finally:
        sock.close()
    return out


def test_pipelined_requests_each_get_their_own_response(server):
    raw = (b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
           b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n"
           b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    (s1, h1, b1), (s2, h2, b2), (s3, h3, b3) = exchange(server.port, raw, responses=3)
    assert s1 == 200 and h1["content-type"].startswith("application/json") and json.loads(b1)["status"] == "ok"
    assert s2 == 200 and h2["content-type"].startswith("text/html") and b"<script" in b2
    assert s3 == 200 and json.loads(b3)["status"] == "ok"


def head_then_healthz(port: int, head_request: bytes) -> tuple[bytes, bytes]:
    """Sends a HEAD request and a pipelined GET /healthz; the HEAD answer's headers, and everything after them (the
    GET's whole answer, if the HEAD answer carried no body)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(head_request + b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    data = b""
    while data.count(b"\r\n\r\n") < 2 or not data.rstrip().endswith(b"}"):
        chunk = sock.recv(65536)
        assert chunk, data
        data += chunk
    sock.close()
    head, rest = data.split(b"\r\n\r\n", 1)
    return head, rest


def test_a_head_request_gets_headers_only_and_the_next_pipelined_request_its_answer(server):
    head, rest = head_then_healthz(server.port, b"HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and b"content-length:" in head.lower()
    assert rest.startswith(b"HTTP/1.1 200"), "the HEAD answer carried no body"
    assert json.loads(rest.split(b"\r\n\r\n", 1)[1])["status"] == "ok"


def test_a_head_request_to_the_api_gets_its_refusal_without_a_body(start_server):
    s = start_server("--api-key", "head-key-0123456789abcdef")
    head, rest = head_then_healthz(
        s.port, b"HEAD /api/v1/rooms HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer head-key-0123456789abcdef\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 405")
    assert rest.startswith(b"HTTP/1.1 200"), "the HEAD answer carried no body"


def read_until_closed(port: int, raw: bytes, timeout: float = 5) -> bytes:
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    sock.sendall(raw)
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    sock.close()
    return data


def test_a_request_pipelined_behind_an_unanswered_api_request_is_answered_after_it(start_server):
    """An API request is answered later, by its room: the connection reads nothing more until then, so what the client
    pipelined behind it is answered after it, in order; and sequential requests on one keep-alive connection go on
    working."""
    s = start_server("--api-key", "pipelined-key-0123456789")
    auth = b"Authorization: Bearer pipelined-key-0123456789\r\n"
    get_room = b"GET /api/v1/rooms/demo HTTP/1.1\r\nHost: x\r\n" + auth + b"\r\n"
    for follower, expected in ((b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", b'"status":"ok"'),
                               (b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n", b"<script"),
                               (get_room, b'"room":"demo"')):
        answers = exchange(s.port, get_room + follower, responses=2)
        assert [status for status, _, _ in answers] == [200, 200]
        assert b'"room":"demo"' in answers[0][2] and expected in answers[1][2]
    sock = socket.create_connection(("127.0.0.1", s.port), timeout=5)
    for _ in range(3):  # one request at a time: keep-alive
        sock.sendall(get_room)
        reply = b""
        while b'"members"' not in reply:
            reply += sock.recv(65536)
        assert reply.startswith(b"HTTP/1.1 200")
    sock.close()


@pytest.mark.parametrize("raw, status", [
    (b"GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n", 505),
    (b"GET /healthz HTTP/1.1\r\n\r\n", 400),
    (b"POST /api/v1/rooms HTTP/1.1\r\nHost: x\r\nContent-Length : 2\r\n\r\n{}", 400),
    (b"GET /api/v1/rooms HTTP/1.1\r\nHost: x\r\nAuthorization : Bearer " + b"k" * 32 + b"\r\n\r\n", 400),
    (b"GET /healthz HTTP/1.1\r\nHost: x\r\nUser-Agent\t: y\r\n\r\n", 400),
    (b"POST /api/v1/rooms HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", 400),
    (b"POST /api/v1/rooms HTTP/1.1\r\nHost: x\r\nContent-Length: -2\r\n\r\n{}", 400),
    (b"POST /api/v1/rooms HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}", 400),
    (b"GET /healthz\r\n\r\n", 400),
    (b"GET /healthz%0Ax HTTP/1.1\r\nHost: x\r\n\r\n", 400),
], ids=["unknown-version", "no-host", "space-before-colon", "space-before-colon-authorization", "tab-before-colon", "conflicting-lengths", "negative-length", "length-and-chunked",
        "no-version", "encoded-line-break"])
def test_requests_with_doubtful_framing_are_refused_and_others_carry_on(server, clients, raw, status):
    other = clients()
    other.join()
    [(got, headers, _)] = exchange(server.port, raw)
    assert got == status
    assert headers.get("connection") == "close"
    assert other.intent("quantity", "next")["type"] == "ack"


@pytest.mark.parametrize("path", [b"/api/v1/rooms/demo%0Ax", b"/api/v1/rooms/demo%0D%0AX-Injected:%201", b"/api/nothing%0A"])
def test_an_api_url_with_an_encoded_line_break_is_refused_not_cut_short(start_server, path):
    # libwebsockets ends the request line at a decoded CR or LF: without the refusal, /rooms/demo%0Ax was read as
    # /rooms/demo and answered 200 for a room name no route takes.
    s = start_server("--api-key", "k" * 32)
    [(status, headers, body)] = exchange(s.port, b"GET " + path + b" HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + b"k" * 32 + b"\r\n\r\n")
    assert status == 400 and headers.get("connection") == "close"
    assert headers["content-type"].startswith("application/json")
    assert json.loads(body)["error"]["code"] == "invalid_message"


def test_http_1_0_without_host_is_still_served(server):
    [(status, _, body)] = exchange(server.port, b"GET /healthz HTTP/1.0\r\n\r\n")
    assert status == 200 and json.loads(body)["status"] == "ok"


def test_a_symlink_out_of_the_web_root_is_not_followed(start_server, tmp_path):
    root = tmp_path / "web"
    root.mkdir()
    (root / "index.html").write_text("<p>inside</p>")
    secret = tmp_path / "secret.txt"
    secret.write_text("outside the root")
    (root / "leak.txt").symlink_to(secret)
    (root / "etc").symlink_to("/etc")
    (root / "inner.html").symlink_to(root / "index.html")  # a link that stays inside is served
    (root / "sub").mkdir()
    (root / "sub" / "index.html").symlink_to(secret)  # served for /sub (no slash) and /sub/
    (root / "inside").mkdir()
    (root / "inside" / "index.html").write_text("<p>a page</p>")
    (root / "a b#c").mkdir()
    (root / "a b#c" / "index.html").write_text("<p>odd name</p>")
    (root / "empty").mkdir()
    (root / "deep").symlink_to(tmp_path)  # a link to a directory outside, padded past lws's 256-byte path
    s = start_server("--web-root", str(root))
    padded = b"/deep/" + b"x/" * 120 + b"../" * 120 + b"secret.txt"
    for path in (b"/leak.txt", b"/etc/hostname", b"/sub", b"/sub/", padded):
        [(status, _, body)] = exchange(s.port, b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        assert status == 404 and b"outside" not in body
    [(status, _, body)] = exchange(s.port, b"GET /inner.html HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 200 and body == b"<p>inside</p>"
    # A directory inside, asked for without its slash: sent to it with the slash (relative, for a proxy's prefix).
    [(status, headers, _)] = exchange(s.port, b"GET /inside HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 301 and headers["location"] == "./inside/", headers
    [(status, headers, _)] = exchange(s.port, b"GET /a%20b%23c HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 301 and headers["location"] == "./a%20b%23c/", "the name stays one segment: # ? % space encoded"
    [(status, _, _)] = exchange(s.port, b"GET /empty HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 404, "a directory without a page is not found, with or without its slash"
    [(status, _, body)] = exchange(s.port, b"GET /inside/ HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 200 and body == b"<p>a page</p>"
    [(status, _, _)] = exchange(s.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 200


@pytest.mark.parametrize("method, path", [("POST", "/metrics"), ("PUT", "/healthz"), ("DELETE", "/readyz"), ("POST", "/index.html")])
def test_other_methods_than_get_and_head_get_405_where_only_those_are_served(server, method, path):
    """Issue 38: POST, PUT and DELETE on /metrics answered 200."""
    [(status, headers, _)] = exchange(server.port, f"{method} {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    assert status == 405 and headers["allow"] == "GET, HEAD"


@pytest.mark.parametrize("coding, status", [("xchunked", 501), ("gzip", 501), ("chunked", 411)])
@pytest.mark.parametrize("path", ["/healthz", "/api/v1/rooms"])
def test_a_request_with_a_transfer_coding_is_refused_and_closed(server, coding, status, path):
    """Issue 38: `Transfer-Encoding: xchunked` was served as if absent — and lws reads no transfer coding, so what
    follows would have been taken for the next request."""
    raw = f"POST {path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: {coding}\r\n\r\n2\r\n{{}}\r\n0\r\n\r\n".encode()
    data = read_until_closed(server.port, raw)
    assert data.startswith(f"HTTP/1.1 {status}".encode()), data[:80]
    assert data.count(b"HTTP/1.1 ") == 1, "one answer, then the close"


def test_unfinished_api_bodies_hold_a_bounded_amount_of_memory(start_server):
    """Issue 38: 300–600 unfinished 1 MiB bodies held ~230 MB. Bodies being received count at their Content-Length,
    32 MiB in all and 8 MiB from one address: past either a request with a body gets 503 before its body is read;
    another address still uploads past one address's share; once they end, uploads go on."""
    s = start_server("--api-key", "bodies-key-0123456789")
    head = (b"POST /api/v1/rooms HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer bodies-key-0123456789\r\n"
            b"Content-Type: application/json\r\nContent-Length: 1048576\r\n\r\n{")
    def create(room: str) -> bytes:
        body = json.dumps({"room": room, "template": "demo"}).encode()
        return (b"POST /api/v1/rooms HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer bodies-key-0123456789\r\n"
                b"Content-Length: %d\r\n\r\n" % len(body) + body)
    held = []

    def hold(source: str, count: int):
        for _ in range(count):
            c = socket.create_connection(("127.0.0.1", s.port), timeout=5, source_address=(source, 0))
            c.sendall(head)
            held.append(c)

    def refused_from(source: str) -> bool:
        """One more upload from `source` is refused — or held, if the server had not read the earlier ones yet."""
        for _ in range(8):
            probe = socket.create_connection(("127.0.0.1", s.port), timeout=5, source_address=(source, 0))
            probe.sendall(head)
            probe.settimeout(1)
            answer = b""
            try:
                while b"}}" not in answer:
                    chunk = probe.recv(4096)
                    if not chunk:
                        break
                    answer += chunk
            except socket.timeout:
                if not answer:
                    held.append(probe)
                    continue
            probe.close()
            assert answer.startswith(b"HTTP/1.1 503") and b'"unavailable"' in answer, answer[:200]
            return True
        return False

    try:
        hold("127.0.0.1", 8)  # one address's share: 8 MiB declared, 1 byte of each sent
        assert refused_from("127.0.0.1"), "no upload past one address's 8 MiB was refused"
        sock = socket.create_connection(("127.0.0.1", s.port), timeout=5, source_address=("127.0.0.2", 0))
        sock.sendall(create("beside-the-share"))
        assert sock.recv(16).startswith(b"HTTP/1.1 201"), "another address uploads past the first one's share"
        sock.close()
        for source in ("127.0.0.2", "127.0.0.3", "127.0.0.4"):
            hold(source, 8)  # 32 MiB in all
        assert refused_from("127.0.0.5"), "no upload past 32 MiB in all was refused"
    finally:
        for c in held:
            c.close()
    deadline = time.monotonic() + 10
    while True:  # the closed uploads are let go as the server sees them close
        [(status, _, _)] = exchange(s.port, create("after-bodies"))
        if status == 201:
            break
        assert status == 503 and time.monotonic() < deadline
        time.sleep(0.05)
