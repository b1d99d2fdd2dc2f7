"""The admin console (web/admin/) in headless Chromium against the real server: signing in with the API key or an
admin token (a wrong one refused in words), the health and live charts, rooms (search, a room's live state,
members and patches, disconnecting a member), webhooks (a failed delivery retried), what a room-limited token
does not see, a phone-sized window, and a two-node cluster (the nodes, who owns which room)."""
import json
import urllib.request

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from websockets.exceptions import ConnectionClosed

from api_client import API, API_KEY
from auth_tokens import mint_token
from livecontrols_client import Client
from test_page import wait
from webhook_receiver import Receiver, webhook_config

SECRET = "admin-console-secret-0123456789abcdef"


def text(driver, testid):
    return driver.find_element(By.CSS_SELECTOR, f'[data-testid="{testid}"]').text


def sign_in(driver, credential):
    field = driver.find_element(By.ID, "credential")
    field.clear()
    field.send_keys(credential, Keys.ENTER)


def signed_in(driver):
    return driver.execute_script("return document.body.dataset.signedIn") == "true"


def room_rows(driver):
    return [r.get_attribute("data-room") for r in driver.find_elements(By.CSS_SELECTOR, '[data-testid="rooms"] tbody tr')]


def open_room(driver, name):
    wait(driver, lambda d: name in room_rows(d), message=f"room {name} listed")
    driver.find_element(By.CSS_SELECTOR, f'[data-testid="rooms"] button[data-room="{name}"]').click()
    wait(driver, lambda d: text(d, "room-name") == name and "version" in text(d, "room-meta"), message="the room shown")


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.stop()


def test_one_node_rooms_state_members_patches_webhooks(start_server, browser, receiver, tmp_path):
    # Every delivery to the receiver fails once (one attempt): a failed delivery to retry from the console.
    config = tmp_path / "config.json"
    config.write_text(json.dumps(webhook_config(receiver.endpoint(["member.joined"], maxAttempts=1, retryMs=20))))
    s = start_server("--config", str(config), "--api-key", API_KEY, "--auth-secret", SECRET, "--metrics-access", "key")
    receiver.answers = [500]
    ann = Client(s.ws_url)
    ann.join("main", name="Ann")
    API(s).post("/rooms", {"room": "side-room"})

    # /admin answers with a redirect to /admin/ (its relative links resolve inside it).
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None
    try:
        urllib.request.build_opener(NoRedirect).open(s.http_url + "admin")
        raise AssertionError("no redirect")
    except urllib.error.HTTPError as answer:
        assert answer.code == 301 and answer.headers["location"] == "./admin/"

    a = browser(s.http_url + "admin")
    assert a.current_url.endswith("/admin/")
    sign_in(a, "not-the-key-0123456789")
    wait(a, lambda d: "not accepted" in text(d, "problem"), message="a wrong key refused in words")
    assert not signed_in(a)
    sign_in(a, API_KEY)
    wait(a, signed_in)
    wait(a, lambda d: "API key" in text(d, "who"))
    assert a.execute_script("return sessionStorage.length") == 1 and a.execute_script("return localStorage.length") == 0
    wait(a, lambda d: "Status\nok" in text(d, "health") or "ok" in text(d, "health"), message="health shown")
    wait(a, lambda d: text(d, "chart-connections") == "1", message="the connections chart shows Ann")
    assert set(room_rows(a)) >= {"main", "side-room"}

    # Search narrows the list.
    a.find_element(By.ID, "room-search").send_keys("side")
    wait(a, lambda d: room_rows(d) == ["side-room"])
    a.find_element(By.ID, "room-search").clear()
    a.find_element(By.ID, "room-search").send_keys(Keys.BACKSPACE)
    wait(a, lambda d: "main" in room_rows(d))

    # One room: members, live state, patches as they happen.
    open_room(a, "main")
    wait(a, lambda d: "Ann" in text(d, "members"), message="Ann listed as a member")
    assert '"q"' in text(a, "room-state")
    ann.intent("q", "set", {"value": 7}, room="main")
    wait(a, lambda d: '"value": 7' in text(d, "room-state"), message="the state follows the room live")
    wait(a, lambda d: "intent q.set" in text(d, "room-patches"), message="the patch listed with its cause")
    assert "#room=main" in a.current_url

    # Disconnect Ann: her connection closes with 4001, the member list empties.
    out = a.find_element(By.CSS_SELECTOR, f'[data-testid="members"] button[data-session="{ann.session}"]')
    out.click()  # the first press asks
    wait(a, lambda d: out.text == "Really disconnect?", message="a disconnect is confirmed first")
    assert "Ann" in text(a, "members")
    out.click()
    wait(a, lambda d: "Disconnected Ann" in text(d, "room-notice"), message="the disconnect said in words")
    wait(a, lambda d: "Nobody is in the room" in text(d, "members"))
    with pytest.raises(ConnectionClosed) as closed:
        ann.recv(lambda m: False, timeout=5)
    assert closed.value.rcvd.code == 4001

    # A room deleted and made again: what was shown of it goes (its state, its old patches), then the new one shows.
    api = API(s)
    open_room(a, "side-room")
    api.intents("side-room", {"control": "q", "intent": "set", "args": {"value": 3}})
    wait(a, lambda d: "server q.set" in text(d, "room-patches"), message="the server's change listed")
    api.delete("/rooms/side-room")
    wait(a, lambda d: "Not found" in text(d, "room-notice") and text(d, "room-state") == "", message="a deleted room said, its state gone")
    api.post("/rooms", {"room": "side-room"})
    wait(a, lambda d: text(d, "room-notice") == "" and '"q"' in text(d, "room-state"), message="the room made again")
    assert "q.set" not in text(a, "room-patches"), "the old epoch's patches are not the new room's"
    open_room(a, "main")

    # Webhooks: the endpoint, the failed delivery, Retry (the receiver takes it this time).
    wait(a, lambda d: receiver.url.split("//")[1] in text(d, "endpoints"), message="the endpoint listed")
    wait(a, lambda d: "member.joined" in text(d, "failed"), timeout=15, message="the failed delivery listed")
    a.find_element(By.CSS_SELECTOR, '[data-testid="failed"] button[data-event]').click()
    wait(a, lambda d: "pending again" in text(d, "webhooks-notice"))
    receiver.wait_for("member.joined")
    wait(a, lambda d: "No delivery has failed" in a.find_element(By.ID, "failed-note").text)

    # Reloading keeps the sign-in (session storage) and the chosen room (the URL); signing out forgets it.
    a.refresh()
    wait(a, signed_in)
    wait(a, lambda d: text(d, "room-name") == "main")
    a.find_element(By.ID, "sign-out").click()
    wait(a, lambda d: not signed_in(d))
    assert a.execute_script("return sessionStorage.length") == 0

    # A phone-sized window: one column, signed in by keyboard only.
    phone = browser(s.http_url + "admin/#room=main", width=390, height=1200)
    phone.switch_to.active_element.send_keys(API_KEY, Keys.ENTER)
    wait(phone, signed_in)
    wait(phone, lambda d: text(d, "room-name") == "main")
    overflow = phone.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
    wide = phone.execute_script("""const w = document.documentElement.clientWidth;
        return [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > w + 0.5)
            .slice(0, 5).map(e => e.tagName + '.' + e.className + '#' + e.id)""")
    assert overflow <= 0, f"the page is {overflow} px wider than the phone: {wide}"


def test_a_room_limited_token_sees_its_rooms_only(start_server, browser):
    s = start_server("--api-key", API_KEY, "--auth-secret", SECRET)
    api = API(s)
    for name in ("team-a", "team-b", "other"):
        api.post("/rooms", {"room": name})
    token = mint_token(SECRET, "--role", "admin", "--room", "team-*")
    a = browser(s.http_url + "admin/#room=other")
    sign_in(a, token)
    wait(a, signed_in)
    wait(a, lambda d: "admin token" in text(d, "who"))
    wait(a, lambda d: sorted(room_rows(d)) == ["team-a", "team-b"], message="only the granted rooms listed")
    wait(a, lambda d: "Not allowed" in text(d, "room-notice"), message="a room outside the grant refused in words")
    assert text(a, "room-state") == ""
    wait(a, lambda d: "Only the API key lists the endpoints" in d.find_element(By.ID, "endpoints-note").text)
    open_room(a, "team-a")
    assert '"controls"' in text(a, "room-state")
    # A viewer's token is no admin: refused at sign-in.
    viewer = mint_token(SECRET, "--role", "viewer", "--room", "*")
    b = browser(s.http_url + "admin/")
    sign_in(b, viewer)
    wait(b, lambda d: "Not allowed" in text(d, "problem"))
    assert not signed_in(b)


def test_a_cluster_shows_its_nodes_and_who_owns_which_room(cluster, browser):
    first, second = cluster(2, "--api-key", API_KEY)
    owner = Client(second.ws_url)
    owner.join("demo", name="Owner")  # the second node owns the room
    a = browser(first.http_url + "admin/")
    sign_in(a, API_KEY)
    wait(a, signed_in)
    wait(a, lambda d: len(d.find_elements(By.CSS_SELECTOR, '[data-testid="nodes"] tbody tr')) == 2, timeout=15, message="both nodes listed")
    nodes = text(a, "nodes")
    first_id = json.loads(urllib.request.urlopen(first.http_url + "healthz").read())["cluster"]["node"]
    second_id = json.loads(urllib.request.urlopen(second.http_url + "healthz").read())["cluster"]["node"]
    assert f"{first_id} (answering)" in nodes and second_id in nodes
    wait(a, lambda d: second_id in d.find_element(By.CSS_SELECTOR, '[data-testid="rooms"] tr[data-room="demo"]').text,
         timeout=15, message="the room's owner in the list (read every 10 s)")
    open_room(a, "demo")
    assert f"owned by {second_id}" in text(a, "room-meta")
    wait(a, lambda d: "Owner" in text(d, "members"), message="a member on the other node, through the owner")
    owner.intent("quantity", "set", {"value": 3}, room="demo")
    wait(a, lambda d: "intent quantity.set" in text(d, "room-patches"), message="patches of a room owned elsewhere")
