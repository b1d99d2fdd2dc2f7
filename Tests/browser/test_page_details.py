"""Details a first-time user notices (a review of the page in two real windows, a desktop and a phone): names instead of
session ids, a phone layout that stays within the screen, blank entries not sent, a list position that stays with its
item, a form that says when someone else changed the field being typed in."""
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from test_page import button, connected, form_input, wait
from test_page_intents import at, labels, submit


def test_an_unnamed_members_hold_names_a_guest_never_a_session_id(server, browser):
    a, b = browser(server.http_url), browser(server.http_url + "?name=Bob")
    wait(a, connected)
    wait(b, connected)
    wait(b, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#presence li")) == 2, message="both are here")
    session = next(li.get_attribute("data-session") for li in b.find_elements(By.CSS_SELECTOR, "#presence li") if "(you)" not in li.text)
    plus = button(a, "quantity", "next")
    ActionChains(a).click_and_hold(plus).perform()
    try:
        wait(b, lambda d: at(d, '[data-control="quantity"] .holding').text != "", message="the hold is shown")
        holding = at(b, '[data-control="quantity"] .holding').text
        assert holding == "Guest is holding +", holding
        assert session not in holding
    finally:
        ActionChains(a).release(plus).perform()


def test_a_long_item_keeps_the_phone_page_within_the_screen(server, browser):
    phone = browser(server.http_url + "?name=Pat", width=390, height=844)
    wait(phone, connected)
    long_label = "A very long item name that goes on and on well past any phone screen width"
    submit(phone, "person", "new", long_label)
    wait(phone, lambda d: long_label in " ".join(labels(d)), message="the item is added")
    width, viewport = phone.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= viewport, f"the page is {width}px wide on a {viewport}px screen"
    # The pager's ‹ and › stay on either side of its month, on one line.
    prev, nxt = button(phone, "month", "prev"), button(phone, "month", "next")
    assert abs(prev.location["y"] - nxt.location["y"]) < 2, (prev.location, nxt.location)


def test_a_blank_entry_is_not_sent(server, browser):
    a = browser(server.http_url + "?name=Ann")
    wait(a, connected)
    steps = lambda d: len(d.find_elements(By.CSS_SELECTOR, '[data-control="onboarding"] .steps li'))  # noqa: E731
    before = steps(a)
    submit(a, "onboarding", "new", "   ")
    submit(a, "onboarding", "new", "Real step")
    wait(a, lambda d: "Real step" in at(d, '[data-control="onboarding"] .steps').text, message="the real step is added")
    assert steps(a) == before + 1, "the blank one never went (intents are applied in the order sent)"


def test_an_insert_position_stays_with_its_item_as_the_list_changes(server, browser):
    a, b = browser(server.http_url + "?name=Ann"), browser(server.http_url + "?name=Bob")
    wait(a, connected)
    wait(b, connected)
    where = Select(at(a, '[data-testid="person-where"]'))
    where.select_by_visible_text("before Tim: 20")
    Select(at(b, '[data-testid="person-where"]')).select_by_visible_text("before Joe: 23")
    submit(b, "person", "new", '{"name": "Al", "age": 1}')
    wait(a, lambda d: labels(d)[0] == "Al: 1", message="the other window inserted at the top")
    assert where.first_selected_option.text == "before Tim: 20", "still the item chosen, not the position"
    submit(a, "person", "new", '{"name": "Cy", "age": 2}')
    wait(b, lambda d: labels(d)[:4] == ["Al: 1", "Joe: 23", "Cy: 2", "Tim: 20"], message="inserted before Tim")


def test_someone_elses_change_to_the_field_being_typed_in_is_said(server, browser):
    a, b = browser(server.http_url + "?name=Ann"), browser(server.http_url + "?name=Bob")
    wait(a, connected)
    wait(b, connected)
    name_a, name_b = form_input(a, "name"), form_input(b, "name")
    name_a.click()
    name_a.send_keys("Ann")
    wait(b, lambda d: form_input(d, "name").get_attribute("value") == "Ann", message="Ann's typing reaches Bob")
    name_b.click()
    name_b.send_keys(Keys.END, Keys.BACKSPACE * 3, "Bob")
    name_b.send_keys(Keys.TAB)
    note = '[data-testid="signup-account-name-changed"]'
    wait(a, lambda d: "“Bob”" in at(d, note).text, message="Ann, still in the field, is told of Bob's value")
    assert name_a.get_attribute("value") == "Ann", "what Ann typed is kept while she is in the field"
    name_a.send_keys(Keys.TAB)
    wait(a, lambda d: form_input(d, "name").get_attribute("value") == "Bob", message="leaving it shows the room's value")
    assert at(a, note).text == ""


def test_a_form_error_waits_until_the_field_is_left(server, browser):
    a, b = browser(server.http_url + "?name=Ann"), browser(server.http_url + "?name=Bob")
    wait(a, connected)
    wait(b, connected)
    email = form_input(a, "email")
    error_of = lambda d: d.find_element(By.ID, "signup-account-email-error").text  # noqa: E731
    version = lambda d: int(d.find_element(By.ID, "version").get_attribute("textContent"))  # noqa: E731
    email.click()
    email.send_keys("ann@")
    wait(b, lambda d: form_input(d, "email").get_attribute("value") == "ann@" and error_of(d) != "",
         message="the other window shows the value typed elsewhere, with its error")
    seen = version(b)
    wait(a, lambda d: version(d) >= seen, message="the typing window has the same state")
    assert error_of(a) == "", "not while the first value is being typed"
    email.send_keys(Keys.TAB)
    wait(a, lambda d: error_of(d) != "", message="shown once the field is left")


def test_the_go_to_field_is_not_refilled_while_someone_types_in_it(server, browser):
    a, b = browser(server.http_url + "?name=Ann"), browser(server.http_url + "?name=Bob")
    wait(a, connected)
    wait(b, connected)
    goto = at(a, '[data-testid="month-goto"]')
    assert goto.get_attribute("value") != "", "it starts at the current page"
    goto.click()
    a.execute_script("arguments[0].value = ''", goto)  # what a half-typed month reads as
    before = at(a, '[data-testid="month-value"]').get_attribute("data-position")
    button(b, "month", "next").click()
    wait(a, lambda d: at(d, '[data-testid="month-value"]').get_attribute("data-position") != before, message="the page moved")
    assert goto.get_attribute("value") == "", "what is being typed is left alone"
