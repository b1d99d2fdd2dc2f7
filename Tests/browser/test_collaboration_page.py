"""Collaboration on the page, in two real windows: a wizard that says why Next waits, a host-led agenda."""
from selenium.webdriver.common.by import By

from conftest import SCREENSHOTS
from test_auth import SECRET, mint
from test_page import button, connected, form_input, wait


def next_button(driver, control):
    return driver.find_element(By.CSS_SELECTOR, f'[data-control="{control}"] .actions button:nth-child(2)')


def two_windows(server, browser, first, second):
    """Two connected windows of the demo room, named."""
    windows = browser(server.http_url + f"?name={first}"), browser(server.http_url + f"?name={second}")
    for window in windows:
        wait(window, connected)
    return windows


def hint(driver, control):
    return driver.find_element(By.CSS_SELECTOR, f'[data-testid="{control}-hint"]').text


def test_next_waits_for_the_guarding_form_and_says_what_to_fill_in(server, browser):
    a, b = two_windows(server, browser, "Guide", "Filler")
    next_button(a, "onboarding").click()
    wait(a, lambda d: not next_button(d, "onboarding").is_enabled(), message="Next waits for the account part")
    wait(b, lambda d: hint(d, "onboarding") == "Fill in “Account” in Sign up to continue.", message="both windows say why")
    form_input(b, "email").send_keys("ann@example.com")
    form_input(b, "name").send_keys("Ann Lee")
    wait(a, lambda d: next_button(d, "onboarding").is_enabled(), message="the other window's typing opens Next")
    assert hint(a, "onboarding") == ""


def test_only_the_host_moves_the_workshop_agenda(start_server, browser):
    server = start_server("--auth-secret", SECRET)
    room = "?room=ws-1&template=workshop&token="
    host = browser(server.http_url + room + mint("--role", "admin", "--role", "host", "--room", "ws-*", "--name", "Hana"))
    wait(host, connected)
    guest = browser(server.http_url + room + mint("--room", "ws-*", "--name", "Gus"))
    wait(guest, connected)
    wait(guest, lambda d: hint(d, "agenda") == "Only host can move Agenda.", message="the guest is told who may")
    assert not next_button(guest, "agenda").is_enabled()
    assert not guest.find_element(By.CSS_SELECTOR, '[data-testid="timebox-start"]').is_enabled()
    assert next_button(host, "agenda").is_enabled() and hint(host, "agenda") == ""
    next_button(host, "agenda").click()
    wait(guest, lambda d: "step 2 of 4: Ideas" in d.find_element(By.CSS_SELECTOR, '[data-testid="agenda-phase"]').text,
         message="the host's Next reaches the guest")


def editor_label(driver, field):
    return driver.find_element(By.CSS_SELECTOR, f'[data-testid="signup-account-{field}-editor"]').text


def test_a_focused_field_shows_who_is_editing_it_in_the_other_window(server, browser):
    a, b = two_windows(server, browser, "Ann", "Bob")
    form_input(a, "email").click()  # focus: a claim
    wait(b, lambda d: editor_label(d, "email") == "Ann is editing", message="the claim shows on the field itself")
    wait(b, lambda d: "editing Sign up › Email" in d.find_element(By.ID, "presence").text)
    assert editor_label(a, "email") == "", "not on your own field"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    b.save_screenshot(str(SCREENSHOTS / "claimed-field-seen-by-the-other-window.png"))
    form_input(a, "name").click()  # blur of email: its claim ends; name is claimed
    wait(b, lambda d: editor_label(d, "email") == "" and editor_label(d, "name") == "Ann is editing")
