"""The toggle in two headless Chromium windows: a confirming hold seen by the other window, switched by the server."""
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

from test_page import connected, wait


def state(driver):
    return driver.find_element(By.CSS_SELECTOR, '[data-testid="onAir-state"]').text


def holding(driver):
    return driver.find_element(By.CSS_SELECTOR, '[data-testid="onAir-holding"]').text


def test_a_held_confirm_switches_in_both_windows_and_an_early_release_does_not(server, browser):
    a, b = browser(server.http_url + "?name=Ann"), browser(server.http_url + "?name=Bob")
    wait(a, connected)
    wait(b, connected)
    assert state(a) == "Off" and state(b) == "Off"
    hold = a.find_element(By.CSS_SELECTOR, '[data-testid="onAir-hold"]')
    assert "Hold to switch on" in hold.text
    # Let go early: the hold shows in the other window, ends, and nothing switches.
    ActionChains(a).click_and_hold(hold).perform()
    wait(b, lambda d: "Ann is switching it on" in holding(d), message="Bob sees Ann confirming")
    ActionChains(a).release(hold).perform()
    wait(b, lambda d: holding(d) == "", message="the early release ends the hold")
    assert state(b) == "Off"
    # Keep holding: the server switches it at `until`, for both.
    ActionChains(a).click_and_hold(hold).perform()
    wait(b, lambda d: state(d) == "On", message="the server switched it after confirmHoldMs")
    wait(a, lambda d: state(d) == "On")
    ActionChains(a).release(hold).perform()
    assert b.find_element(By.CSS_SELECTOR, '[data-testid="onAir-switch"]').get_attribute("aria-checked") == "true"
    assert "Hold to switch off" in b.find_element(By.CSS_SELECTOR, '[data-testid="onAir-hold"]').text
