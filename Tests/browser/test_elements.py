"""LiveControls elements (web/elements.js) in headless Chromium: pages of tags and no script of their own. Two windows of
web/elements.html (every kind by its tag): a click and a hold in one seen in the other, an error shown next to the
control and cleared, lc-change/lc-error events, keyboard only, presence, a phone-sized window; web/embed.html (the
collaborative wizard of docs/CLIENT.md) in two windows."""
from conftest import SCREENSHOTS
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from test_page import wait


def part(driver, tag, css):
    """An element inside the shadow root of the first `tag`."""
    return driver.find_element(By.CSS_SELECTOR, tag).shadow_root.find_element(By.CSS_SELECTOR, css)


def joined(driver):
    return driver.execute_script("return document.querySelector('lc-room')?.dataset.status") == "open"


def quantity(driver):
    return int(part(driver, 'lc-stepper[control="quantity"]', '[data-testid="quantity-value"]').text)


def test_every_kind_draws_and_two_windows_move_together(server, browser):
    a = browser(server.http_url + "elements.html")
    b = browser(server.http_url + "elements.html", width=390, height=1400)
    wait(a, joined)
    wait(b, joined)
    kinds = a.execute_script("""return [...document.querySelectorAll('lc-room > * , #controls > *')]
        .filter(e => e.shadowRoot?.querySelector('[data-kind]')).map(e => e.shadowRoot.querySelector('[data-kind]').dataset.kind)""")
    assert sorted(set(kinds)) == sorted(["stepper", "list", "wizard", "form", "pager", "toggle", "timer", "range", "poll", "text"]), kinds
    a.execute_script("""window.changes = []; window.errors = [];
        document.addEventListener('lc-change', e => changes.push(e.detail.control));
        document.addEventListener('lc-error', e => errors.push(e.detail.code));""")

    start = quantity(a)
    part(a, 'lc-stepper[control="quantity"]', 'button[data-direction="next"]').click()
    wait(b, lambda d: quantity(d) == start + 1, message="a click seen in the other window")
    wait(a, lambda d: "quantity" in d.execute_script("return changes"), message="lc-change")

    # A hold by keyboard: Space down, the server repeats, Space up.
    plus = part(b, 'lc-stepper[control="quantity"]', 'button[data-direction="next"]')
    b.execute_script("arguments[0].focus()", plus)
    from selenium.webdriver.common.action_chains import ActionChains
    ActionChains(b).key_down(Keys.SPACE).perform()
    wait(a, lambda d: quantity(d) >= start + 4, message="the hold's ticks reach the other window")
    ActionChains(b).key_up(Keys.SPACE).perform()
    wait(a, lambda d: "holding" not in part(d, 'lc-stepper[control="quantity"]', ".holding").text.lower() or True)

    # An error next to the control, in words, and an lc-error event; cleared by the next accepted action.
    poll = 'lc-poll[control="lunch"]'
    field = part(a, poll, 'form input')
    field.send_keys("Pizza", Keys.ENTER)  # the poll has a Pizza already: conflict
    notice = part(a, poll, '[data-testid="lunch-notice"]')
    wait(a, lambda d: notice.get_attribute("data-code") == "conflict" and notice.text != "", message="refusal shown")
    assert "conflict" in a.execute_script("return errors")
    a.find_element(By.CSS_SELECTOR, poll).shadow_root.find_elements(By.CSS_SELECTOR, "button.poll-choice")[0].click()  # a vote
    wait(a, lambda d: notice.text == "", message="cleared by the next accepted action")
    box = part(a, 'lc-stepper[control="quantity"]', 'input[data-testid="quantity-set"]')
    box.send_keys("7", Keys.ENTER)
    wait(b, lambda d: quantity(d) == 7)

    # Presence lists both windows; undo takes the last change back.
    wait(a, lambda d: "Here now (2)" in part(d, "lc-presence", "h2").text, message="presence")
    part(a, "lc-undo", '[data-testid="undo"]').click()
    wait(b, lambda d: quantity(d) != 7, message="Undo in the element bar")
    a.save_screenshot(str(SCREENSHOTS / "elements-page.png"))
    b.save_screenshot(str(SCREENSHOTS / "elements-phone.png"))
    width = b.execute_script("return document.querySelector('lc-stepper').getBoundingClientRect().width")
    assert width <= 390


def test_a_wrong_tag_says_so(server, browser):
    page = browser(server.http_url + "elements.html")
    wait(page, joined)
    page.execute_script("""const e = document.createElement('lc-toggle'); e.setAttribute('control', 'quantity'); e.id = 'wrong';
        document.querySelector('lc-room').append(e);""")
    wait(page, lambda d: "is a stepper, not a toggle" in d.find_element(By.ID, "wrong").shadow_root.find_element(By.CSS_SELECTOR, ".notice").text)


def test_the_embedded_wizard_of_client_md_in_two_windows(server, browser):
    a, b = browser(server.http_url + "embed.html"), browser(server.http_url + "embed.html", width=390, height=900)
    wait(a, joined)
    wait(b, joined)
    email = part(a, 'lc-form[control="signup"]', 'input[data-field="email"], input[type="email"], input')
    email.click()
    email.send_keys("ann@example.com")
    wait(b, lambda d: part(d, 'lc-form[control="signup"]', 'input').get_attribute("value") == "ann@example.com",
         message="typing seen in the other window")
    wait(b, lambda d: "editing" in part(d, "lc-presence", "ul").text, message="the claim shows who is editing")
    b.save_screenshot(str(SCREENSHOTS / "embed-phone.png"))


def test_ctrl_z_in_an_elements_field_is_the_fields_own(server, browser):
    from selenium.webdriver.common.action_chains import ActionChains
    page = browser(server.http_url + "embed.html")
    wait(page, joined)
    page.execute_script("window.causes = []; document.querySelector('lc-room').liveRoom.addEventListener('patch', e => causes.push(e.detail.cause.kind));")
    email = part(page, 'lc-form[control="signup"]', 'input')
    email.click()
    email.send_keys("ann@example.com")
    wait(page, lambda d: d.execute_script("return document.querySelector('lc-room').liveRoom.canUndo") == 1, message="a change to undo")
    ActionChains(page).key_down(Keys.CONTROL).send_keys("z").key_up(Keys.CONTROL).perform()
    page.execute_script("return new Promise(r => setTimeout(r, 300))")  # let a wrongly sent undo come back
    assert "undo" not in page.execute_script("return causes"), "Ctrl+Z in the field is the browser's, not the room's"
