"""The server API (`/api/v1/`) against the real server: auth, every route, atomicity, what members see, durability."""
from __future__ import annotations

import json
import signal
import socket
import subprocess
import time

import pytest

from api_client import API, API_KEY, error, intent
from livecontrols_server import BINARY
from test_auth import SECRET, handmade, mint


def patch_at(client, version: int, room: str = "demo") -> dict:
    """The patch that brought `client`'s room to `version` (waiting for it)."""
    client.wait_version(version, room)
    return next(p for p in client.patches[room] if p["version"] == version)


@pytest.fixture
def api_server(start_server):
    return start_server("--api-key", API_KEY)


@pytest.fixture
def api(api_server):
    return API(api_server)


# -- access ----------------------------------------------------------------------------------------

def test_the_api_is_off_until_a_key_or_a_secret_is_configured(server):
    refused = API(server).get("/rooms")
    assert refused.status_code == 403
    assert error(refused)["code"] == "forbidden"
    assert "--api-key" in error(refused)["message"]


def test_a_missing_or_wrong_key_is_unauthorized(api_server):
    missing = API(api_server, key=None).get("/rooms")
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"].startswith("Bearer")
    assert error(missing)["code"] == "unauthorized"
    wrong = API(api_server, key="not-the-key-0123456789").get("/rooms")
    assert wrong.status_code == 401
    assert error(wrong)["code"] == "unauthorized"
    assert API(api_server, key=None).get("/no/such/route").status_code == 401, "the credential is checked first"
    assert API(api_server, key=None).call("PUT", "/rooms/demo").status_code == 401


def test_only_admin_tokens_may_call_it_and_only_for_their_rooms(start_server):
    s = start_server("--auth-secret", SECRET)
    assert API(s, key=mint("--role", "viewer", "--room", "*")).get("/rooms").status_code == 403
    assert error(API(s, key=mint("--role", "editor", "--room", "*")).get("/rooms"))["code"] == "forbidden"
    admin = API(s, key=mint("--role", "admin", "--room", "*"))
    assert admin.get("/rooms").status_code == 200
    team = API(s, key=mint("--role", "admin", "--room", "team-*"))
    assert team.post("/rooms", {"room": "team-a"}).status_code == 201
    assert [r["room"] for r in team.get("/rooms").json()["rooms"]] == ["team-a"], "only the rooms the token grants"
    assert team.get("/rooms/demo").status_code == 403
    assert team.post("/rooms", {"room": "other"}).status_code == 403
    ann = s.client()
    ann.join("team-b")
    ann.join("demo")
    refused = team.delete(f"/rooms/team-b/members/{ann.session}")
    assert refused.status_code == 403 and "demo" in error(refused)["message"], "the close would take it out of demo too"
    expired = API(s, key=handmade({"role": "admin", "rooms": ["*"], "exp": int(time.time()) - 10}))
    assert error(expired.get("/rooms"))["code"] == "token_expired"


def test_the_nodes_and_the_webhook_endpoints_are_the_api_keys_alone(start_server):
    s = start_server("--api-key", API_KEY, "--auth-secret", SECRET)
    assert API(s).get("/nodes").json() == {"cluster": False, "nodes": []}, "a single node: no cluster"
    assert API(s).get("/webhooks").json() == {"endpoints": []}
    assert "node" not in API(s).get("/rooms").json()["rooms"][0], "a room's owner is a cluster's field"
    admin = API(s, key=mint("--role", "admin", "--room", "*"))
    for path in ("/nodes", "/webhooks"):  # also with no webhook configured: a token learns nothing of the server's layout
        refused = admin.get(path)
        assert refused.status_code == 403 and error(refused)["code"] == "forbidden", (path, refused.text)
    assert API(s).post("/nodes").status_code == 405


# -- rooms -----------------------------------------------------------------------------------------

def test_a_room_created_with_initial_values_is_what_a_joining_client_sees(api, api_server, connect):
    created = api.post("/rooms", {"room": "r1", "intents": [intent("quantity", "set", {"value": 42})]})
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["room"] == "r1" and body["template"] == "demo" and body["version"] == 0 and body["members"] == []
    assert body["state"]["controls"]["quantity"]["value"] == 42
    snapshot = connect(api_server).join("r1")
    assert snapshot["epoch"] == body["epoch"]
    assert body["state"]["controls"]["lunch"].pop("tally") == {"Pizza": 0, "Sushi": 0, "Salad": 0}, "the API sees private parts"
    assert snapshot["state"]["controls"] == body["state"]["controls"], "what a member sees, but the poll's tally"

    again = api.post("/rooms", {"room": "r1"})
    assert again.status_code == 409 and error(again)["code"] == "room_exists"
    assert error(api.post("/rooms", {"room": "demo"}))["code"] == "room_exists"


def test_a_creation_with_a_refused_intent_creates_nothing(api):
    refused = api.post("/rooms", {"room": "r2", "intents": [intent("quantity", "set", {"value": 5}), intent("quantity", "set", {"value": 500})]})
    assert refused.status_code == 422
    assert error(refused)["code"] == "out_of_range" and error(refused)["index"] == 1
    assert api.get("/rooms/r2").status_code == 404
    assert error(api.post("/rooms", {"room": "r3", "template": "nope"}))["code"] == "unknown_template"
    assert api.post("/rooms", {"room": "bad name"}).status_code == 400
    assert api.post("/rooms", {"room": "r4", "extra": 1}).status_code == 400
    assert api.post("/rooms", {"room": ".."}).status_code == 400, "no URL path can name it"


def test_the_list_and_one_room_show_versions_epochs_and_members(api, api_server, connect):
    ann = connect(api_server)
    ann.join(name="Ann")
    rooms = api.get("/rooms").json()["rooms"]
    assert rooms == [{"room": "demo", "template": "demo", "epoch": ann.rooms["demo"]["epoch"], "version": ann.version(),
                      "loaded": True, "members": 1}]
    room = api.get("/rooms/demo").json()
    assert "tally" not in ann.state()["controls"]["lunch"] and room["state"]["controls"]["lunch"].pop("tally") is not None
    assert room["version"] == ann.version() and room["state"] == ann.state()
    assert room["members"] == [{"session": ann.session, "name": "Ann", "user": None, "roles": ["admin"], "holding": [], "editing": [], "data": {}}]
    members = api.get("/rooms/demo/members").json()
    assert members["members"] == room["members"] and members["version"] == room["version"]
    assert error(api.get("/rooms/nowhere"))["code"] == "unknown_room"


# -- intents ---------------------------------------------------------------------------------------

def test_a_list_of_intents_is_one_patch_members_see_before_the_reply(api, api_server, connect):
    watcher = connect(api_server)
    watcher.join()
    reply = api.intents("demo",
                        intent("signup", "set", {"element": "account", "field": "email", "value": "ann@example.org"}),
                        intent("signup", "set", {"element": "account", "field": "name", "value": "Ann"}),
                        intent("signup", "finish", {"element": "account"}))
    assert reply.status_code == 200, reply.text
    version = reply.json()["version"]
    patch = patch_at(watcher, version)
    assert patch["cause"] == {"kind": "server", "intents": [{"control": "signup", "intent": "set"}, {"control": "signup", "intent": "set"},
                                                           {"control": "signup", "intent": "finish"}]}
    assert watcher.state()["controls"]["signup"]["current"] == "profile"
    assert reply.json() == {"room": "demo", "epoch": watcher.rooms["demo"]["epoch"], "version": version}


def test_a_list_that_replaces_the_servers_hold_with_one_just_like_it_makes_no_patch(api, api_server, connect):
    """As PROTOCOL.md says (found by an audit): the state shows no change, so no patch (and no `hold.ended`); a member's
    hold a list replaces always shows, as `holding` then names the server."""
    watcher = connect(api_server)
    watcher.join()
    first = api.intents("demo", intent("month", "press", {"direction": "next"})).json()["version"]
    same = api.intents("demo", intent("month", "press", {"direction": "prev"}), intent("month", "press", {"direction": "next"}))
    assert same.status_code == 200 and same.json()["version"] == first, same.text
    assert api.intents("demo", intent("month", "release")).json()["version"] == first + 1
    watcher.intent("month", "press", {"direction": "next"})
    taken = api.intents("demo", intent("month", "press", {"direction": "prev"}), intent("month", "press", {"direction": "next"})).json()
    patch = patch_at(watcher, taken["version"])
    assert [(e["session"], e["reason"]) for e in patch["cause"]["ended"]] == [(watcher.session, "replaced"), ("server", "replaced")]
    assert watcher.state()["controls"]["month"]["holding"] == {"session": "server", "direction": "next"}
    api.intents("demo", intent("month", "release"))


def test_a_refused_intent_applies_nothing_and_maps_to_its_status(api, api_server, connect):
    watcher = connect(api_server)
    before = watcher.join()["version"]
    refused = api.intents("demo", intent("quantity", "set", {"value": 3}), intent("quantity", "set", {"value": 300}))
    assert refused.status_code == 422 and error(refused)["code"] == "out_of_range" and error(refused)["index"] == 1
    assert api.get("/rooms/demo").json()["version"] == before, "nothing half-applied"
    cases = [
        (intent("nope", "next"), 422, "unknown_control"),
        (intent("quantity", "jump"), 422, "unknown_intent"),
        (intent("quantity", "set", {"value": "3"}), 422, "invalid_args"),
        (intent("quantity", "prev"), 409, "at_bound"),
        (intent("quantity", "release"), 409, "not_holder"),
        (intent("onboarding", "next"), 200, None),
        (intent("onboarding", "next"), 409, "guard_failed"),
    ]
    api.intents("demo", intent("quantity", "set", {"value": 0}))
    for body, status, code in cases:
        response = api.intents("demo", body)
        assert response.status_code == status, (body, response.text)
        if code:
            assert error(response)["code"] == code
    assert error(api.post("/rooms/demo/intents", {"control": "quantity"}))["code"] == "invalid_message"
    assert error(api.post("/rooms/demo/intents", {"intents": [], "control": "x"}))["code"] == "invalid_message"
    bad_json = api.http.post(api.base + "/rooms/demo/intents", data=b"{nope", timeout=10)
    assert bad_json.status_code == 400 and error(bad_json)["code"] == "invalid_json"
    assert error(api.intents("missing", intent("quantity", "next")))["code"] == "unknown_room"
    watcher.expect_silence(lambda m: m["type"] == "patch" and m["version"] > before + 2, 0.2)


def test_a_hold_started_through_the_api_shows_the_server_and_ends_on_release(api, api_server, connect):
    watcher = connect(api_server)
    watcher.join()
    api.intents("demo", intent("quantity", "press", {"direction": "next"}))
    state = watcher.wait_state(lambda s: s["controls"]["quantity"]["holding"] is not None)
    assert state["controls"]["quantity"]["holding"] == {"session": "server", "direction": "next"}
    watcher.recv(lambda m: m["type"] == "patch" and m["cause"]["kind"] == "tick")
    released = api.intents("demo", intent("quantity", "release"))
    assert released.status_code == 200
    patch = patch_at(watcher, released.json()["version"])
    assert patch["cause"]["ended"] == [{"control": "quantity", "session": "server", "reason": "release"}]


# -- reset, delete, history ------------------------------------------------------------------------

def test_reset_puts_the_template_back_and_ends_holds(api, api_server, connect):
    ann = connect(api_server)
    ann.join()
    ann.intent("quantity", "press", {"direction": "next"})
    reset = api.post("/rooms/demo/reset")
    assert reset.status_code == 200
    patch = patch_at(ann, reset.json()["version"])
    assert patch["cause"]["kind"] == "reset"
    assert patch["cause"]["ended"] == [{"control": "quantity", "session": ann.session, "reason": "reset"}]
    assert ann.state()["controls"]["quantity"]["value"] == 1
    assert ann.state()["presence"][ann.session]["holding"] == []


def test_deleting_a_room_tells_its_members_and_a_join_starts_it_anew(api, api_server, connect):
    api.post("/rooms", {"room": "gone", "intents": [intent("quantity", "set", {"value": 9})]})
    ann = connect(api_server)
    first = ann.join("gone")
    deleted = api.delete("/rooms/gone")
    assert deleted.status_code == 200 and deleted.json()["deleted"] is True
    notice = ann.recv(lambda m: m["type"] == "error")
    assert notice["code"] == "room_deleted" and notice["room"] == "gone" and "id" not in notice
    assert ann.intent("quantity", "next", room="gone")["code"] == "not_joined"
    assert api.get("/rooms/gone").status_code == 404
    assert "gone" not in [r["room"] for r in api.get("/rooms").json()["rooms"]]
    again = ann.join("gone")
    assert again["type"] == "snapshot" and again["epoch"] != first["epoch"]
    assert again["state"]["controls"]["quantity"]["value"] == 1
    config_room = api.delete("/rooms/demo")
    assert config_room.status_code == 409 and error(config_room)["code"] == "conflict"
    assert api.delete("/rooms/never").status_code == 404


def test_patches_after_a_version_are_what_members_received(api, api_server, connect):
    ann = connect(api_server)
    start = ann.join()["version"]
    for value in (3, 4, 5):
        ann.intent("quantity", "set", {"value": value})
    history = api.get("/rooms/demo/patches", params={"after": start}).json()
    assert [p["version"] for p in history["patches"]] == [start + 1, start + 2, start + 3]
    assert [p["ops"] for p in history["patches"]] == [p["ops"] for p in ann.patches["demo"]]
    assert history["epoch"] == ann.rooms["demo"]["epoch"] and history["version"] == ann.version()
    assert api.get("/rooms/demo/patches", params={"after": history["version"]}).json()["patches"] == []
    assert error(api.get("/rooms/demo/patches"))["code"] == "invalid_message"
    assert api.get("/rooms/demo/patches", params={"after": history["version"] + 1}).status_code == 409
    assert api.get("/rooms/demo/patches", params={"after": 0, "epoch": "other"}).status_code == 409
    for epoch in ("", "A", "a-b"):  # an epoch given must be one: before, an empty one counted as not given (200)
        refused = api.get("/rooms/demo/patches", params={"after": 0, "epoch": epoch})
        assert refused.status_code == 400 and error(refused)["code"] == "invalid_message", epoch


@pytest.mark.parametrize("query", ["after=0&after=0", "after=0;after=0", "after=0&epoch=a&epoch=a", "after=%2B0", "after=00",
                                   "after=0.0", "after"])
def test_a_query_argument_given_twice_or_not_in_plain_decimal_is_refused(api, query):
    # Before: the first of two `after`s was taken (200), and `+0`, `00` read as 0.
    reply = api.get("/rooms/demo/patches?" + query)
    assert reply.status_code == 400 and error(reply)["code"] == "invalid_message", reply.text
    assert api.get("/rooms/demo/patches?after=0&other=1&other=2").status_code == 200  # arguments no route reads


@pytest.mark.parametrize("query", ["limit=5&limit=6", "limit=%2B5", "limit=05", "limit=0", "limit=1001"])
def test_a_failed_webhooks_limit_given_twice_or_not_in_plain_decimal_is_refused(api, query):
    reply = api.get("/webhooks/failed?" + query)
    assert reply.status_code == 400 and error(reply)["code"] == "invalid_message", reply.text
    assert api.get("/webhooks/failed?limit=1000").status_code == 200


def test_patches_no_longer_kept_are_a_conflict(start_server, tmp_path):
    config = {"historyLimit": 2, "templates": {"t": {"controls": {"q": {"kind": "stepper"}}}}}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    s = start_server("--api-key", API_KEY, "--config", str(path))
    api = API(s)
    api.post("/rooms", {"room": "r"})
    for value in (1, 2, 3):
        api.intents("r", intent("q", "set", {"value": value}))
    assert api.get("/rooms/r/patches", params={"after": 1}).json()["patches"][0]["version"] == 2
    old = api.get("/rooms/r/patches", params={"after": 0})
    assert old.status_code == 409 and "no longer kept" in error(old)["message"]


# -- HTTP ------------------------------------------------------------------------------------------

def test_routes_methods_and_oversized_bodies(api, api_server):
    assert error(api.get("/nope"))["code"] == "not_found"
    put = api.call("PUT", "/rooms/demo")
    assert put.status_code == 405 and put.headers["allow"] == "GET, DELETE" and error(put)["code"] == "method_not_allowed"
    with socket.create_connection(("127.0.0.1", api_server.port), timeout=5) as raw:
        raw.sendall(b"POST /api/v1/rooms/demo/intents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + API_KEY.encode()
                    + b"\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\n\r\n" + b"{" * 1000)
        answer = b""
        while chunk := raw.recv(65536):
            answer += chunk  # the server answers before reading the body, then closes the connection
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413")
    assert json.loads(body)["error"]["code"] == "too_large"


@pytest.mark.parametrize("method, path", [("POST", "/rooms/demo/reset"), ("GET", "/rooms/demo"), ("DELETE", "/rooms/demo/members/s000")])
def test_a_body_on_a_route_that_takes_none_is_refused(api, api_server, method, path):
    # Before: the body was ignored and the request carried out (a reset with `garbage` as its body reset the room).
    version = api.get("/rooms/demo").json()["version"]
    reply = api.http.request(method, api.base + path, data=b"garbage", timeout=10)
    assert reply.status_code == 400 and error(reply)["code"] == "invalid_message" and "takes no body" in error(reply)["message"]
    assert reply.headers.get("connection") == "close", "the unread body ends the connection"
    assert api.get("/rooms/demo").json()["version"] == version, "nothing was done"


def test_a_chunked_body_is_refused_on_every_route_and_the_connection_closed(api_server):
    for request in (b"POST /api/v1/rooms/demo/intents", b"GET /api/v1/rooms"):
        with socket.create_connection(("127.0.0.1", api_server.port), timeout=5) as raw:
            raw.sendall(request + b" HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + API_KEY.encode()
                        + b"\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n0\r\n\r\n")
            answer = b""
            while chunk := raw.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 411"), answer[:80]
        assert answer.count(b"HTTP/1.1") == 1, "the chunks were not read as a second request"


def test_one_keep_alive_connection_carries_many_requests(api):
    for value in range(10):
        assert api.intents("demo", intent("quantity", "set", {"value": value})).status_code == 200
    assert api.get("/rooms/demo").json()["state"]["controls"]["quantity"]["value"] == 9


def test_what_the_api_created_and_changed_survives_kill_9(start_server, tmp_path):
    s = start_server("--api-key", API_KEY, "--data-dir", str(tmp_path))
    api = API(s)
    created = api.post("/rooms", {"room": "kept", "intents": [intent("quantity", "set", {"value": 11})]}).json()
    changed = api.intents("kept", intent("quantity", "next")).json()
    s.stop(signal.SIGKILL)
    again = start_server("--api-key", API_KEY, "--data-dir", str(tmp_path))
    room = API(again).get("/rooms/kept").json()
    assert room["epoch"] == created["epoch"] and room["version"] == changed["version"]
    assert room["state"]["controls"]["quantity"]["value"] == 12


def test_a_full_server_still_says_what_is_not_there_and_can_delete(start_server, tmp_path):
    """At `--max-rooms`, `room_limit` (503, retry) is for a request that needs one more room loaded; a room that exists
    nowhere is `unknown_room` (404: retrying cannot help), a creation that could not succeed anyway says why (422), and
    a stored room can still be deleted (its place is freed right after the reply)."""
    first = start_server("--api-key", API_KEY, "--max-rooms", "2", "--data-dir", str(tmp_path))
    assert API(first).post("/rooms", {"room": "kept"}).status_code == 201
    first.stop()
    s = start_server("--api-key", API_KEY, "--max-rooms", "2", "--data-dir", str(tmp_path))
    api = API(s)
    assert api.post("/rooms", {"room": "other"}).status_code == 201  # demo and other loaded: full; kept only stored
    for method, path in [("GET", "/rooms/nosuch"), ("DELETE", "/rooms/nosuch"), ("GET", "/rooms/nosuch/members"),
                         ("GET", "/rooms/nosuch/patches?after=0"), ("POST", "/rooms/nosuch/reset")]:
        answer = api.call(method, path)
        assert answer.status_code == 404 and error(answer)["code"] == "unknown_room", (method, path, answer.text)
    assert error(api.intents("nosuch", intent("quantity", "next")))["code"] == "unknown_room"
    unknown_template = api.post("/rooms", {"room": "x1", "template": "nope"})
    assert unknown_template.status_code == 422 and error(unknown_template)["code"] == "unknown_template"
    unknown_control = api.post("/rooms", {"room": "x1", "intents": [intent("nope", "next")]})
    assert unknown_control.status_code == 422 and error(unknown_control)["code"] == "unknown_control"
    full = api.post("/rooms", {"room": "x1"})
    assert full.status_code == 503 and error(full)["code"] == "room_limit" and full.headers["retry-after"]
    stored = api.get("/rooms/kept")
    assert stored.status_code == 503 and error(stored)["code"] == "room_limit", "a stored room needs a place to load"
    assert api.delete("/rooms/kept").status_code == 200
    assert error(api.get("/rooms/kept"))["code"] == "unknown_room"
    assert api.delete("/rooms/other").status_code == 200
    deadline = time.monotonic() + 10  # a deleted room is forgotten just after the reply
    while (made := api.post("/rooms", {"room": "x1"})).status_code == 503 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert made.status_code == 201, "the place of the room loaded to be deleted was freed with it"


def test_the_cli_lists_rooms_reads_one_and_applies_an_intent_over_the_api(api_server):
    def cli(*args, key=API_KEY):
        env = {"LIVECONTROLS_API_KEY": key, "PATH": "/usr/bin:/bin"}
        return subprocess.run([BINARY, *args, "--server", api_server.http_url], capture_output=True, text=True, timeout=30, env=env)

    listed = cli("rooms")
    assert listed.returncode == 0 and listed.stdout.splitlines()[0].split() == ["ROOM", "TEMPLATE", "EPOCH", "VERSION", "MEMBERS", "LOADED"]
    assert json.loads(cli("rooms", "--json").stdout)["rooms"][0]["room"] == "demo"
    applied = cli("intent", "demo", "quantity", "set", '{"value": 5}')
    assert applied.returncode == 0, applied.stderr
    assert json.loads(applied.stdout)["version"] == 1
    state = json.loads(cli("state", "demo").stdout)
    assert state["state"]["controls"]["quantity"]["value"] == 5
    refused = cli("intent", "demo", "quantity", "set", '{"value": 500}')
    assert refused.returncode == 1 and json.loads(refused.stderr)["error"]["code"] == "out_of_range"
    assert cli("state", "nowhere").returncode == 1
    assert cli("rooms", key="wrong-key-0123456789").returncode == 1
    down = subprocess.run([BINARY, "rooms", "--server", "http://127.0.0.1:1", "--api-key", API_KEY], capture_output=True, text=True, timeout=30)
    assert down.returncode == 2 and "cannot reach" in down.stderr


def test_metrics_can_require_the_api_credential(start_server):
    import urllib.error
    import urllib.request

    s = start_server("--api-key", API_KEY, "--metrics-access", "key")
    with pytest.raises(urllib.error.HTTPError) as refused:
        s.get("/metrics")
    assert refused.value.code == 401
    request = urllib.request.Request(s.http_url + "metrics", headers={"Authorization": f"Bearer {API_KEY}"})
    assert b"livecontrols_intents_total" in urllib.request.urlopen(request, timeout=5).read()
    assert s.get("/healthz").status == 200, "health checks stay open"
    assert b"livecontrols_intents_total" in start_server().get("/metrics").read(), "public by default"
    result = subprocess.run([BINARY, "--port", "0", "--metrics-access", "key"], capture_output=True, text=True, timeout=30)
    assert result.returncode != 0 and "--metrics-access key needs" in result.stderr
