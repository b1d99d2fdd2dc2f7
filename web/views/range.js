// range: a fader everyone watches move. A drag sends `set` once per animation frame; the room sends its patches at
// most every minIntervalMs, and the last value always arrives. While this page drags, its own slider leads.
import { act, controlHeader, el, memberName, missingRoles } from "./common.js";

export function rangeView(room, id) {
  const [title, caption, notice] = controlHeader(id, "A shared fader: drag it, everyone sees it move.");
  const slider = el("input", { type: "range", id: `${id}-slider`, "data-testid": `${id}-slider` });
  const output = el("output", { for: `${id}-slider`, class: "range-value", "data-testid": `${id}-value` });
  const holding = el("p", { class: "holding", "data-testid": `${id}-holding` });
  const element = el("section", { class: "control", "data-control": id, "data-kind": "range", "aria-labelledby": `${id}-label` },
    title, caption, el("div", { class: "range-row" }, slider, output), holding, notice);
  let dragging = false;
  let queued = null; // the value to send at the next frame
  let shown = null;
  const send = () => {
    const value = queued;
    queued = null;
    if (value !== null) act(room, id, "set", { value });
  };
  slider.addEventListener("input", () => {
    dragging = true;
    output.textContent = slider.value;
    if (queued === null) requestAnimationFrame(send);
    queued = Number(slider.value);
  });
  const end = () => {
    if (!dragging) return;
    dragging = false;
    if (queued !== null) send();
    room.intent(id, "release").catch(() => {}); // the drag may have ended already (idle, replaced)
    if (shown) { slider.value = shown.value; output.textContent = String(shown.value); }
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
      if (!dragging) {
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
