"""LiveControls elements (web/elements.js) of the kinds test_elements.py leaves out — list, wizard, pager, toggle,
timer, range and text — each through its tag in web/elements.html, in two windows: a desktop (1100 wide) and a phone
(390 wide). For each (issue 37): an action in one window seen in the other (a hold by pointer or keyboard whose ticks
reach it, for the kinds that hold), who holds or moves it shown in the other window, a refusal said next to the control
in words and cleared by the next accepted action (or, where the element never sends what would be refused, that
disabled state), the action by keyboard alone, and the phone-sized element fitting and working.

Nothing waits on a clock: conditions are awaited with `wait`; what shows only while a hold runs is recorded by a
MutationObserver in the watching window; a notice's own 6 s clearing is switched off before the action that must
clear it."""
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from conftest import SCREENSHOTS
from test_elements import joined, part
from test_page import wait

LIST = 'lc-list[control="person"]'
WIZARD = 'lc-wizard[control="onboarding"]'
PAGER = 'lc-pager[control="month"]'
TOGGLE = 'lc-toggle[control="onAir"]'
TIMER = 'lc-timer[control="timebox"]'
RANGE = 'lc-range[control="volume"]'
TEXT = 'lc-control[control="notes"]'
PHONE = 390


def windows(server, browser):
    """A desktop window and a phone-sized one of elements.html, both joined."""
    a = browser(server.http_url + "elements.html", width=1100, height=1000)
    b = browser(server.http_url + "elements.html", width=PHONE, height=844)
    wait(a, joined, message="the desktop window joined")
    wait(b, joined, message="the phone window joined")
    return a, b


def parts(driver, tag, css):
    return driver.find_element(By.CSS_SELECTOR, tag).shadow_root.find_elements(By.CSS_SELECTOR, css)


def text_of(driver, tag, css):
    return part(driver, tag, css).text


def show(driver, element, block="center"):
    driver.execute_script("arguments[0].scrollIntoView({block: arguments[1]})", element, block)
    return element


def focused(driver, element):
    """Whether `element` has the focus, inside the shadow roots it is in."""
    return driver.execute_script("""let a = document.activeElement;
        while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
        return a === arguments[0];""", element)


def tab_to(driver, element, limit=150):
    """Moves the focus to `element` with the Tab key alone, from wherever it is."""
    for _ in range(limit):
        if focused(driver, element):
            return element
        ActionChains(driver).send_keys(Keys.TAB).perform()
    raise AssertionError(f"Tab never reached {element.get_attribute('outerHTML')[:120]}")


def keys(driver, *sequence):
    """Keys to the focused element (no element given: no click, no focus moved)."""
    ActionChains(driver).send_keys(*sequence).perform()


def record(driver, tag, css, name):
    """Records, in `window[name]`, every text `css` of `tag` shows (a hold that lasts less than a poll is seen too)."""
    driver.execute_script("""const node = document.querySelector(arguments[0]).shadowRoot.querySelector(arguments[1]);
        const seen = window[arguments[2]] = [];
        new MutationObserver(() => seen.push(node.textContent)).observe(node, {childList: true, characterData: true, subtree: true});""",
                          tag, css, name)


def recorded(driver, name):
    return driver.execute_script("return window[arguments[0]]", name)


def notice(driver, tag, control):
    return part(driver, tag, f'[data-testid="{control}-notice"]')


def refusal_shown(driver, tag, control, code, words):
    """Waits for the refusal `code` said in words next to the control; then stops the notice's own clearing after a few
    seconds, so that only an action can clear it."""
    box = notice(driver, tag, control)
    wait(driver, lambda d: box.get_attribute("data-code") == code and words in box.text,
         message=f"{code} said next to {control} in words, not {box.get_attribute('data-code')}: {box.text!r}")
    driver.execute_script("clearTimeout(arguments[0].clearTimer)", box)
    return box


def snap(driver, element, name):
    """A screenshot of a moment the end of the test no longer shows (a refusal said), with `element` in view."""
    show(driver, element)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SCREENSHOTS / f"elements-{name}.png"))


def fits(driver, tag):
    """The element is no wider than the phone's screen, nor is anything in it, nor the page."""
    width, inner, page = driver.execute_script("""const host = document.querySelector(arguments[0]);
        const section = host.shadowRoot.querySelector('[data-kind]');
        return [host.getBoundingClientRect().width, section.scrollWidth, document.documentElement.scrollWidth];""", tag)
    assert width <= PHONE and inner <= PHONE and page <= PHONE, f"{tag} is {width} wide, its content {inner}, the page {page}"


def deep_value(driver, tag, css):
    return part(driver, tag, css).get_attribute("value")


# list ---------------------------------------------------------------------------------------------------------------

def selected(driver):
    return text_of(driver, LIST, '[data-testid="person-value"]')


def test_list_hold_by_pointer_and_keyboard_refusal_and_phone(server, browser):
    a, b = windows(server, browser)
    prev_a, next_a = (part(a, LIST, f'button[data-direction="{d}"]') for d in ("prev", "next"))
    prev_b, next_b = (part(b, LIST, f'button[data-direction="{d}"]') for d in ("prev", "next"))
    assert selected(a) == selected(b) == "Joe: 23"
    # At the first item a step back would be refused (at_bound): ‹ is disabled instead, in both windows.
    assert not prev_a.is_enabled() and not prev_b.is_enabled()

    # A hold by pointer on the desktop: the press steps, the server's ticks step on to the last item, seen on the phone,
    # which shows who holds it while the hold runs; at the last item the hold ends (bound) and › is disabled.
    record(b, LIST, ".holding", "listHolding")
    ActionChains(a).click_and_hold(show(a, next_a)).perform()
    wait(b, lambda d: selected(d) == "James: —", message="the hold's ticks reach the phone")
    ActionChains(a).release().perform()
    wait(b, lambda d: text_of(d, LIST, ".holding") == "", message="the hold ends")
    assert "Guest is holding ›" in recorded(b, "listHolding"), recorded(b, "listHolding")
    wait(a, lambda d: not next_a.is_enabled(), message="at the last item › is disabled (a step would be at_bound)")
    assert not next_b.is_enabled()

    # A hold by keyboard on the phone: Tab to ‹, Space held down, released at the first item.
    record(a, LIST, ".holding", "listHolding")
    tab_to(b, prev_b)
    ActionChains(b).key_down(Keys.SPACE).perform()
    wait(a, lambda d: selected(d) == "Joe: 23", message="the phone's keyboard hold reaches the desktop")
    ActionChains(b).key_up(Keys.SPACE).perform()
    wait(a, lambda d: text_of(d, LIST, ".holding") == "")
    assert "Guest is holding ‹" in recorded(a, "listHolding"), recorded(a, "listHolding")
    # The keys step once each again once the hold is over: Tab to ›, Enter; Shift+Tab back to ‹, Space.
    tab_to(b, next_b)
    keys(b, Keys.ENTER)
    wait(a, lambda d: selected(d) == "Tim: 20", message="Enter on › steps once")
    tab_to(b, prev_b)  # (Tab goes round the page: Shift+Tab would do the same)
    keys(b, Keys.SPACE)
    wait(a, lambda d: selected(d) == "Joe: 23", message="Space on ‹, which a hold left at its bound, steps again")

    # The selected item cannot be removed (conflict under selectionPolicy fail): its × is disabled and says why.
    remove = part(a, LIST, 'li[data-item="i1"] button[data-action="remove"]')
    assert not remove.is_enabled() and remove.get_attribute("aria-label") == "Select another item to remove Joe: 23"
    # Every refusal of the server this element could get is kept from being sent that way; the one left to a user is an
    # entry too large to send (pasted), which the client refuses before sending (too_large): said next to the list.
    box = part(a, LIST, '[data-testid="person-new"]')
    a.execute_script("arguments[0].value = arguments[1]", box, "x" * 70_000)
    box.send_keys(Keys.ENTER)
    shown = refusal_shown(a, LIST, "person", "too_large", "too large to send")
    snap(a, shown, "list-refused")
    part(a, LIST, 'li[data-item="i2"] button[data-action="select"]').click()  # an accepted action clears it
    wait(a, lambda d: shown.text == "", message="the next accepted action clears the refusal")
    wait(b, lambda d: selected(d) == "Tim: 20")
    assert len(parts(b, LIST, "li.item")) == 4, "nothing was added"

    # The phone: the list fits, and a tap selects.
    fits(b, LIST)
    part(b, LIST, 'li[data-item="i4"] button[data-action="select"]').click()
    wait(a, lambda d: selected(d) == "James: —", message="a tap on the phone selects")
    show(b, part(b, LIST, "section"), "start")
    show(a, part(a, LIST, "section"), "start")


# wizard -------------------------------------------------------------------------------------------------------------

def phase(driver):
    return text_of(driver, WIZARD, '[data-testid="onboarding-phase"]')


def wizard_button(driver, text):
    return next(b for b in parts(driver, WIZARD, ".actions button") if b.get_attribute("data-text") == text or b.text == text)


def test_wizard_two_windows_refusal_keyboard_and_phone(server, browser):
    a, b = windows(server, browser)
    assert "step 1 of 4: Welcome" in phase(a)
    # Back from the first step is not refused: it leaves the steps for everyone (exit), so the element says "Leave" and
    # asks first.
    assert wizard_button(a, "Leave").is_enabled()
    show(a, wizard_button(a, "Next")).click()
    wait(b, lambda d: "step 2 of 4: Your account" in phase(d), message="Next on the desktop seen on the phone")
    # Next from "Your account" would be refused (guard_failed) until Sign up's Account is filled in: the element disables
    # Next in both windows and says why.
    for d in (a, b):
        wait(d, lambda d: not wizard_button(d, "Next").is_enabled(), message="Next disabled by the guard")
        assert "Fill in “Account” in Sign up to continue." in text_of(d, WIZARD, '[data-testid="onboarding-hint"]')

    # Keyboard only, on the phone: Tab to Back, Enter (Back from a later step acts at once).
    tab_to(b, wizard_button(b, "Back"))
    keys(b, Keys.ENTER)
    wait(a, lambda d: "step 1 of 4: Welcome" in phase(d), message="the phone's Enter on Back seen on the desktop")

    # A refusal of the server: a wizard holds at most 200 steps (out_of_range). The room gets 196 more steps from the
    # desktop's client (paced within the rate limit), then the phone adds one in its box, by keys.
    a.execute_script("""const room = document.querySelector('lc-room').liveRoom;
        return (async () => {
          for (let i = 0; i < 196;) {
            try { await room.intent('onboarding', 'append', {step: {id: `more-${i}`, title: `More ${i}`}}); i++; }
            catch (e) { if (e.code !== 'rate_limited') throw e; await new Promise((r) => setTimeout(r, 100)); }
            if (i > 60) await new Promise((r) => setTimeout(r, 25));
          }
        })();""")
    wait(b, lambda d: "of 200" in phase(d), message="200 steps")
    new = part(b, WIZARD, '[data-testid="onboarding-new"]')
    tab_to(b, new)
    keys(b, "One too many", Keys.ENTER)
    shown = refusal_shown(b, WIZARD, "onboarding", "out_of_range", "outside what this allows")
    snap(b, shown, "wizard-refused-phone")
    assert deep_value(b, WIZARD, '[data-testid="onboarding-new"]') == "One too many", "what was typed stays to try again"
    # Start over (it asks first) is accepted: it drops the added steps, and clears the refusal.
    tab_to(b, wizard_button(b, "Start over"))
    keys(b, Keys.ENTER)
    assert "Start over for everyone?" in wizard_button(b, "Start over").text
    keys(b, Keys.ENTER)
    wait(b, lambda d: shown.text == "", message="the accepted Start over clears the refusal")
    wait(a, lambda d: "Not started · step 1 of 4: Welcome" in phase(d), message="started over for both")

    # The phone: it fits and its buttons work by touch.
    fits(b, WIZARD)
    show(b, wizard_button(b, "Next")).click()
    wait(a, lambda d: "step 2 of 4" in phase(d), message="a tap on the phone's Next")
    show(a, part(a, WIZARD, "section"), "start")
    show(b, part(b, WIZARD, "section"), "start")


# pager --------------------------------------------------------------------------------------------------------------

def month(driver):
    """The pager's position as a number of months."""
    year, m = part(driver, PAGER, '[data-testid="month-value"]').get_attribute("data-position").split("-")
    return int(year) * 12 + int(m) - 1


def test_pager_hold_by_pointer_and_keyboard_refusal_and_phone(server, browser):
    a, b = windows(server, browser)
    start = month(a)
    assert month(b) == start
    next_a = part(a, PAGER, 'button[data-direction="next"]')
    prev_b = part(b, PAGER, 'button[data-direction="prev"]')

    # A hold by pointer on the desktop: the phone sees the months go by (the press and the server's ticks), and who holds.
    record(b, PAGER, ".holding", "pagerHolding")
    ActionChains(a).click_and_hold(show(a, next_a)).perform()
    wait(b, lambda d: month(d) >= start + 3, message="the hold's ticks reach the phone")
    ActionChains(a).release().perform()
    wait(b, lambda d: text_of(d, PAGER, ".holding") == "", message="the release ends the hold")
    assert "Guest is holding ›" in recorded(b, "pagerHolding"), recorded(b, "pagerHolding")
    stopped = month(b)
    wait(a, lambda d: month(d) == stopped)

    # A hold by keyboard on the phone: Tab to ‹, Enter held down, let go.
    record(a, PAGER, ".holding", "pagerHolding")
    tab_to(b, prev_b)
    ActionChains(b).key_down(Keys.ENTER).perform()
    wait(a, lambda d: month(d) <= stopped - 3, message="the phone's keyboard hold reaches the desktop")
    ActionChains(b).key_up(Keys.ENTER).perform()
    wait(a, lambda d: text_of(d, PAGER, ".holding") == "", message="the key up ends the hold")
    assert "Guest is holding ‹" in recorded(a, "pagerHolding"), recorded(a, "pagerHolding")
    back = month(a)
    wait(b, lambda d: month(d) == back)

    # A refusal of the server: a month past year 9999 (the month box takes years up to 275760), typed in the Go to box
    # by keys; the server refuses it (invalid_args), said next to the pager.
    goto = part(a, PAGER, '[data-testid="month-goto"]')
    tab_to(a, goto)
    keys(a, "03", Keys.TAB, "12345")
    assert deep_value(a, PAGER, '[data-testid="month-goto"]') == "12345-03"
    keys(a, Keys.ENTER)
    shown = refusal_shown(a, PAGER, "month", "invalid_args", "That value does not fit")
    snap(a, shown, "pager-refused")
    assert month(b) == back, "nothing moved"
    # The next accepted action, a step by ›, clears it.
    show(a, next_a).click()
    wait(b, lambda d: month(d) == back + 1, message="one step")
    wait(a, lambda d: shown.text == "", message="the accepted step clears the refusal")

    # The phone: the calendar and the nearby months fit, and a tap on a nearby month goes there.
    fits(b, PAGER)
    nearby = parts(b, PAGER, ".window button")
    assert len(nearby) == 5
    show(b, nearby[0]).click()
    wait(a, lambda d: month(d) == back - 1, message="a tap on a nearby month on the phone")
    show(a, part(a, PAGER, "section"), "start")
    show(b, part(b, PAGER, "section"), "start")


# toggle -------------------------------------------------------------------------------------------------------------

def on_air(driver):
    return text_of(driver, TOGGLE, '[data-testid="onAir-state"]')


def test_toggle_confirming_hold_keyboard_and_phone(server, browser):
    a, b = windows(server, browser)
    assert on_air(a) == on_air(b) == "Off"
    hold_a, hold_b = part(a, TOGGLE, '[data-testid="onAir-hold"]'), part(b, TOGGLE, '[data-testid="onAir-hold"]')
    # onAir switches only by a held press (confirmHoldMs 800): a click on a switch would be refused (hold_required), so
    # the element shows no such switch, and a press is never refused. No refusal can reach the page: tested instead, the
    # one-click switch is hidden and a hold let go early switches nothing and says nothing wrong.
    for d in (a, b):
        assert not part(d, TOGGLE, '[data-testid="onAir-switch"]').is_displayed()
    assert "Hold to switch on" in hold_a.text

    # Held by pointer on the desktop until the server switches it: the phone sees who is switching it, then On.
    record(b, TOGGLE, '[data-testid="onAir-holding"]', "toggleHolding")
    ActionChains(a).click_and_hold(show(a, hold_a)).perform()
    wait(b, lambda d: on_air(d) == "On", message="the server switched it after the hold, seen on the phone")
    ActionChains(a).release().perform()
    assert "Guest is switching it on" in recorded(b, "toggleHolding"), recorded(b, "toggleHolding")
    wait(b, lambda d: text_of(d, TOGGLE, '[data-testid="onAir-holding"]') == "")
    wait(a, lambda d: "Hold to switch off" in part(d, TOGGLE, '[data-testid="onAir-hold"]').text)

    # Let go early (a click): the phone sees the hold start and end, and nothing switches.
    record(b, TOGGLE, '[data-testid="onAir-holding"]', "toggleHolding")
    ActionChains(a).click(show(a, hold_a)).perform()
    wait(b, lambda d: "Guest is switching it off" in recorded(d, "toggleHolding")
         and text_of(d, TOGGLE, '[data-testid="onAir-holding"]') == "", message="the early release ends the hold")
    assert on_air(a) == on_air(b) == "On"
    assert notice(a, TOGGLE, "onAir").text == "", "letting go early is no error"

    # Keyboard only, on the phone: Tab to the hold button, Space held down until it switches, let go.
    record(a, TOGGLE, '[data-testid="onAir-holding"]', "toggleHolding")
    tab_to(b, hold_b)
    ActionChains(b).key_down(Keys.SPACE).perform()
    wait(a, lambda d: on_air(d) == "Off", message="the phone's keyboard hold switches it off")
    ActionChains(b).key_up(Keys.SPACE).perform()
    assert "Guest is switching it off" in recorded(a, "toggleHolding"), recorded(a, "toggleHolding")
    wait(b, lambda d: on_air(d) == "Off" and "Hold to switch on" in hold_b.text)

    # The phone: it fits, and a touch hold (pointer) works there too.
    fits(b, TOGGLE)
    ActionChains(b).click_and_hold(show(b, hold_b)).perform()
    wait(a, lambda d: on_air(d) == "On", message="a hold on the phone")
    ActionChains(b).release().perform()
    show(a, part(a, TOGGLE, "section"))
    show(b, part(b, TOGGLE, "section"))


# timer --------------------------------------------------------------------------------------------------------------

def clock(driver):
    return text_of(driver, TIMER, '[data-testid="timebox-time"]')


def timer_status(driver):
    return text_of(driver, TIMER, '[data-testid="timebox-status"]')


def seconds(text):
    return sum(int(p) * 60 ** i for i, p in enumerate(reversed(text.split(":"))))


def test_timer_two_windows_refusal_keyboard_and_phone(server, browser):
    a, b = windows(server, browser)
    assert clock(a) == clock(b) == "5:00"
    # A timer has no hold and claims nothing: who started it is not shown (each window shows the room's timer).
    show(a, part(a, TIMER, '[data-testid="timebox-start"]')).click()
    wait(b, lambda d: timer_status(d) == "Running" and seconds(clock(d)) < 300, message="the phone counts down too")

    # Keyboard only, on the phone: Tab to Pause, Enter; Tab to Resume, Space.
    tab_to(b, part(b, TIMER, '[data-testid="timebox-pause"]'))
    keys(b, Keys.ENTER)
    wait(a, lambda d: timer_status(d) == "Paused", message="paused from the phone's keyboard")
    wait(a, lambda d: clock(d) == clock(b), message="both show the room's time left")
    tab_to(b, part(b, TIMER, '[data-testid="timebox-resume"]'))
    keys(b, Keys.SPACE)
    wait(a, lambda d: timer_status(d) == "Running", message="resumed from the phone's keyboard")

    # A refusal of the server: a countdown holds at most a week (out_of_range). The desktop's client pauses it and adds
    # time up to 30 s short of a week; then +1 min, clicked, is refused and said next to the timer.
    a.execute_script("""const room = document.querySelector('lc-room').liveRoom;
        return room.intent('timebox', 'pause').then(() =>
          room.intent('timebox', 'add', {ms: 604800000 - 30000 - room.state.controls.timebox.remainingMs}));""")
    wait(b, lambda d: clock(d) == "167:59:30", message="a week less 30 s, on the phone too")
    show(a, part(a, TIMER, '[data-testid="timebox-add"]')).click()
    shown = refusal_shown(a, TIMER, "timebox", "out_of_range", "outside what this allows")
    snap(a, shown, "timer-refused")
    assert clock(b) == "167:59:30", "nothing changed"
    show(a, part(a, TIMER, '[data-testid="timebox-reset"]')).click()  # accepted: it clears the refusal
    wait(a, lambda d: shown.text == "", message="the accepted Reset clears the refusal")
    wait(b, lambda d: clock(d) == "5:00" and timer_status(d) == "Ready: 5:00", message="reset for both")

    # The phone: it fits and its buttons work by touch.
    fits(b, TIMER)
    show(b, part(b, TIMER, '[data-testid="timebox-add"]')).click()
    wait(a, lambda d: clock(d) == "6:00", message="+1 min on the phone")
    show(a, part(a, TIMER, "section"))
    show(b, part(b, TIMER, "section"))


# range --------------------------------------------------------------------------------------------------------------

def volume(driver):
    return float(text_of(driver, RANGE, '[data-testid="volume-value"]'))


def test_range_drag_claim_keyboard_and_phone(server, browser):
    a, b = windows(server, browser)
    assert volume(a) == volume(b) == 0.5
    slider_a, slider_b = part(a, RANGE, '[data-testid="volume-slider"]'), part(b, RANGE, '[data-testid="volume-slider"]')

    # A drag on the desktop: the phone's fader follows and says who is moving it; at the release both end together.
    record(b, RANGE, '[data-testid="volume-holding"]', "rangeHolding")
    width = show(a, slider_a).size["width"]
    drag = ActionChains(a).click_and_hold(slider_a)
    for _ in range(8):  # towards the left end, a frame at a time
        drag = drag.move_by_offset(-width // 20, 0).pause(0.02)
    drag.perform()
    wait(b, lambda d: volume(d) < 0.3, message="the phone's fader follows the drag")
    ActionChains(a).release().perform()
    wait(b, lambda d: text_of(d, RANGE, '[data-testid="volume-holding"]') == "", message="the drag ends")
    assert "Guest is moving it" in recorded(b, "rangeHolding"), recorded(b, "rangeHolding")
    wait(b, lambda d: volume(d) == volume(a), message="both end on the same value")
    assert float(slider_b.get_attribute("value")) == volume(a)

    # Keyboard only, on the phone: Tab to the fader, End, then ← one step.
    tab_to(b, slider_b)
    keys(b, Keys.END)
    wait(a, lambda d: volume(d) == 1, message="End on the phone's fader")
    keys(b, Keys.ARROW_LEFT)
    wait(a, lambda d: volume(d) == 0.95, message="← on the phone's fader, one step of 0.05")

    # A set outside 0…1 would be refused (out_of_range), but the fader is bounded by the control's own min, max and
    # step, so no refusal can be sent from it: at the top, → moves nothing, sends nothing, and says nothing.
    for d, s in ((a, slider_a), (b, slider_b)):
        assert (s.get_attribute("min"), s.get_attribute("max"), s.get_attribute("step")) == ("0", "1", "0.05")
    keys(b, Keys.END)
    wait(a, lambda d: volume(d) == 1)
    b.execute_script("""const room = document.querySelector('lc-room').liveRoom, intent = room.intent.bind(room);
        window.sets = []; room.intent = (control, name, args) => { if (name === 'set') sets.push(args.value); return intent(control, name, args); };""")
    keys(b, Keys.ARROW_RIGHT, Keys.ARROW_RIGHT)
    keys(b, Keys.ARROW_LEFT)  # and a step that moves, to know the keys before it were handled
    wait(a, lambda d: volume(d) == 0.95)
    assert b.execute_script("return sets") == [0.95], "→ at the top sent nothing"
    assert notice(b, RANGE, "volume").text == ""

    # The phone: it fits, and a drag by touch there moves the desktop's fader.
    fits(b, RANGE)
    ActionChains(b).click_and_hold(show(b, slider_b)).move_by_offset(-slider_b.size["width"] // 3, 0).release().perform()
    wait(a, lambda d: volume(d) < 0.8, message="a drag on the phone")
    show(a, part(a, RANGE, "section"))
    show(b, part(b, RANGE, "section"))


# text ---------------------------------------------------------------------------------------------------------------

def note(driver):
    return deep_value(driver, TEXT, '[data-testid="notes-text"]')


def count(driver):
    return text_of(driver, TEXT, '[data-testid="notes-count"]')


def test_text_typing_in_both_windows_limit_keyboard_and_phone(server, browser):
    a, b = windows(server, browser)
    area_a, area_b = part(a, TEXT, '[data-testid="notes-text"]'), part(b, TEXT, '[data-testid="notes-text"]')
    assert part(a, TEXT, "section").get_attribute("data-kind") == "text", "<lc-control> chose the text view"
    # Typed on the desktop, seen on the phone.
    show(a, area_a).click()
    area_a.send_keys("Agenda")
    wait(b, lambda d: note(d) == "Agenda", message="the phone sees the desktop's typing")
    # Keyboard only, on the phone: Tab into the note, Ctrl+End, type; the desktop sees it.
    # (A shared note takes no claim: several people type at once and nobody is kept out, so there is no "who is
    # editing" to show; what shows is that both texts are kept.)
    tab_to(b, area_b)
    ActionChains(b).key_down(Keys.CONTROL).send_keys(Keys.END).key_up(Keys.CONTROL).send_keys(Keys.ENTER, "- budget").perform()
    # (Keys to the focused box: an element's send_keys in a shadow root moves the cursor to the end first.)
    ActionChains(a).key_down(Keys.CONTROL).send_keys(Keys.HOME).key_up(Keys.CONTROL).send_keys("Monday: ").perform()
    for d in (a, b):
        wait(d, lambda d: note(d) == "Monday: Agenda\n- budget", message="both windows' text, in both")
    wait(b, lambda d: count(d) == "23 / 2,000 characters")

    # A text past maxLength (2,000) would be refused (too_large), but the box takes no more than that: a paste of 1,998
    # characters, then three keys, and only two land — no refusal, nothing lost in either window.
    a.execute_script("""const area = arguments[0]; area.focus(); area.select();
        area.setRangeText('x'.repeat(1998), 0, area.value.length, 'end'); area.dispatchEvent(new Event('input'));""", area_a)
    area_a.send_keys("abc")
    for d in (a, b):
        wait(d, lambda d: note(d) == "x" * 1998 + "ab" and count(d) == "2,000 / 2,000 characters", message="at the limit")
    assert notice(a, TEXT, "notes").text == ""
    # Emptied by keys on the phone: Ctrl+A, Delete.
    ActionChains(b).key_down(Keys.CONTROL).send_keys("a").key_up(Keys.CONTROL).send_keys(Keys.DELETE).perform()
    wait(a, lambda d: note(d) == "" and count(d) == "0 / 2,000 characters", message="emptied from the phone")

    # The phone: it fits, and typing there works (done above by keyboard; once more by a tap and keys).
    fits(b, TEXT)
    show(b, area_b).click()
    area_b.send_keys("Phone note")
    wait(a, lambda d: note(d) == "Phone note")
    show(a, part(a, TEXT, "section"))
    show(b, part(b, TEXT, "section"))
