"""Presence per user in headless Chromium: one person in two windows (tokens with the same `sub`) is listed once, with
"2 devices", in every window; another person once; closing one of the two windows leaves one device."""
from selenium.webdriver.common.by import By

from conftest import SCREENSHOTS
from test_auth import SECRET, mint
from test_page import connected, wait


def people(driver):
    return [(li.get_attribute("data-sessions").count(" ") + 1, li.text) for li in driver.find_elements(By.CSS_SELECTOR, "#presence li")]


def test_one_person_on_two_devices_is_listed_once(start_server, browser):
    server = start_server("--auth", "required", "--auth-secret", SECRET)
    ann = mint("--role", "editor", "--room", "demo", "--name", "Ann", "--subject", "user-ann")
    bob = mint("--role", "editor", "--room", "demo", "--name", "Bob", "--subject", "user-bob")
    laptop = browser(server.http_url + "?token=" + ann)
    phone = browser(server.http_url + "?token=" + ann, width=390, height=900)
    other = browser(server.http_url + "?token=" + bob)
    for d in (laptop, phone, other):
        wait(d, connected)
    expected_other = [(2, "Ann 2 devices"), (1, "Bob (you)")]
    wait(other, lambda d: people(d) == expected_other, message=f"Bob sees Ann once: {people(other)}")
    wait(phone, lambda d: people(d) == [(2, "Ann (you) 2 devices"), (1, "Bob")], message=f"the phone: {people(phone)}")
    assert phone.find_element(By.ID, "presence-count").text == "2"
    phone.save_screenshot(str(SCREENSHOTS / "one-person-two-devices-phone.png"))
    laptop.get("about:blank")  # the laptop's page closes (its window stays, for the screenshot at the end)
    wait(other, lambda d: people(d) == [(1, "Ann"), (1, "Bob (you)")], message="one device left")
