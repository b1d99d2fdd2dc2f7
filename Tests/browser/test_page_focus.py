"""Only the person who acted has their focus moved, and fields show the room's value unless their user typed in them
(issue 41: Cat's Continue moved Ann's focus to Age; then Bob's 30 in Age stayed out of Ann's and Cat's Age)."""
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from test_page import DEEP_JS, connected, cta, form_input, wait


def active_id(driver):
    return driver.execute_script(DEEP_JS + "return deepActive()?.id")


def age(driver):
    return driver.find_element(By.ID, "signup-profile-age")


def test_a_part_opened_by_someone_else_does_not_take_a_bystanders_focus(server, browser):
    ann, cat, bob = (browser(server.http_url + f"?name={n}&room=focus") for n in ("Ann", "Cat", "Bob"))
    for page in (ann, cat, bob):
        wait(page, connected)
    form_input(cat, "email").send_keys("cat@example.com")
    name = form_input(ann, "name")
    name.click()
    name.send_keys("Ann Lee")
    wait(cat, lambda d: form_input(d, "name").get_attribute("value") == "Ann Lee" and cta(d).is_enabled(),
         message="Ann's name reaches Cat, whose Continue is enabled")
    cta(cat).click()
    for page in (ann, cat, bob):
        wait(page, lambda d: d.find_elements(By.ID, "signup-profile-age"), message="the next part is open")
    assert active_id(ann) != "signup-profile-age", "Ann, who only typed, is not moved into the part Cat opened"
    wait(cat, lambda d: active_id(d) == "signup-profile-age", message="Cat, who clicked Continue, is taken to it")
    field = age(bob)
    field.click()
    field.send_keys("30")
    field.send_keys(Keys.TAB)
    wait(ann, lambda d: age(d).get_attribute("value") == "30", message="Ann's Age shows the room's value")
    wait(cat, lambda d: age(d).get_attribute("value") == "30", message="Cat's Age, focused but untouched, shows it too")
    assert active_id(cat) == "signup-profile-age", "Cat is still there"
    note = cat.find_element(By.CSS_SELECTOR, '[data-testid="signup-profile-age-changed"]')
    assert note.text == "", "nothing typed there: no 'changed meanwhile'"
