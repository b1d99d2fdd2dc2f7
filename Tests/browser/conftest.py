"""Browser fixtures: the real server on a free port and headless Chromium windows (selenium)."""
from __future__ import annotations

import pathlib
import shutil
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "integration"))
from livecontrols_server import REPO, server, start_server  # noqa: E402,F401
from redis_server import CLUSTER_LEASE_MS, cluster, redis_server  # noqa: E402,F401

SCREENSHOTS = REPO / "test-output" / "screenshots"


def chromium_paths():
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return browser, driver


# The page is made of LiveControls elements, each drawing in its own shadow root: a lookup by CSS selector or id that
# finds nothing in the light DOM looks inside the open shadow roots too, as a person sees the page. A selector matches
# within one tree (the light DOM or one shadow root), never across a shadow boundary.
DEEP_QUERY = """
const [scope, selector, all] = arguments;
const found = [];
const visit = (root) => {
  for (const e of root.querySelectorAll(selector)) { found.push(e); if (!all) return true; }
  for (const e of root.querySelectorAll('*')) if (e.shadowRoot && visit(e.shadowRoot) && !all) return true;
  return false;
};
const start = scope ?? document;
visit(start.shadowRoot && scope ? start.shadowRoot : start);
if (scope && scope.shadowRoot && (all || !found.length)) visit(scope);
return all ? found : (found[0] ?? null);
"""


def deep_selector(by, value):
    """The CSS selector for a lookup that can look into shadow roots (XPath cannot)."""
    from selenium.webdriver.common.by import By
    escape = lambda name: "".join(c if c.isalnum() or c in "-_" else "\\" + c for c in name)  # noqa: E731
    if by == By.CSS_SELECTOR:
        return value
    if by == By.ID:
        return "#" + escape(value)
    if by == By.CLASS_NAME:
        return "." + escape(value)
    if by == By.TAG_NAME:
        return value
    return None


def deep_classes():
    from selenium.common.exceptions import NoSuchElementException
    from selenium.webdriver.chrome.webdriver import WebDriver
    from selenium.webdriver.remote.webelement import WebElement

    class DeepElement(WebElement):
        def send_keys(self, *value):
            # Typing into the element that has the focus goes to it as a person's keys would: chromedriver's own
            # send_keys compares the element with document.activeElement — the shadow host for an element inside a
            # shadow root — and so would blur and refocus a field that already has the focus.
            focused = self.parent.execute_script("""let a = document.activeElement;
                while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
                return a === arguments[0] && a.getRootNode() !== document""", self)
            if not focused:
                return super().send_keys(*value)
            from selenium.webdriver.common.action_chains import ActionChains
            ActionChains(self.parent).send_keys(*value).perform()

        def find_element(self, by="id", value=None):
            try:
                return super().find_element(by, value)
            except NoSuchElementException:
                selector = deep_selector(by, value)
                found = selector and self.parent.execute_script(DEEP_QUERY, self, selector, False)
                if not found:
                    raise
                return found

        def find_elements(self, by="id", value=None):
            selector = deep_selector(by, value)
            # Every match, in the light DOM and in the shadow roots (in document order, trees depth first).
            return self.parent.execute_script(DEEP_QUERY, self, selector, True) if selector else super().find_elements(by, value)

    class DeepChrome(WebDriver):
        _web_element_cls = DeepElement

        def find_element(self, by="id", value=None):
            try:
                return super().find_element(by, value)
            except NoSuchElementException:
                selector = deep_selector(by, value)
                found = selector and self.execute_script(DEEP_QUERY, None, selector, False)
                if not found:
                    raise
                return found

        def find_elements(self, by="id", value=None):
            selector = deep_selector(by, value)
            return self.execute_script(DEEP_QUERY, None, selector, True) if selector else super().find_elements(by, value)

    return DeepChrome


@pytest.fixture
def browser(request):
    """Factory of independent headless Chromium windows; each test's windows are screenshotted at the end."""
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    binary, driver_path = chromium_paths()
    if not binary or not driver_path:
        pytest.skip("chromium and chromium-driver are not installed")
    windows = []

    def open_window(url: str, width: int = 1100, height: int = 1400):
        options = webdriver.ChromeOptions()
        options.binary_location = binary
        for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", f"--window-size={width},{height}"):
            options.add_argument(arg)
        if width < 600:  # desktop windows have a minimum width: emulate a phone's viewport instead
            options.add_experimental_option("mobileEmulation", {"deviceMetrics": {"width": width, "height": height, "pixelRatio": 2}})
        driver = deep_classes()(service=Service(driver_path), options=options)
        driver.get(url)
        windows.append(driver)
        return driver

    yield open_window
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for i, driver in enumerate(windows):
        try:
            driver.save_screenshot(str(SCREENSHOTS / f"{request.node.name}-{i + 1}.png"))
        finally:
            driver.quit()
