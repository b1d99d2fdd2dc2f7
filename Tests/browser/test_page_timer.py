"""The timer in two headless Chromium windows: both count down together from the server's deadline, a pause in one
stops both at the same time, and a finished countdown moves the agenda on in both."""
import json

from selenium.webdriver.common.by import By

from test_page import connected, wait


def shown(driver, control="timebox"):
    return driver.find_element(By.CSS_SELECTOR, f'[data-testid="{control}-time"]').text


def seconds(text):
    parts = [int(p) for p in text.split(":")]
    return sum(p * 60 ** i for i, p in enumerate(reversed(parts)))


def click(driver, testid):
    driver.find_element(By.CSS_SELECTOR, f'[data-testid="{testid}"]').click()


def test_both_windows_count_down_together_and_pause_together(server, browser):
    a, b = browser(server.http_url + "?name=Ann"), browser(server.http_url + "?name=Bob")
    wait(a, connected)
    wait(b, connected)
    assert shown(a) == shown(b) == "5:00"
    click(a, "timebox-start")
    wait(b, lambda d: seconds(shown(d)) <= 298, message="Bob's page counts down on its own clock")
    assert abs(seconds(shown(a)) - seconds(shown(b))) <= 1
    click(b, "timebox-pause")
    wait(a, lambda d: d.find_element(By.CSS_SELECTOR, '[data-testid="timebox-status"]').text == "Paused")
    wait(b, lambda d: shown(d) == shown(a), message="paused, both show the server's time left")
    assert a.find_element(By.CSS_SELECTOR, '[data-testid="timebox-resume"]').is_displayed()


def test_a_finished_countdown_moves_the_agenda_in_both_windows(start_server, browser, tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({
        "templates": {"t": {"controls": {
            "agenda": {"kind": "wizard", "label": "Agenda", "steps": [{"id": "a", "title": "Intro"}, {"id": "b", "title": "Ideas"}]},
            "box": {"kind": "timer", "label": "Timebox", "durationMs": 2000, "then": {"control": "agenda", "intent": "next"}},
        }}}, "defaultTemplate": "t", "rooms": {"demo": {"template": "t"}}}))
    server = start_server("--config", str(path))
    a, b = browser(server.http_url + "?name=Ann"), browser(server.http_url + "?name=Bob")
    wait(a, connected)
    wait(b, connected)
    click(a, "box-start")
    for d in (a, b):
        wait(d, lambda d: d.find_element(By.CSS_SELECTOR, '[data-testid="box-status"]').text == "Time is up", timeout=10)
        wait(d, lambda d: "Ideas" in d.find_element(By.CSS_SELECTOR, '[data-testid="agenda-phase"]').text)
        assert shown(d, "box") == "0:00"
