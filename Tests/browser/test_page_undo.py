"""Undo and Redo on the page (headless Chromium, two windows): one window's change undone by its button and by Ctrl+Z,
seen in the other; redone with Ctrl+Shift+Z; buttons disabled when there is nothing to take back; a conflict with the
other window's change said in words naming who; a phone-sized window."""
from conftest import SCREENSHOTS
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from test_page import DEEP_JS, button, connected, quantity, wait


def history(driver, which):
    return driver.find_element(By.CSS_SELECTOR, f'[data-testid="{which}"]')


def notice(driver):
    return driver.find_element(By.CSS_SELECTOR, '[data-testid="history-notice"]')


def shortcut(driver, key, shift=False):
    driver.execute_script(DEEP_JS + "deepActive()?.blur()")  # focus outside any field: Ctrl+Z is the room's
    chain = ActionChains(driver).key_down(Keys.CONTROL)
    if shift:
        chain = chain.key_down(Keys.SHIFT)
    chain = chain.send_keys(key)
    if shift:
        chain = chain.key_up(Keys.SHIFT)
    chain.key_up(Keys.CONTROL).perform()


def test_undo_and_redo_by_button_and_keyboard_seen_in_the_other_window(server, browser):
    a, b = browser(server.http_url + "?name=Ann"), browser(server.http_url + "?name=Bob", width=390, height=1200)
    wait(a, connected)
    wait(b, connected)
    wait(a, lambda d: history(d, "undo").is_displayed() and not history(d, "undo").is_enabled(), message="nothing to undo yet")
    start = quantity(a)
    button(a, "quantity", "next").click()
    button(a, "quantity", "next").click()
    wait(b, lambda d: quantity(d) == start + 2)
    wait(a, lambda d: history(d, "undo").is_enabled(), message="Undo enabled after a change")
    assert not history(b, "undo").is_enabled(), "Bob made no change"

    history(a, "undo").click()
    wait(b, lambda d: quantity(d) == start + 1, message="Ann's undo seen by Bob")
    wait(a, lambda d: history(d, "redo").is_enabled())
    shortcut(a, "z")
    wait(b, lambda d: quantity(d) == start, message="Ctrl+Z undoes the change before")
    wait(a, lambda d: not history(d, "undo").is_enabled(), message="nothing left to undo")
    shortcut(a, "z", shift=True)
    wait(b, lambda d: quantity(d) == start + 1, message="Ctrl+Shift+Z redoes")
    a.save_screenshot(str(SCREENSHOTS / "undo-bar.png"))

    # Bob changes the same value: Ann's undo is refused, in words naming him; then Bob's own undo goes through.
    button(b, "quantity", "next").click()
    wait(a, lambda d: quantity(d) == start + 2)
    wait(b, lambda d: history(d, "undo").is_enabled())
    history(a, "undo").click()
    wait(a, lambda d: notice(d).get_attribute("data-code") == "conflict" and "Bob changed it since" in notice(d).text,
         message="the conflict named Bob")
    a.save_screenshot(str(SCREENSHOTS / "undo-conflict.png"))
    assert quantity(a) == start + 2, "nothing changed"
    history(b, "undo").click()
    wait(a, lambda d: quantity(d) == start + 1)
    history(a, "undo").click()
    wait(b, lambda d: quantity(d) == start, message="after Bob's undo, Ann's goes through")
    b.save_screenshot(str(SCREENSHOTS / "undo-phone.png"))
    right = b.execute_script(DEEP_JS + "return deep('.history').getBoundingClientRect().right")
    assert right <= 390, "the bar fits a phone (beside the name box)"
    labels = [history(b, w).get_attribute("aria-label") for w in ("undo", "redo")]
    assert labels == ["Undo", "Redo"], "arrows only on a phone, named for screen readers"


def test_ctrl_z_in_a_text_field_is_the_browsers_own(server, browser):
    a = browser(server.http_url + "?name=Ann")
    wait(a, connected)
    button(a, "quantity", "next").click()
    wait(a, lambda d: history(d, "undo").is_enabled())
    start = quantity(a)
    field = a.find_element(By.ID, "name-input")
    field.click()
    ActionChains(a).key_down(Keys.CONTROL).send_keys("z").key_up(Keys.CONTROL).perform()
    a.execute_script("return new Promise(r => setTimeout(r, 300))")  # let a wrongly sent undo come back
    assert quantity(a) == start and history(a, "undo").is_enabled(), "the room's change was not undone"
