#!/usr/bin/env python3
"""The LiveControls elements in headless Chromium (issue 37): how long a page of elements takes per change, and to draw a
big list the first time.

1. A page of 5 controls (`<lc-stepper>`, `<lc-list>`, `<lc-toggle>`, `<lc-range>`, `<lc-form>`, `<lc-presence>`) in a
   room of 20 members (19 WebSocket clients besides the page) while one of them holds the stepper: the server ticks it
   10 times a second for `--seconds`. Measured in the page (Chromium's performance timeline and clock): the script time
   each change takes (the room's `state` listeners: every element's update), the intervals between animation frames,
   and long animation frames (`long-animation-frame` entries, over 50 ms).
2. The first render of a `<lc-list>` of 1,000 items: from the element's insertion to its snapshot drawn (1,000 items
   in its shadow root, measured at the next animation frame), and the script time of that snapshot's update.

    python3 Benchmarks/elements.py [--seconds 10] [--binary .build/release/livecontrols]

Needs chromium and chromium-driver (Debian), selenium (PyPI) and a release build of `livecontrols`. Prints Markdown."""
import argparse
import json
import pathlib
import re
import statistics
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "Tests" / "browser"), str(REPO / "Tests" / "integration")]
from compare import SERVER, shares_off, start  # noqa: E402
from conftest import chromium_paths  # noqa: E402
from livecontrols_client import Client  # noqa: E402

CONFIG = {
    "templates": {
        "five": {"controls": {
            "quantity": {"kind": "stepper", "label": "Quantity", "min": 0, "max": 1000000, "value": 0,
                         "hold": {"delayMs": 100, "intervalMs": 100, "maxHoldMs": 60000}},
            "people": {"kind": "list", "label": "People", "values": [f"person {i}" for i in range(20)]},
            "live": {"kind": "toggle", "label": "Live"},
            "volume": {"kind": "range", "label": "Volume", "min": 0, "max": 100, "step": 1, "value": 50},
            "details": {"kind": "form", "label": "Details", "elements": [{"id": "you", "title": "You", "fields": [
                {"id": "name", "label": "Name", "type": "text"}, {"id": "email", "label": "Email", "type": "text"}]}]},
        }},
        "big": {"controls": {"items": {"kind": "list", "label": "Items", "maxItems": 1000,
                                       "values": [{"name": f"item {i}", "n": i} for i in range(1000)]}}},
    },
    "rooms": {"five": {"template": "five"}, "big": {"template": "big"}},
}

PAGE_SETUP = """
document.querySelector('lc-room')?.remove();
window.stateTimes = []; window.frames = []; window.longFrames = [];
new PerformanceObserver((list) => { for (const e of list.getEntries()) longFrames.push(e.duration); })
  .observe({ type: 'long-animation-frame', buffered: false });
const room = document.createElement('lc-room');
room.setAttribute('room', arguments[0]);
room.innerHTML = arguments[1];
document.body.replaceChildren(room);
const lr = room.liveRoom, emit = lr.emit.bind(lr);
lr.emit = (type, detail) => { const t = performance.now(); emit(type, detail); if (type === 'state') stateTimes.push(performance.now() - t); };
window.inserted = performance.now();
"""

FRAMES = """
window.frames = []; let last = performance.now();
window.framing = true;
const tick = (now) => { frames.push(now - last); last = now; if (window.framing) requestAnimationFrame(tick); };
requestAnimationFrame(tick);
"""


def quantiles(values):
    if not values:
        return {"p50": 0, "p99": 0, "max": 0, "n": 0}
    s = sorted(values)
    return {"p50": s[len(s) // 2], "p99": s[min(len(s) - 1, int(len(s) * 0.99))], "max": s[-1], "n": len(s)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--binary", default=str(SERVER))
    args = ap.parse_args()
    config = pathlib.Path(tempfile.mkdtemp()) / "elements-config.json"
    config.write_text(json.dumps(CONFIG))
    proc, port = start([args.binary, "--port", "0", "--log-level", "error", *shares_off(pathlib.Path(args.binary)), "--config", str(config)],
                       lambda line: (m := re.search(r"127\.0\.0\.1:(\d+)/", line)) and int(m.group(1)))
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    binary, driver_path = chromium_paths()
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1100,1400"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    members = []
    try:
        driver.get(f"http://127.0.0.1:{port}/elements.html")
        time.sleep(0.5)
        tags = ('<lc-stepper control="quantity"></lc-stepper><lc-list control="people"></lc-list><lc-toggle control="live"></lc-toggle>'
                '<lc-range control="volume"></lc-range><lc-form control="details"></lc-form><lc-presence></lc-presence>')
        driver.execute_script(PAGE_SETUP, "five", tags)
        for i in range(19):
            c = Client(f"ws://127.0.0.1:{port}/ws", validate=False)
            c.join("five", name=f"Member {i}")
            members.append(c)
        deadline = time.monotonic() + 10
        while driver.execute_script("return document.querySelector('lc-presence').shadowRoot.querySelectorAll('li').length") < 20:
            assert time.monotonic() < deadline, "20 members never showed"
            time.sleep(0.1)
        driver.execute_script("stateTimes.length = 0; longFrames.length = 0;" + FRAMES)
        holder = members[0]
        holder.intent("quantity", "press", {"direction": "next"}, room="five")
        time.sleep(args.seconds)
        holder.intent("quantity", "release", room="five")
        result = driver.execute_script("window.framing = false; return {state: stateTimes, frames: frames.slice(1), long: longFrames, "
                                       "value: document.querySelector('lc-stepper').shadowRoot.querySelector('output').textContent}")
        ticks = int(result["value"])
        state, frames = quantiles(result["state"]), quantiles(result["frames"])
        over = sum(1 for f in result["frames"] if f > 16.7 * 1.5)
        print(f"| 5 controls, 20 members, a stepper held {args.seconds:g} s ({ticks} steps) | state update p50 {state['p50']:.2f} ms, "
              f"p99 {state['p99']:.2f} ms, max {state['max']:.2f} ms ({state['n']} changes) | frame interval p50 {frames['p50']:.1f} ms, "
              f"p99 {frames['p99']:.1f} ms, max {frames['max']:.1f} ms; {over} of {frames['n']} frames over 25 ms; "
              f"{len(result['long'])} long animation frames |")

        # The first render of 1,000 items.
        times = []
        for _ in range(3):
            driver.get(f"http://127.0.0.1:{port}/elements.html")
            time.sleep(0.5)
            driver.execute_script(PAGE_SETUP, "big", '<lc-list control="items"></lc-list>')
            drawn = driver.execute_async_script("""
                const done = arguments[arguments.length - 1];
                const wait = () => { const n = document.querySelector('lc-list')?.shadowRoot?.querySelectorAll('li[data-item]').length ?? 0;
                  if (n >= 1000) done({ms: performance.now() - window.inserted, state: stateTimes.slice()}); else requestAnimationFrame(wait); };
                requestAnimationFrame(wait);""")
            times.append((drawn["ms"], max(drawn["state"] or [0])))
        total = statistics.median(t[0] for t in times)
        update = statistics.median(t[1] for t in times)
        print(f"| first render of a list of 1,000 items | from insertion to drawn (connection, join, snapshot of ~{len(json.dumps(CONFIG['templates']['big'])) // 1024} KiB) "
              f"{total:.0f} ms, median of 3 | the snapshot's update {update:.0f} ms of script |")
    finally:
        for c in members:
            c.close()
        driver.quit()
        proc.terminate()


if __name__ == "__main__":
    main()
