"""The poll in headless Chromium windows: a vote seen as a count in the other window, the voter's own choice marked,
an option added, close and reveal with the tally as bars in both; a phone-sized window."""
from selenium.webdriver.common.by import By

from test_page import connected, wait


def find(driver, testid):
    return driver.find_element(By.CSS_SELECTOR, f'[data-testid="{testid}"]')


def option(driver, option_id):
    return find(driver, f"lunch-option-{option_id}")


def test_a_vote_is_private_until_revealed_in_both_windows(server, browser):
    a, b = browser(server.http_url + "?name=Ann"), browser(server.http_url + "?name=Bob", width=390, height=1400)
    wait(a, connected)
    wait(b, connected)
    assert find(a, "lunch-voters").text == "Nobody has voted"
    a.execute_script("arguments[0].scrollIntoView({block: 'center'})", find(a, "lunch-options"))
    option(a, "Sushi").click()
    wait(a, lambda d: option(d, "Sushi").get_attribute("aria-checked") == "true", message="Ann's choice is marked")
    wait(b, lambda d: find(d, "lunch-voters").text == "1 person has voted", message="Bob sees a count")
    assert option(b, "Sushi").get_attribute("aria-checked") == "false", "not whom for"
    assert option(b, "Sushi").find_element(By.CLASS_NAME, "poll-count").text == "", "no tally before the reveal"
    assert find(a, "lunch-voters").text == "1 person has voted — you included"
    # Bob adds an option and votes for it.
    new = find(b, "lunch-new")
    new.send_keys("Tacos\n")
    wait(b, lambda d: len(d.find_elements(By.CSS_SELECTOR, '[data-testid="lunch-option-added-1"]')) == 1, message="the added option")
    option(b, "added-1").click()
    wait(a, lambda d: find(d, "lunch-voters").text == "2 people have voted — you included")
    # Close: no more votes (buttons disabled); reveal: the tally in both windows.
    find(a, "lunch-close").click()
    wait(b, lambda d: find(d, "lunch-phase").get_attribute("data-phase") == "closed")
    assert not option(b, "Pizza").is_enabled()
    find(b, "lunch-reveal").click()
    for d in (a, b):
        wait(d, lambda d: option(d, "Sushi").find_element(By.CLASS_NAME, "poll-count").text == "1", message="the tally")
        assert option(d, "added-1").find_element(By.CLASS_NAME, "poll-count").text == "1"
        assert option(d, "Pizza").find_element(By.CLASS_NAME, "poll-count").text == "0"
        assert "Revealed" in find(d, "lunch-phase").text
    width = b.execute_script("return arguments[0].getBoundingClientRect().width", option(b, "Sushi"))
    assert 250 < width <= 390, "the options fit a phone's width"
    a.execute_script("arguments[0].scrollIntoView({block: 'center'})", find(a, "lunch-options"))
    b.execute_script("arguments[0].scrollIntoView({block: 'center'})", find(b, "lunch-options"))
