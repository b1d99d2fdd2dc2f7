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
        driver = webdriver.Chrome(service=Service(driver_path), options=options)
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
