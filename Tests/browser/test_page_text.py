"""The shared note in headless Chromium: two windows typing into it at once both keep their text; web/ot.js's
transform converges on thousands of random edits; two pages' editors making random edits at once end with the
server's text."""
import threading

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from test_page import connected, wait


def area(driver):
    return driver.find_element(By.CSS_SELECTOR, '[data-testid="notes-text"]')


def test_two_windows_typing_at_once_both_keep_their_text(server, browser):
    a, b = browser(server.http_url + "?name=Ann"), browser(server.http_url + "?name=Bob")
    wait(a, connected)
    wait(b, connected)
    for d in (a, b):
        d.execute_script("arguments[0].scrollIntoView({block: 'center'})", area(d))
    area(a).send_keys("middle")
    wait(b, lambda d: area(d).get_attribute("value") == "middle", message="Bob sees Ann's text")
    area(a).send_keys(Keys.CONTROL, Keys.HOME)  # Ann types at the start, Bob at the end, at the same time
    area(b).click()
    area(b).send_keys(Keys.CONTROL, Keys.END)

    def type_into(driver, text):
        for ch in text:
            area(driver).send_keys(ch)

    threads = [threading.Thread(target=type_into, args=(a, "Start 😀 ")), threading.Thread(target=type_into, args=(b, " end."))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expected = "Start 😀 middle end."
    for d in (a, b):
        wait(d, lambda d: area(d).get_attribute("value") == expected, message="both texts, in both windows")
    assert "19 / 2,000 characters" in a.find_element(By.CSS_SELECTOR, '[data-testid="notes-count"]').text, "😀 counts as one"
    assert a.execute_script("return arguments[0].selectionStart", area(a)) == len("Start 😀 ".encode("utf-16-le")) // 2, \
        "Ann's cursor stayed where she typed while Bob's text came in"
    fresh = server.client()
    assert fresh.join()["state"]["controls"]["notes"]["lines"] == [expected]


TRANSFORM_CHECK = """
const done = arguments[arguments.length - 1];
import("/ot.js").then(({ TextOperation }) => {
  let seed = 35;
  const rand = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  const alphabet = Array.from("ab \\nçé😀中");
  const randomText = (n) => Array.from({ length: n }, () => alphabet[rand(alphabet.length)]);
  const randomOp = (length) => {
    const op = new TextOperation();
    let left = length;
    while (left > 0 || rand(3) === 0) {
      const kind = rand(3);
      if (kind === 0 && left > 0) { const n = 1 + rand(left); op.retain(n); left -= n; }
      else if (kind === 1 && left > 0) { const n = 1 + rand(left); op.delete(n); left -= n; }
      else op.insert(randomText(1 + rand(3)).join(""));
      if (left === 0 && rand(2) === 0) break;
    }
    return op;
  };
  let failures = 0;
  for (let i = 0; i < 5000; i++) {
    const text = randomText(rand(20));
    const a = randomOp(text.length), b = randomOp(text.length);
    const [a2, b2] = TextOperation.transform(a, b);
    if (b2.apply(a.apply(text)).join("") !== a2.apply(b.apply(text)).join("")) failures++;
    let viaSplices = text.slice();
    for (const s of a.splices()) viaSplices.splice(s.at, s.delete, ...Array.from(s.insert));
    if (viaSplices.join("") !== a.apply(text).join("")) failures++;
  }
  done(failures);
});
"""


def test_the_pages_transform_converges_on_random_edits(server, browser):
    a = browser(server.http_url)
    wait(a, connected)
    assert a.execute_async_script(TRANSFORM_CHECK) == 0


RANDOM_EDITS = """
const [url, edits, seedStart] = arguments;
const done = arguments[arguments.length - 1];
Promise.all([import("/livecontrols.js"), import("/ot.js")]).then(([{ LiveRoom }, { SharedTextEditor }]) => {
  const room = new LiveRoom({ url, room: "demo" });
  const editor = new SharedTextEditor(room, "notes");
  let seed = seedStart, made = 0;
  const rand = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  const step = () => {
    if (room.status !== "open" || editor.server === null) return setTimeout(step, 5);
    if (made < edits) {
      const text = Array.from(editor.text);
      const at = rand(text.length + 1), del = rand(3) === 0 ? Math.min(rand(3), text.length - at) : 0;
      text.splice(at, del, ...Array.from(["x", "ü", "😀", "\\n", ""][rand(5)]));
      editor.update(text.join(""));
      made++;
      return setTimeout(step, rand(4));
    }
    if (editor.pending.length > 0 || editor.sent) return setTimeout(step, 5);
    done({ session: room.session, version: room.version });
  };
  window.__editor = editor;
  window.__room = room;
  step();
});
"""


def test_two_pages_editing_at_random_at_once_end_with_the_servers_text(server, browser):
    a, b = browser(server.http_url), browser(server.http_url)
    wait(a, connected)
    wait(b, connected)
    ws = server.ws_url
    results = {}

    def run(name, driver, seed):
        driver.set_script_timeout(60)
        results[name] = driver.execute_async_script(RANDOM_EDITS, ws, 150, seed)

    threads = [threading.Thread(target=run, args=("a", a, 7)), threading.Thread(target=run, args=("b", b, 11))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    fresh = server.client()
    final = "\n".join(fresh.join()["state"]["controls"]["notes"]["lines"])
    for d in (a, b):
        wait(d, lambda d: d.execute_script("return window.__editor.text") == final and d.execute_script("return window.__editor.pending.length") == 0,
             message="each page's editor ends with the server's text")
    assert len(final) > 0


REFUSED_THEN_TYPED = """
const [url] = arguments;
const done = arguments[arguments.length - 1];
Promise.all([import("/livecontrols.js"), import("/ot.js")]).then(([{ LiveRoom }, { SharedTextEditor }]) => {
  const room = new LiveRoom({ url, room: "demo" });
  const editor = new SharedTextEditor(room, "notes");
  const errors = [];
  editor.addEventListener("error", (e) => errors.push(e.detail.code));
  const wait = (check, then) => (check() ? then() : setTimeout(() => wait(check, then), 5));
  wait(() => room.status === "open" && editor.server !== null, () => {
    editor.update("x".repeat(2001));  // past maxLength: refused, given up
    wait(() => errors.length > 0 && !editor.sent, () => {
      editor.update(editor.text + "ok");  // the editor goes on
      wait(() => !editor.sent && editor.pending.length === 0 && room.state.controls.notes.lines.join("\\n") === editor.text,
           () => done({ errors, text: editor.text }));
    });
  });
});
"""


def test_a_refused_edit_is_given_up_and_typing_goes_on(server, browser):
    a = browser(server.http_url)
    wait(a, connected)
    a.set_script_timeout(20)
    result = a.execute_async_script(REFUSED_THEN_TYPED, server.ws_url)
    assert result["errors"] == ["too_large"] and result["text"] == "ok"


def test_a_composition_and_someone_elses_edit_meanwhile_both_stay(server, browser):
    """An input method composing (accents, CJK): the page leaves the textarea alone while it runs; an edit that came
    meanwhile and the composed text are both kept at its end."""
    a = browser(server.http_url)
    wait(a, connected)
    b = server.client()
    b.join()
    b.intent("notes", "set", {"text": "hello world"})
    wait(a, lambda d: area(d).get_attribute("value") == "hello world")
    area(a).click()
    a.execute_script("""const t = arguments[0];
        t.dispatchEvent(new CompositionEvent("compositionstart"));
        t.value = "hello, world"; t.setSelectionRange(6, 6);""", area(a))
    assert b.intent("notes", "splice", {"at": 11, "insert": "!", "base": b.state()["controls"]["notes"]["rev"]})["type"] == "ack"
    count = lambda d: d.find_element(By.CSS_SELECTOR, '[data-testid="notes-count"]').text
    wait(a, lambda d: count(d).startswith("12 /"), message="the page has Bob's edit, the textarea not yet")
    assert area(a).get_attribute("value") == "hello, world"
    a.execute_script("arguments[0].dispatchEvent(new CompositionEvent('compositionend'))", area(a))
    wait(a, lambda d: area(d).get_attribute("value") == "hello, world!", message="both")
    b.wait_state(lambda s: s["controls"]["notes"]["lines"] == ["hello, world!"])
    assert a.execute_script("return arguments[0].selectionStart", area(a)) == 6
