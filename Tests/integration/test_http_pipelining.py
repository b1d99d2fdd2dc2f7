"""Pipelined HTTP requests (several sent before the first answer), with and without bodies, through every route and in
every order, and split across TCP segments at every byte: each request gets its own whole answer, in order, or — a
request with a body pipelined behind another — a 503 `unavailable` after which the connection closes; and the server
goes on serving HTTP and WebSockets (issue 42: one such write used to hang the whole server)."""
from __future__ import annotations

import itertools
import json
import socket
import time

import pytest

KEY = "pipelining-key-0123456789"
AUTH = f"Authorization: Bearer {KEY}\r\n".encode()


def request(method: str, path: str, body: bytes | None = None, auth: bool = False, extra: bytes = b"") -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: x\r\n".encode() + (AUTH if auth else b"") + extra
    if body is not None:
        head += b"Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
    return head + b"\r\n" + (body or b"")


def routes(serial: int) -> dict[str, tuple[bytes, set[int], bool]]:
    """name → (request, statuses it may be answered with when served, whether it carries a body)."""
    intents = json.dumps({"intents": [{"control": "quantity", "intent": "next"}]}).encode()
    room = json.dumps({"room": f"pipe-{serial}", "template": "demo"}).encode()
    return {
        "healthz": (request("GET", "/healthz"), {200}, False),
        "head-healthz": (request("HEAD", "/healthz"), {200}, False),
        "readyz": (request("GET", "/readyz"), {200}, False),
        "metrics": (request("GET", "/metrics"), {200}, False),
        "file": (request("GET", "/index.html"), {200}, False),
        "missing": (request("GET", "/no-such-file"), {404}, False),
        "api-room": (request("GET", "/api/v1/rooms/demo", auth=True), {200}, False),
        "api-unauthorized": (request("GET", "/api/v1/rooms/demo"), {401}, False),
        "api-create": (request("POST", "/api/v1/rooms", room, auth=True), {201, 409}, True),
        "api-intents": (request("POST", "/api/v1/rooms/demo/intents", intents, auth=True), {200, 409}, True),  # 409 at_bound
        "api-bad-json": (request("POST", "/api/v1/rooms/demo/intents", b"{no", auth=True), {400}, True),
        "healthz-with-body": (request("GET", "/healthz", b"{}"), {200}, True),
    }


def read_answers(sock: socket.socket, heads: set[int], expected: int, timeout: float = 5) -> tuple[list[int], bool]:
    """Reads whole answers until the server closes the connection or all `expected` came (then waits `timeout` for the
    close or anything more): (statuses, whether the server closed). Bodies are framed by Content-Length; the answers
    whose indexes are in `heads` (to HEAD requests) have none."""
    buffer, statuses, closed = b"", [], False
    while True:
        while b"\r\n\r\n" in buffer:
            head, rest = buffer.split(b"\r\n\r\n", 1)
            lines = head.decode("latin-1").split("\r\n")
            headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:] if ":" in line)}
            length = 0 if len(statuses) in heads else int(headers.get("content-length", "0"))
            if len(rest) < length:
                break
            statuses.append(int(lines[0].split()[1]))
            buffer = rest[length:]
        if closed:
            break
        # Until every answer came, a long wait (a failure shows as a time-out); then a short one, for the close.
        sock.settimeout(timeout if len(statuses) < expected else 0.2)
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            break
        if not chunk:
            closed = True
        buffer += chunk
    assert buffer == b"", f"bytes after the last whole answer: {buffer[:200]!r}"
    return statuses, closed


def check(sent: list[tuple[str, tuple[bytes, set[int], bool]]], statuses: list[int], closed: bool) -> None:
    """Every answer is the one its request gets when sent alone, in order; the only other answer is the 503 of a request
    with a body, after which nothing more is answered and the connection is closed."""
    for i, status in enumerate(statuses):
        name, (_, allowed, has_body) = sent[i]
        if status == 503:
            assert has_body and i > 0, f"{name} (request {i + 1}) answered 503; sent {[n for n, _ in sent]}"
            assert i == len(statuses) - 1 and closed, f"answers after the 503 of {name}: {statuses}"
            return
        assert status in allowed, f"{name} (request {i + 1}) answered {status}; sent {[n for n, _ in sent]}, got {statuses}"
    assert len(statuses) == len(sent), f"sent {[n for n, _ in sent]}, answered only {statuses} (closed: {closed})"


def send_and_read(port: int, parts: list[bytes], sent, pause: float = 0) -> tuple[list[int], bool]:
    heads = {i for i, (name, _) in enumerate(sent) if name.startswith("head-")}
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        for n, part in enumerate(parts):
            if n and pause:
                time.sleep(pause)  # (shapes the input into separate reads; nothing is waited for)
            sock.sendall(part)
        return read_answers(sock, heads, len(sent))
    finally:
        sock.close()


def assert_still_serving(s) -> None:
    assert s.get("/healthz").status == 200
    c = s.client()
    try:
        assert c.join("demo")["type"] == "snapshot"
        assert c.intent("quantity", "set", {"value": 1})["type"] == "ack"
    finally:
        c.close()


@pytest.fixture
def api_server(start_server):
    return start_server("--api-key", KEY, "--rate", "100000", "--burst", "100000")


def test_every_pair_of_routes_pipelined_in_one_write_is_answered_in_order(api_server):
    serial = itertools.count()
    names = list(routes(0))
    for first, second in itertools.product(names, names):
        table = routes(next(serial))
        sent = [(first, table[first]), (second, table[second])]
        statuses, closed = send_and_read(api_server.port, [table[first][0] + table[second][0]], sent)
        check(sent, statuses, closed)
    assert_still_serving(api_server)


def test_a_body_pipelined_behind_a_request_is_refused_with_503_and_nothing_hangs(api_server):
    """The report of issue 42, exactly: the process served nothing after it."""
    raw = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"
    sent = [("healthz", routes(0)["healthz"]), ("healthz-with-body", routes(0)["healthz-with-body"])]
    statuses, closed = send_and_read(api_server.port, [raw], sent)
    assert statuses == [200, 503] and closed
    table = routes(1)
    sent = [("healthz", table["healthz"]), ("api-create", table["api-create"])]
    statuses, closed = send_and_read(api_server.port, [table["healthz"][0] + table["api-create"][0]], sent)
    assert statuses == [200, 503] and closed
    assert_still_serving(api_server)


def test_requests_one_at_a_time_on_a_kept_alive_connection_are_all_served(api_server):
    sock = socket.create_connection(("127.0.0.1", api_server.port), timeout=5)
    try:
        for i in range(4):
            for name in ("api-create", "api-intents", "healthz-with-body", "healthz"):
                raw, allowed, _ = routes(100 + i)[name]
                sock.sendall(raw)
                sock.settimeout(5)
                buffer = b""
                while b"\r\n\r\n" not in buffer:
                    buffer += sock.recv(65536)
                head, rest = buffer.split(b"\r\n\r\n", 1)
                length = int([l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")][0].split(b":")[1])
                while len(rest) < length:
                    rest += sock.recv(65536)
                assert int(head.split()[1]) in allowed, (name, head[:80])
    finally:
        sock.close()


@pytest.mark.parametrize("sequence", [
    ["healthz", "api-intents", "healthz"],
    ["api-create", "readyz", "healthz-with-body"],
    ["file", "api-room", "api-bad-json"],
])
def test_pipelined_requests_split_at_every_byte_are_answered_in_order(api_server, sequence):
    """Property over segmentations: the same pipelined requests, cut into two TCP segments at every byte, are answered
    as when sent at once or one by one — in order, or a body's 503 and the close."""
    table = routes(0)
    raw = b"".join(table[name][0] for name in sequence)
    serial = itertools.count(1000)
    for cut in range(1, len(raw)):
        table = routes(next(serial))
        raw = b"".join(table[name][0] for name in sequence)
        sent = [(name, table[name]) for name in sequence]
        statuses, closed = send_and_read(api_server.port, [raw[:cut], raw[cut:]], sent, pause=0.002)
        check(sent, statuses, closed)
    assert_still_serving(api_server)


@pytest.mark.parametrize("method, path", [("POST", "/api/v1/rooms/demo/reset"), ("POST", "/healthz"), ("PUT", "/index.html")])
def test_a_post_without_content_length_is_answered_and_its_connection_closed(api_server, method, path):
    """Found by a review: lws 4.1 expects 100 MiB of body after a POST, PUT or PATCH without Content-Length, so the next
    request on the connection was swallowed as body and never answered (the connection closed some 20 s later)."""
    raw = request(method, path, auth=True) + request("GET", "/healthz")
    sock = socket.create_connection(("127.0.0.1", api_server.port), timeout=5)
    try:
        sock.sendall(raw)
        statuses, closed = read_answers(sock, set(), 1)
    finally:
        sock.close()
    assert len(statuses) == 1 and closed, (statuses, closed)
    assert statuses[0] in {200, 405}
    assert_still_serving(api_server)


def test_over_tls_a_large_body_on_a_fresh_connection_is_served_and_each_connection_carries_one_request(start_server, tmp_path):
    """Found by a review: over TLS, OpenSSL's waiting data made every request with a body past ~4 KB look pipelined
    (503 on every retry). The first request is never refused, and a TLS connection carries one request."""
    import ssl
    from tls_certificates import Certificates

    certificates = Certificates(tmp_path)
    s = start_server("--api-key", KEY, "--tls-cert", certificates.path("server.crt"), "--tls-key", certificates.path("server.key"))
    context = ssl.create_default_context(cafile=certificates.path("ca.crt"))
    big = json.dumps({"intents": [{"control": "quantity", "intent": "set", "args": {"value": 3}, "note": "x" * 20000}]}).encode()
    raw = request("POST", "/api/v1/rooms/demo/intents", big, auth=True)
    for _ in range(3):
        with context.wrap_socket(socket.create_connection(("127.0.0.1", s.port), timeout=5), server_hostname="localhost") as t:
            t.sendall(raw + request("GET", "/healthz"))
            statuses, closed = read_answers(t, set(), 1)
        assert statuses[0] != 503 and len(statuses) == 1 and closed, statuses
