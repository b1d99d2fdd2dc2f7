"""The command-line client: `livecontrols-client send` and `livecontrols-client watch` against the real server (a
product of its own, so the server builds without SwiftNIO); the server's own commands answer as before."""
import json
import pathlib
import re
import subprocess

from livecontrols_server import BINARY, CLIENT_BINARY


def run(*args, timeout=20):
    return subprocess.run([CLIENT_BINARY, *args], capture_output=True, text=True, timeout=timeout)


def test_send_prints_the_ack_and_exits_0(server):
    result = run("send", "demo", "quantity", "set", '{"value": 12}', "--url", server.ws_url)
    assert result.returncode == 0, result.stderr
    ack = json.loads(result.stdout)
    assert ack["type"] == "ack" and ack["room"] == "demo"
    assert server.client().join()["state"]["controls"]["quantity"]["value"] == 12


def test_send_prints_the_error_and_exits_nonzero(server):
    result = run("send", "demo", "quantity", "set", '{"value": 1000}', "--url", server.ws_url)
    assert result.returncode == 1
    err = json.loads(result.stdout)
    assert err["type"] == "error" and err["code"] == "out_of_range"


def test_send_rejects_args_that_are_not_an_object(server):
    result = run("send", "demo", "quantity", "set", "5", "--url", server.ws_url)
    assert result.returncode != 0 and "JSON object" in result.stderr


def test_send_to_a_server_that_is_not_there_fails_clearly():
    result = run("send", "demo", "quantity", "next", "--url", "ws://127.0.0.1:9/ws", "--timeout", "2")
    assert result.returncode == 2 and "cannot connect" in result.stderr


def test_watch_prints_the_snapshot_and_each_patch(server):
    watcher = subprocess.Popen([CLIENT_BINARY, "watch", "demo", "--url", server.ws_url, "--count", "3"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = json.loads(watcher.stdout.readline())
    assert first["type"] == "snapshot"
    c = server.client()
    c.join()  # patch 1: the client joins
    c.intent("quantity", "set", {"value": 33})
    c.intent("quantity", "next")
    out, _ = watcher.communicate(timeout=20)
    patches = [json.loads(line) for line in out.splitlines()]
    assert [p["type"] for p in patches] == ["patch"] * 3
    assert [p["version"] for p in patches] == [first["version"] + i for i in (1, 2, 3)]
    assert watcher.returncode == 0


def test_watch_state_prints_the_live_document(server):
    watcher = subprocess.Popen([CLIENT_BINARY, "watch", "demo", "--state", "--url", server.ws_url, "--count", "2"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = json.loads(watcher.stdout.readline())
    run("send", "demo", "quantity", "set", '{"value": 77}', "--url", server.ws_url)
    lines = [json.loads(line) for line in watcher.communicate(timeout=20)[0].splitlines()]
    # The sender's join, then its intent: the watcher stops after the second patch.
    assert lines[-1]["state"]["controls"]["quantity"]["value"] == 77
    assert [line["version"] for line in lines] == [first["version"] + 1, first["version"] + 2]


def test_send_and_watch_speak_wss_with_a_trusted_certificate(start_server, tmp_path):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    s = start_server("--tls-cert", str(cert), "--tls-key", str(key))
    url = s.ws_url.replace("127.0.0.1", "localhost")
    result = run("send", "demo", "quantity", "set", '{"value": 42}', "--url", url, "--ca-file", str(cert))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["type"] == "ack"
    watched = run("watch", "demo", "--state", "--count", "0", "--url", url, "--ca-file", str(cert))
    assert json.loads(watched.stdout.splitlines()[0])["state"]["controls"]["quantity"]["value"] == 42
    # Without the certificate the TLS handshake is refused: a clear failure, exit status 2.
    refused = run("send", "demo", "quantity", "next", "--url", url, "--timeout", "5")
    assert refused.returncode == 2 and "cannot connect" in refused.stderr


def test_watch_follows_a_restart_and_resumes(tmp_path):
    from livecontrols_server import Server
    data = tmp_path / "data"
    first = Server("--data-dir", str(data)).start()
    watcher = subprocess.Popen([CLIENT_BINARY, "watch", "demo", "--url", first.ws_url, "--count", "4"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    snapshot = json.loads(watcher.stdout.readline())
    c = first.client()
    c.join()  # patch 1
    c.intent("quantity", "set", {"value": 5})  # patch 2
    assert json.loads(watcher.stdout.readline())["version"] == snapshot["version"] + 1
    assert json.loads(watcher.stdout.readline())["version"] == snapshot["version"] + 2
    c.close()  # patch 3: c leaves
    assert json.loads(watcher.stdout.readline())["version"] == snapshot["version"] + 3
    first.stop()
    second = Server("--data-dir", str(data), "--port", str(first.port)).start()
    try:
        out, err = watcher.communicate(timeout=30)
        # Resumed, not a snapshot: the next line is the patch right after the last one printed.
        line = json.loads(out.splitlines()[0])
        assert line["type"] == "patch" and line["version"] == snapshot["version"] + 4, (out, err)
        assert watcher.returncode == 0
    finally:
        watcher.kill()
        second.stop()


def test_watch_stops_with_status_2_when_the_server_api_disconnects_it(start_server):
    from api_client import API, API_KEY
    s = start_server("--api-key", API_KEY)
    watcher = subprocess.Popen([CLIENT_BINARY, "watch", "demo", "--url", s.ws_url], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    snapshot = json.loads(watcher.stdout.readline())
    session = next(iter(snapshot["state"]["presence"]))  # the watcher is the room's only member
    assert API(s).delete(f"/rooms/demo/members/{session}").status_code == 200
    _, err = watcher.communicate(timeout=20)
    # 4001: the protocol asks clients not to reconnect on their own; watch says why and fails.
    assert watcher.returncode == 2 and "4001" in err, err


def test_a_server_started_from_another_folder_serves_the_page_beside_its_binary(tmp_path):
    """Issue 41: started outside the repository, the binary served 404 at the URL it printed."""
    import re
    import urllib.request
    proc = subprocess.Popen([BINARY, "--port", "0"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = re.search(r":(\d+)/ \(", proc.stdout.readline()).group(1)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as r:
            assert r.status == 200 and b"<html" in r.read().lower()
    finally:
        proc.terminate()
        err = proc.communicate(timeout=15)[1]
    assert "web root" in err  # it says which one it serves


def test_a_server_found_on_path_serves_the_page_beside_its_binary(tmp_path):
    """As docs/GETTING-STARTED.md runs it (`livecontrols serve`, the binary on PATH): argv[0] has no folder, and the
    page beside the binary was looked for in the current folder instead (404 at the printed URL)."""
    import os
    import re
    import urllib.request
    env = dict(os.environ, PATH=f"{os.path.dirname(BINARY)}:{os.environ['PATH']}")
    proc = subprocess.Popen(["livecontrols", "serve", "--port", "0"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        port = re.search(r":(\d+)/ \(", proc.stdout.readline()).group(1)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/livecontrols.js", timeout=5) as r:
            assert r.status == 200
    finally:
        proc.terminate()
        proc.communicate(timeout=15)


def test_token_without_a_secret_says_so_with_its_own_usage():
    done = subprocess.run([BINARY, "token", "--role", "editor", "--room", "x"], capture_output=True, text=True, timeout=20,
                          env={"PATH": "/usr/bin:/bin"})
    assert done.returncode != 0
    assert "secret of at least 16 bytes" in done.stderr and "Usage: livecontrols token" in done.stderr, done.stderr


def test_a_port_in_use_is_said_once_in_the_servers_words(tmp_path):
    """Issue 41: libwebsockets' raw `E: …` lines came before the server's own message."""
    import socket
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    try:
        done = subprocess.run([BINARY, "--port", str(holder.getsockname()[1])], capture_output=True, text=True, timeout=20)
    finally:
        holder.close()
    assert done.returncode != 0
    assert "cannot listen on 127.0.0.1" in done.stderr
    assert not any(line.startswith(("E:", "W:", "N:")) or "] E: " in line for line in done.stderr.splitlines()), done.stderr


def test_the_server_binary_holds_no_swiftnio_and_the_client_commands_are_their_own_product():
    # The server needs none of SwiftNIO or BoringSSL (LiveControlsKit's WebSocket client brings them): they are not
    # even linked in, so its first release build compiles none of them (issue 39).
    server = pathlib.Path(BINARY).read_bytes()
    assert b"NIOCore" not in server and b"BoringSSL" not in server
    assert b"NIOCore" in pathlib.Path(CLIENT_BINARY).read_bytes()
    usage = subprocess.run([BINARY, "--help"], capture_output=True, text=True, timeout=20).stdout
    assert "watch" not in usage and "send" not in usage and "serve" in usage
    usage = subprocess.run([CLIENT_BINARY, "--help"], capture_output=True, text=True, timeout=20).stdout
    assert "watch" in usage and "send" in usage


def test_config_prints_the_built_in_config_and_check_says_what_a_file_makes(tmp_path):
    printed = subprocess.run([BINARY, "config"], capture_output=True, text=True, timeout=20)
    assert printed.returncode == 0, printed.stderr
    config = json.loads(printed.stdout)
    assert config["defaultTemplate"] == "demo" and "demo" in config["templates"]
    path = tmp_path / "mine.json"
    config["templates"]["demo"]["controls"]["quantity"]["max"] = 9
    config["rooms"]["lobby"] = {"template": "workshop"}
    path.write_text(json.dumps(config, indent=2))
    checked = subprocess.run([BINARY, "config", "--check", str(path)], capture_output=True, text=True, timeout=20)
    assert checked.returncode == 0, checked.stderr
    assert f"{path}: valid" in checked.stdout
    assert "demo: quantity (stepper), person (list), onboarding (wizard), signup (form), month (pager)" in checked.stdout
    assert "lobby (template workshop)" in checked.stdout


def test_config_check_names_the_line_column_and_pointer_of_what_is_wrong(tmp_path):
    config = json.loads(subprocess.run([BINARY, "config"], capture_output=True, text=True, timeout=20).stdout)
    config["templates"]["demo"]["controls"]["quantity"]["max"] = "ninety-nine"
    path = tmp_path / "bad.json"
    text = json.dumps(config, indent=2)
    path.write_text(text)
    checked = subprocess.run([BINARY, "config", "--check", str(path)], capture_output=True, text=True, timeout=20)
    assert checked.returncode == 2
    match = re.search(rf"{re.escape(str(path))}:(\d+):(\d+): at /templates/demo/controls/quantity/max: ", checked.stderr)
    assert match, checked.stderr
    line, column = int(match.group(1)), int(match.group(2))
    assert text.splitlines()[line - 1][column - 1:].startswith('"ninety-nine"'), "the place is the value itself"
    # serve --config says the same.
    served = subprocess.run([BINARY, "--port", "0", "--config", str(path)], capture_output=True, text=True, timeout=20)
    assert served.returncode != 0 and f"{path}:{line}:{column}: at /templates/demo/controls/quantity/max" in served.stderr
    # Not JSON at all: the parser's own place.
    path.write_text('{"templates": {\n  "t": [}\n}')
    checked = subprocess.run([BINARY, "config", "--check", str(path)], capture_output=True, text=True, timeout=20)
    assert checked.returncode == 2 and "line 2, column" in checked.stderr, checked.stderr
