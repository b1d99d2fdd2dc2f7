"""The range (a fader) in two headless Chromium windows: a slider dragged in one moves in the other, and the other
window shows who is moving it."""
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

from test_page import connected, wait


def value(driver):
    return float(driver.find_element(By.CSS_SELECTOR, '[data-testid="volume-value"]').text)


def test_a_slider_dragged_in_one_window_moves_in_the_other(server, browser):
    a, b = browser(server.http_url + "?name=Ann"), browser(server.http_url + "?name=Bob")
    wait(a, connected)
    wait(b, connected)
    assert value(a) == value(b) == 0.5
    slider = a.find_element(By.CSS_SELECTOR, '[data-testid="volume-slider"]')
    a.execute_script("arguments[0].scrollIntoView({block: 'center'})", slider)
    width = slider.size["width"]
    drag = ActionChains(a).click_and_hold(slider)
    for step in range(1, 9):  # towards the left end, a frame at a time
        drag = drag.move_by_offset(-width // 20, 0).pause(0.03)
    drag.perform()
    wait(b, lambda d: value(d) < 0.3, message="Bob's slider follows Ann's drag")
    wait(b, lambda d: "Ann is moving it" in d.find_element(By.CSS_SELECTOR, '[data-testid="volume-holding"]').text)
    ActionChains(a).release().perform()
    wait(b, lambda d: d.find_element(By.CSS_SELECTOR, '[data-testid="volume-holding"]').text == "", message="the drag ends")
    wait(b, lambda d: value(d) == value(a), message="both end on the same value")
    assert float(b.find_element(By.CSS_SELECTOR, '[data-testid="volume-slider"]').get_attribute("value")) == value(a)
