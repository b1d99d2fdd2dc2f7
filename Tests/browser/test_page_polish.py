"""Small things a review of the page in real windows found (issue 41): presence colours told apart, a phone header that
stays small and has an edge, and a calendar that marks today."""
import datetime
import math
import re

from selenium.webdriver.common.by import By

from livecontrols_server import REPO
from test_page import connected, wait


def lab(hex_colour: str) -> tuple[float, float, float]:
    """sRGB → CIELAB (D65)."""
    def linear(c):
        c /= 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (linear(int(hex_colour[i:i + 2], 16)) for i in (1, 3, 5))
    x, y, z = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047, 0.2126 * r + 0.7152 * g + 0.0722 * b, (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883
    f = lambda t: t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116  # noqa: E731
    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def test_member_colours_are_far_apart_and_dark_enough_on_white():
    source = (REPO / "web" / "views" / "common.js").read_text()
    palette = re.findall(r"#[0-9a-fA-F]{6}", re.search(r"const palette = \[(.*?)\]", source).group(1))
    assert len(palette) == 8
    for i, a in enumerate(palette):
        assert lab(a)[0] < 62, f"{a} is too light for a border on white"
        for b in palette[i + 1:]:
            assert math.dist(lab(a), lab(b)) >= 25, f"{a} and {b} are too alike (ΔE {math.dist(lab(a), lab(b)):.0f})"


def test_on_a_phone_the_top_stays_small_and_has_an_edge(server, browser):
    phone = browser(server.http_url + "?name=Ann", width=390, height=844)
    wait(phone, connected)
    height = phone.execute_script("return document.querySelector('.top').getBoundingClientRect().height")
    assert height <= 100, f"the sticky top takes {height} of 844 px"
    edge = phone.execute_script("return getComputedStyle(document.querySelector('.top')).borderBottomWidth")
    assert edge not in ("0px", ""), "the controls scroll under an edge, not into the background"


def test_the_calendar_marks_today(server, browser):
    page = browser(server.http_url + "?name=Ann")
    wait(page, connected)
    today = datetime.date.today()
    grid = page.find_element(By.CSS_SELECTOR, '[data-control="month"] table.calendar')
    assert grid.get_attribute("aria-label") == f"{today.year:04d}-{today.month:02d}", "the demo's pager starts at this month"
    marked = grid.find_elements(By.CSS_SELECTOR, 'td[aria-current="date"]')
    assert [td.text for td in marked] == [str(today.day)]
