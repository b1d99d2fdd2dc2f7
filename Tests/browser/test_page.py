"""The web client in real headless Chromium windows against the real server."""
import json

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from livecontrols_server import REPO, Server

TIMEOUT = 10


def wait(driver, condition, timeout=TIMEOUT, message=""):
    # The page re-renders a control on each patch: an element a condition found may be replaced before it reads its
    # text (stale). That look proves nothing either way; the next one does.
    return WebDriverWait(driver, timeout, poll_frequency=0.05, ignored_exceptions=[StaleElementReferenceException]).until(
        lambda d: condition(d), message)


# The page is LiveControls elements, each in its own shadow root: scripts look into them with these (a selector
# matches within one tree), and the focused element is the innermost one (document.activeElement is its host).
DEEP_JS = """const deep = (s, r = document) => r.querySelector(s)
    ?? [...r.querySelectorAll('*')].filter(e => e.shadowRoot).map(e => deep(s, e.shadowRoot)).find(Boolean) ?? null;
const deepAll = (s, r = document) => [...r.querySelectorAll(s),
    ...[...r.querySelectorAll('*')].filter(e => e.shadowRoot).flatMap(e => deepAll(s, e.shadowRoot))];
const deepActive = () => { let a = document.activeElement; while (a?.shadowRoot?.activeElement) a = a.shadowRoot.activeElement; return a; };
"""


def focused_element(driver):
    return driver.execute_script(DEEP_JS + "return deepActive()")


def connected(driver):
    return driver.find_element(By.ID, "status").get_attribute("data-state") == "open"


def quantity(driver) -> int:
    return int(driver.find_element(By.CSS_SELECTOR, '[data-testid="quantity-value"]').text)


def button(driver, control, direction):
    return driver.find_element(By.CSS_SELECTOR, f'[data-control="{control}"] button[data-direction="{direction}"]')


def test_a_click_in_one_window_changes_the_other(server, browser):
    a, b = browser(server.http_url + "?name=A"), browser(server.http_url + "?name=B")
    wait(a, connected)
    wait(b, connected)
    wait(a, lambda d: "B" in d.find_element(By.ID, "presence").text, message="presence shows the other window")
    start = quantity(a)
    # A click is a press and a release: exactly one step.
    button(a, "quantity", "next").click()
    wait(b, lambda d: quantity(d) == start + 1, message="the other window follows")
    wait(a, lambda d: quantity(d) == start + 1)
    assert a.find_element(By.ID, "version").get_attribute("textContent") == b.find_element(By.ID, "version").get_attribute("textContent")


def test_press_and_hold_ticks_in_both_windows_and_release_stops(server, browser):
    a, b = browser(server.http_url + "?name=holder"), browser(server.http_url + "?name=watcher")
    wait(a, connected)
    wait(b, connected)
    start = quantity(b)
    plus = button(a, "quantity", "next")
    ActionChains(a).click_and_hold(plus).perform()
    wait(b, lambda d: quantity(d) >= start + 4, message="repeated ticks reach the other window")
    holding = b.find_element(By.CSS_SELECTOR, '[data-control="quantity"] .holding').text
    assert "holder" in holding
    ActionChains(a).release(plus).perform()
    wait(b, lambda d: d.find_element(By.CSS_SELECTOR, '[data-control="quantity"] .holding').text == "", message="the hold ends")
    stopped = quantity(b)
    # Stopped for good: a later, independent change arrives as the very next version.
    version = int(b.find_element(By.ID, "version").get_attribute("textContent"))
    button(b, "quantity", "prev").click()
    wait(b, lambda d: int(d.find_element(By.ID, "version").get_attribute("textContent")) >= version + 1)
    assert quantity(b) == stopped - 1
    wait(a, lambda d: quantity(d) == stopped - 1)


def form_input(driver, field):
    return driver.find_element(By.ID, f"signup-account-{field}")


def cta(driver):
    return driver.find_element(By.CSS_SELECTOR, '[data-testid="signup-cta"]')


def test_form_typing_shows_in_the_other_window_and_the_cta_follows_validity(server, browser):
    a, b = browser(server.http_url), browser(server.http_url)
    wait(a, connected)
    wait(b, connected)
    assert not cta(a).is_enabled()
    form_input(a, "email").send_keys("not-an-email")
    wait(b, lambda d: form_input(d, "email").get_attribute("value") == "not-an-email", message="typing reaches the other window")
    wait(b, lambda d: "format" in d.find_element(By.ID, "signup-account-email-error").text)
    form_input(a, "email").clear()
    form_input(a, "email").send_keys("ann@example.com")
    form_input(b, "name").send_keys("Ann Lee")
    wait(a, lambda d: form_input(d, "name").get_attribute("value") == "Ann Lee")
    wait(a, lambda d: cta(d).is_enabled(), message="valid element enables the CTA")
    wait(b, lambda d: cta(d).is_enabled())
    cta(b).click()
    wait(a, lambda d: d.find_element(By.CSS_SELECTOR, '[data-element="account"]').get_attribute("class").startswith("element collapsed"))
    assert "Ann Lee" in a.find_element(By.CSS_SELECTOR, '[data-element="account"] .summary').text


def test_reload_resumes_with_the_same_state(server, browser):
    a = browser(server.http_url)
    wait(a, connected)
    for _ in range(3):
        button(a, "quantity", "next").click()
    wait(a, lambda d: quantity(d) == 4)
    a.refresh()
    wait(a, connected)
    wait(a, lambda d: quantity(d) == 4, message="the server's state survives a reload")


def test_killed_socket_shows_the_status_and_recovers(browser):
    first = Server().start()
    port = first.port
    try:
        a = browser(first.http_url)
        wait(a, connected)
        button(a, "quantity", "next").click()
        wait(a, lambda d: quantity(d) == 2)
        first.stop()
        wait(a, lambda d: d.find_element(By.ID, "status").get_attribute("data-state") == "closed",
             message="the page shows the lost connection")
        assert a.find_element(By.ID, "retry").is_displayed(), "with a way to try again at once"
        assert a.find_element(By.ID, "errors").text == "", "a short outage (a restart) is not an alarm: that waits 8 s"
        second = Server("--port", str(port)).start()
        try:
            a.execute_script("document.getElementById('retry').click()")  # a no-op while an attempt is under way
            wait(a, connected, timeout=20, message="the page reconnects")
            wait(a, lambda d: quantity(d) == 1, message="and shows the new server's state (a fresh room)")
            notice = a.find_element(By.CSS_SELECTOR, '[data-testid="page-notice"]').text
            assert "started over" in notice, f"the page says the room's earlier state is gone: {notice!r}"
            assert not a.find_element(By.ID, "retry").is_displayed()
        finally:
            second.stop()
    finally:
        first.stop()


def test_phone_width_is_readable(server, browser):
    a = browser(server.http_url, width=375, height=1800)
    wait(a, connected)
    width = a.execute_script("return document.documentElement.scrollWidth")
    assert width <= 375, f"no horizontal scrolling at phone width (content is {width}px)"


PATCH_CASES = [
    ({"a": 1}, [{"op": "replace", "path": "/a", "value": 2}], {"a": 2}),
    ({"a": {"b": [1, 2]}}, [{"op": "add", "path": "/a/b/1", "value": 9}], {"a": {"b": [1, 9, 2]}}),
    ({"a": [1]}, [{"op": "add", "path": "/a/-", "value": 2}], {"a": [1, 2]}),
    ({"a/b": 1, "c~d": 2}, [{"op": "remove", "path": "/a~1b"}, {"op": "replace", "path": "/c~0d", "value": 3}], {"c~d": 3}),
    ({"x": 1}, [{"op": "add", "path": "/y", "value": {"z": None}}], {"x": 1, "y": {"z": None}}),
    ({"l": [1, 2, 3]}, [{"op": "remove", "path": "/l/0"}], {"l": [2, 3]}),
]


def test_the_client_modules_patch_applier_follows_rfc6902(server, browser):
    a = browser(server.http_url)
    wait(a, connected)
    results = a.execute_async_script("""
        const [cases, done] = arguments;
        import('./livecontrols.js').then(({ applyPatch }) => {
          done(cases.map(([doc, ops]) => applyPatch(structuredClone(doc), ops)));
        }, (e) => done(String(e)));
    """, [[doc, ops] for doc, ops, _ in PATCH_CASES])
    assert results == [expected for _, _, expected in PATCH_CASES], json.dumps(results)
    errors = a.execute_async_script("""
        const done = arguments[0];
        import('./livecontrols.js').then(({ applyPatch }) => {
          const bad = [[{}, [{op: 'replace', path: '/nope', value: 1}]], [{}, [{op: 'remove', path: '/nope'}]]];
          done(bad.map(([d, o]) => { try { applyPatch(d, o); return 'applied'; } catch (e) { return 'refused'; } }));
        });
    """)
    assert errors == ["refused", "refused"]


def test_a_join_refused_for_a_passing_reason_is_retried_until_it_succeeds(start_server, browser):
    # No room in the config, one loaded room at most: the page's join waits for the client's room to unload.
    s = start_server("--config", str(REPO / "Benchmarks" / "bench-config.json"), "--max-rooms", "1", "--room-idle-seconds", "1")
    holder = s.client()
    assert holder.join("first")["type"] == "snapshot"
    page = browser(s.http_url + "?room=second")
    wait(page, lambda d: d.find_element(By.ID, "errors").get_attribute("data-code") == "room_limit", message="the refusal is shown")
    assert page.find_element(By.ID, "status").get_attribute("data-state") == "connecting", "still trying"
    holder.leave("first")  # idle for a second, then unloaded: the retried join gets the place
    wait(page, connected, message="the retried join succeeded")
    assert page.find_element(By.ID, "room-name").text == "second"


def test_a_join_refused_for_good_shows_refused(start_server, browser):
    s = start_server("--auth", "required", "--auth-secret", "0123456789abcdef0123456789abcdef")
    page = browser(s.http_url)
    wait(page, lambda d: d.find_element(By.ID, "status").get_attribute("data-state") == "refused", message="status refused")
    assert page.find_element(By.ID, "errors").get_attribute("data-code") == "unauthorized"
    assert "access token" in page.find_element(By.ID, "errors").text, "said in plain words"


def test_the_server_api_deleting_the_room_or_disconnecting_the_page_is_shown_and_not_undone(start_server, browser):
    import sys
    sys.path.insert(0, str(REPO / "Tests" / "integration"))
    from api_client import API, API_KEY, intent

    s = start_server("--api-key", API_KEY)
    api = API(s)
    api.post("/rooms", {"room": "meeting", "intents": [intent("quantity", "set", {"value": 7})]})
    page = browser(s.http_url + "?room=meeting&name=Ann")
    other = browser(s.http_url + "?name=Bob")
    wait(page, connected)
    wait(other, connected)
    assert quantity(page) == 7
    api.intents("meeting", intent("quantity", "set", {"value": 8}))
    wait(page, lambda d: quantity(d) == 8, message="an API intent shows like any other")

    api.delete("/rooms/meeting")
    wait(page, lambda d: d.find_element(By.ID, "status").get_attribute("data-state") == "deleted", message="status deleted")
    assert page.find_element(By.ID, "errors").get_attribute("data-code") == "room_deleted"
    # Said once: the status names what happened, the message under it says what to do (the page showed both twice).
    assert page.find_element(By.ID, "status").text == "room deleted"
    assert "Reload the page" in page.find_element(By.ID, "errors").text
    assert api.get("/rooms/meeting").status_code == 404, "the page did not make the room again"

    session = api.get("/rooms/demo/members").json()["members"][0]["session"]
    api.delete(f"/rooms/demo/members/{session}")
    wait(other, lambda d: d.find_element(By.ID, "status").get_attribute("data-state") == "removed", message="status removed")
    assert other.find_element(By.ID, "status").text == "disconnected by the server"
