"""Reactions (broadcast events) in headless Chromium windows: one window's reaction shown in the other with its sender's
name, and in its own as "You"; gone after a few seconds; too fast is said in words and cleared; keyboard only; a phone-sized window."""
from conftest import SCREENSHOTS
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from test_page import connected, wait


def recent(driver):
    return [li.get_attribute("aria-label") for li in driver.find_elements(By.CSS_SELECTOR, '[data-testid="reactions"] li')]


def test_a_reaction_is_seen_in_the_other_window_and_then_fades(server, browser):
    a, b = browser(server.http_url + "?name=Ann"), browser(server.http_url + "?name=Bob", width=390, height=1200)
    wait(a, connected)
    wait(b, connected)
    a.find_element(By.CSS_SELECTOR, 'button[aria-label="React 🎉"]').click()
    wait(b, lambda d: recent(d) == ["Ann reacted 🎉"], message="Bob sees Ann's reaction")
    wait(a, lambda d: recent(d) == ["You reacted 🎉"], message="Ann sees her own")
    b.save_screenshot(str(SCREENSHOTS / "reaction-seen-by-the-other-window.png"))
    wait(b, lambda d: recent(d) == [], timeout=8, message="gone after a few seconds")
    # Keyboard only: tab to a reaction button and press Enter.
    button = b.find_element(By.CSS_SELECTOR, 'button[aria-label="React 👍"]')
    b.execute_script("arguments[0].focus()", button)
    button.send_keys(Keys.ENTER)
    wait(a, lambda d: "Bob reacted 👍" in recent(d), message="Bob's reaction by keyboard")
    width = b.execute_script("return document.getElementById('reactions-panel').getBoundingClientRect().width")
    assert 250 < width <= 390, "the panel fits a phone's width"


def test_too_fast_is_said_in_words_and_cleared(server, browser):
    a = browser(server.http_url + "?name=Ann")
    wait(a, connected)
    # 45 reactions at once: past the member's burst of 40, the rest are refused (rate_limited), said in words.
    a.execute_script("""
        const b = document.querySelector('button[aria-label="React 👏"]');
        for (let i = 0; i < 45; i++) b.click();""")
    notice = a.find_element(By.CSS_SELECTOR, "#reactions-panel [data-notice]")
    wait(a, lambda d: notice.get_attribute("data-code") == "rate_limited" and "Too fast" in notice.text, message="refusal shown")
    # Later, one that goes through clears it.
    wait(a, lambda d: (d.find_element(By.CSS_SELECTOR, 'button[aria-label="React 👍"]').click() or True) and notice.text == "",
         timeout=10, message="cleared by the next reaction that goes through")
