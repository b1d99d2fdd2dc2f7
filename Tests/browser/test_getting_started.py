"""docs/GETTING-STARTED.md, run as written: every `sh` block in order, in an empty folder, with the built binaries on
PATH. The first `text` block after a `sh` block (before the next one) is output that block must print (its lines, in
order). After the block that starts the site, two headless Chromium windows open the page and type into its form, as
the guide tells its reader to."""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import signal
import subprocess

import pytest
from selenium.webdriver.common.by import By

from livecontrols_server import BINARY, CLIENT_BINARY, REPO
from test_page import wait

GUIDE = REPO / "docs" / "GETTING-STARTED.md"


def steps() -> list[tuple[str, str | None]]:
    """The guide's `sh` blocks, each with the `text` block of output that follows it (if any)."""
    found: list[list] = []
    for lang, body in re.findall(r"```(\w+)\n(.*?)```", GUIDE.read_text(), re.S):
        if lang == "sh":
            found.append([body, None])
        elif lang == "text" and found and found[-1][1] is None:
            found[-1][1] = body
    return [(body, expected) for body, expected in found]


def printed_in_order(expected: str, output: str) -> bool:
    lines = iter(output.splitlines())
    return all(any(line == want for line in lines) for want in expected.strip().splitlines())


def check_the_page(browser):
    ann, bob = browser("http://127.0.0.1:8000/?name=Ann"), browser("http://127.0.0.1:8000/?name=Bob")
    for window in (ann, bob):
        wait(window, lambda d: d.find_element(By.ID, "survey-you-name").is_enabled(), message="the page shows the room's form")
    ann.find_element(By.ID, "survey-you-name").send_keys("Ann Lee")
    wait(bob, lambda d: d.find_element(By.ID, "survey-you-name").get_attribute("value") == "Ann Lee", message="Bob sees Ann type")
    wait(bob, lambda d: d.find_element(By.CSS_SELECTOR, '[data-testid="survey-you-name-editor"]').text == "Ann is editing")


def test_the_getting_started_guide_runs_as_written(browser, tmp_path):
    for tool in ("curl", "redis-server", "redis-cli"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not installed")
    binaries = pathlib.Path(BINARY).parent
    if pathlib.Path(CLIENT_BINARY).parent != binaries or not pathlib.Path(CLIENT_BINARY).exists():
        pytest.skip("livecontrols-client is not built beside livecontrols")
    env = dict(os.environ, PATH=f"{binaries}:{os.environ['PATH']}")
    groups = []
    try:
        for number, (block, expected) in enumerate(steps(), 1):
            out = tmp_path / f"step-{number}.out"
            with out.open("w") as sink:
                # A session of its own: what the block leaves running in the background is stopped at the end.
                proc = subprocess.Popen(["bash", "-euo", "pipefail", "-c", block], cwd=tmp_path, env=env, stdout=sink,
                                        stderr=subprocess.STDOUT, start_new_session=True)
                groups.append(proc.pid)
                code = proc.wait(timeout=120)
            output = out.read_text()
            assert code == 0, f"step {number} exited {code}:\n{block}\n--- its output:\n{output}"
            if expected:
                assert printed_in_order(expected, output), f"step {number} printed:\n{output}\nnot:\n{expected}"
            if "http.server 8000" in block:
                check_the_page(browser)
    finally:
        for group in groups:
            try:
                os.killpg(group, signal.SIGTERM)
            except ProcessLookupError:
                pass
        subprocess.run(["redis-cli", "-p", "6391", "shutdown", "nosave"], capture_output=True)
