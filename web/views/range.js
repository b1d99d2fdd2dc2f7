// range: a fader everyone watches move. A drag sends `set` at most every minIntervalMs (16 ms at least: the room sends
// no more often, and a 240 Hz display must not outrun the rate limit); the last value always goes, and always arrives.
// While this page drags, its own slider leads.
import { act, controlHeader, el, memberName, missingRoles } from "./common.js";

export function rangeView(room, id) {
  const [title, caption, notice] = controlHeader(id, "A shared fader: drag it, everyone sees it move.");
  const slider = el("input", { type: "range", id: `${id}-slider`, "data-testid": `${id}-slider` });
  const output = el("output", { for: `${id}-slider`, class: "range-value", "data-testid": `${id}-value` });
  const holding = el("p", { class: "holding", "data-testid": `${id}-holding` });
  const element = el("section", { class: "control", "data-control": id, "data-kind": "range", "aria-labelledby": `${id}-label` },
    title, caption, el("div", { class: "range-row" }, slider, output), holding, notice);
  let dragging = false;
  let queued = null; // the value to send when the gap since the last send has passed
  let timer = null;
  let lastSent = 0;
  let shown = null;
  const gap = () => Math.max(shown?.minIntervalMs ?? 16, 16);
  const send = () => {
    clearTimeout(timer);
    timer = null;
    const value = queued;
    queued = null;
    if (value === null) return;
    lastSent = performance.now();
    act(room, id, "set", { value });
  };
  slider.addEventListener("input", () => {
    dragging = true;
    output.textContent = slider.value;
    queued = Number(slider.value);
    const wait = lastSent + gap() - performance.now();
    if (wait <= 0) send();
    else if (timer === null) timer = setTimeout(send, wait);
  });
  const end = () => {
    if (!dragging) return;
    dragging = false;
    if (queued !== null) send();
    room.intent(id, "release").catch(() => {}); // the drag may have ended already (idle, replaced)
    // The slider stays where it was let go: the patch that ends the drag (the release's) carries that value.
  };
  slider.addEventListener("change", end);
  slider.addEventListener("pointerup", end);
  slider.addEventListener("blur", end);
  return {
    element,
    update(c) {
      shown = c;
      title.textContent = c.label;
      slider.min = c.min;
      slider.max = c.max;
      slider.step = c.step;
      slider.setAttribute("aria-label", c.label);
      // While our own drag holds it, the patches are behind our slider: the one that ends the drag brings its value.
      if (!dragging && c.holding?.session !== room.session) {
        slider.value = c.value;
        output.textContent = String(c.value);
      }
      const onlyFor = missingRoles(room, id, "set");
      slider.disabled = onlyFor !== null;
      const h = c.holding;
      const who = h ? `${h.session === room.session ? "You are" : `${memberName(room, h.session)} is`} moving it` : "";
      holding.textContent = onlyFor ? `${who ? `${who}. ` : ""}Only ${onlyFor.join(" or ")} can move ${c.label}.` : who;
    },
  };
}
