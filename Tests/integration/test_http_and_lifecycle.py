"""HTTP on the same port, the /ws path, config errors, graceful shutdown."""
import json
import os
import pathlib
import signal
import subprocess
import urllib.error

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect as ws_connect

from livecontrols_server import BINARY, REPO


def test_healthz_reports_ok(server):
    with server.get("/healthz") as r:
        assert r.status == 200
        assert r.headers["Content-Type"].startswith("application/json")
        body = json.loads(r.read())
    assert body["status"] == "ok" and body["protocol"] == "livecontrols.v1"
    assert body["rooms"] >= 1


def test_web_client_is_served_at_root(server):
    with server.get("/") as r:
        assert r.status == 200
        html = r.read().decode()
    assert "<script" in html and "type=\"module\"" in html
    with server.get("/app.js") as r:
        assert "javascript" in r.headers["Content-Type"]


def test_unknown_path_is_404(server):
    with pytest.raises(urllib.error.HTTPError) as e:
        server.get("/no-such-file.txt")
    assert e.value.code == 404


def test_websocket_upgrade_only_on_ws_path(server):
    url = server.ws_url.rsplit("/", 1)[0] + "/elsewhere"
    with pytest.raises(Exception):  # refused during the handshake: no WebSocket is opened
        with ws_connect(url, open_timeout=5) as ws:
            ws.recv(timeout=5)


def test_sigterm_closes_clients_with_1001_and_exits_0(start_server):
    s = start_server()
    c = s.client()
    c.join()
    s.proc.send_signal(signal.SIGTERM)
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            c.ws.recv(timeout=10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001
    assert s.proc.wait(10) == 0


def test_sigint_also_shuts_down_cleanly(start_server):
    s = start_server()
    s.proc.send_signal(signal.SIGINT)
    assert s.proc.wait(10) == 0


def run_with_config(tmp_path: pathlib.Path, config) -> subprocess.CompletedProcess:
    path = tmp_path / "rooms.json"
    path.write_text(config if isinstance(config, str) else json.dumps(config))
    return subprocess.run([BINARY, "--port", "0", "--config", str(path)], cwd=REPO, capture_output=True, text=True, timeout=20)


def test_config_error_names_file_path_and_problem(tmp_path):
    bad = {"templates": {"t": {"controls": {"q": {"kind": "stepper", "min": 5, "max": 1}}}}}
    result = run_with_config(tmp_path, bad)
    assert result.returncode != 0
    assert "rooms.json" in result.stderr
    assert "/templates/t/controls/q/max" in result.stderr
    assert "must be ≥ min" in result.stderr


def test_config_with_invalid_json_is_refused(tmp_path):
    result = run_with_config(tmp_path, '{"templates": ')
    assert result.returncode != 0 and "rooms.json" in result.stderr and "not valid JSON" in result.stderr


def test_config_with_unknown_kind_is_refused(tmp_path):
    result = run_with_config(tmp_path, {"templates": {"t": {"controls": {"x": {"kind": "slider"}}}}})
    assert result.returncode != 0 and "/templates/t/controls/x/kind" in result.stderr and "slider" in result.stderr


def test_custom_config_serves_its_templates(tmp_path, start_server):
    config = {
        "defaultTemplate": "counter",
        "templates": {"counter": {"controls": {"n": {"kind": "stepper", "min": -5, "max": 5, "value": 0, "wrap": True}}}},
        "rooms": {"lobby": {}},
    }
    path = tmp_path / "custom.json"
    path.write_text(json.dumps(config))
    s = start_server("--config", str(path))
    c = s.client()
    snap = c.join("lobby")
    assert list(snap["state"]["controls"]) == ["n"]
    c.intent("n", "set", {"value": 5}, room="lobby")
    c.intent("n", "next", room="lobby")
    assert c.state("lobby")["controls"]["n"]["value"] == -5
    c.close()


def test_port_in_use_fails_with_a_message(server):
    result = subprocess.run([BINARY, "--port", str(server.port)], cwd=REPO, capture_output=True, text=True, timeout=20)
    assert result.returncode != 0
    assert "cannot listen" in result.stderr


def test_a_template_without_presence_keeps_joins_invisible(tmp_path, start_server):
    config = {"templates": {"crowd": {"presence": False, "controls": {"n": {"kind": "stepper", "max": 10}}}}}
    path = tmp_path / "crowd.json"
    path.write_text(json.dumps(config))
    s = start_server("--config", str(path))
    a, b = s.client(), s.client()
    snap = a.join("stage")
    assert snap["state"]["presence"] == {}
    version = snap["version"]
    assert b.join("stage")["version"] == version, "a join changes nothing visible"
    a.intent("n", "press", {"direction": "next"}, room="stage")
    b.wait_state(lambda st: st["controls"]["n"]["holding"] is not None, room="stage")
    a.close()
    state = b.wait_state(lambda st: st["controls"]["n"]["holding"] is None, room="stage")
    assert state["presence"] == {}
    ended = [e for p in b.patches["stage"] for e in p["cause"].get("ended", [])]
    assert {"control": "n", "session": a.session, "reason": "disconnect"} in ended


def test_config_syntax_errors_name_line_and_column(tmp_path):
    """Issue 17: a syntax error named a byte offset."""
    result = run_with_config(tmp_path, '{\n  "templates": {\n    "t": {"controls": {"q": {"kind": "stepper",}}}\n  }\n}\n')
    assert result.returncode != 0
    assert "line 3, column 48" in result.stderr, result.stderr  # the `}` where a key must follow the comma
    assert "byte" not in result.stderr


def test_a_directory_or_a_missing_file_as_config_gets_a_plain_message(tmp_path):
    """Issue 17: a directory passed as --config printed `NSCocoaErrorDomain error 256`."""
    as_dir = subprocess.run([BINARY, "--port", "0", "--config", str(tmp_path)], cwd=REPO, capture_output=True, text=True, timeout=20)
    assert as_dir.returncode != 0
    assert "is a directory" in as_dir.stderr and "NSCocoaErrorDomain" not in as_dir.stderr, as_dir.stderr
    missing = subprocess.run([BINARY, "--port", "0", "--config", "nope.json"], cwd=tmp_path, capture_output=True, text=True, timeout=20)
    assert missing.returncode != 0
    assert "nope.json: no such file" in missing.stderr and str(tmp_path) in missing.stderr, missing.stderr


def test_scripts_run_takes_a_config_path_relative_to_the_callers_folder(tmp_path):
    """Issue 17: `scripts/run --config FILE` changed to the repository first, so a file beside the caller was
    not found. (Runs the script with the built binary's check only: LIVECONTROLS_RUN_DRY prints the command.)"""
    (tmp_path / "rooms.json").write_text(json.dumps({"templates": {"t": {"controls": {"q": {"kind": "stepper"}}}},
                                                     "defaultTemplate": "t", "rooms": {"r": {}}}))
    env = dict(os.environ, LIVECONTROLS_RUN_DRY="1")
    result = subprocess.run([str(REPO / "scripts" / "run"), "--config", "rooms.json", "--port=0"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert f"--config {tmp_path / 'rooms.json'}" in result.stdout, result.stdout


def test_scripts_run_takes_every_file_flag_relative_to_the_callers_folder(tmp_path):
    """Every flag that names a file or folder is the caller's, the Redis TLS files (added later) included; other
    values (a URL, a port, an absolute path) pass unchanged."""
    env = dict(os.environ, LIVECONTROLS_RUN_DRY="1")
    relative = ["--config", "--data-dir", "--web-root", "--tls-cert", "--tls-key",
                "--redis-tls-ca-cert-file", "--redis-tls-cert-file", "--redis-tls-key-file"]
    args = []
    for n, flag in enumerate(relative):
        args += [flag, f"f{n}"] if n % 2 == 0 else [f"{flag}=f{n}"]
    args += ["--redis", "rediss://redis.internal:6380", "--port", "9000", "--tls-cert", "/abs/cert.pem"]
    result = subprocess.run([str(REPO / "scripts" / "run"), *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    words = result.stdout.split()
    pairs = set(zip(words, words[1:]))
    for n, flag in enumerate(relative):
        assert (flag, str(tmp_path / f"f{n}")) in pairs, (flag, result.stdout)
    assert "rediss://redis.internal:6380" in words and "9000" in words and "/abs/cert.pem" in words, result.stdout
