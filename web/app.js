// The test page: renders the room's controls and presence, and sends intents.
import { LiveRoom } from "./livecontrols.js";

const params = new URLSearchParams(location.search);
const room = new LiveRoom({ room: params.get("room") || "demo", name: params.get("name") });
const $ = (id) => document.getElementById(id);
$("room-name").textContent = room.room;

room.addEventListener("status", (e) => {
  $("status").textContent = e.detail.status === "open" ? "connected" : e.detail.status;
  $("status").dataset.state = e.detail.status;
});
room.addEventListener("state", render);
room.addEventListener("error", (e) => console.warn("server error", e.detail));

const views = new Map();

function render() {
  $("version").textContent = room.version;
  const controls = room.state.controls;
  for (const [id, control] of Object.entries(controls)) {
    let view = views.get(id);
    if (!view) {
      view = control.kind === "stepper" ? stepperView(id) : genericView(id);
      views.set(id, view);
      $("controls").append(view.element);
    }
    view.update(control);
  }
  for (const [id, view] of views) if (!(id in controls)) { view.element.remove(); views.delete(id); }
  const list = $("presence");
  list.replaceChildren(...Object.entries(room.state.presence).map(([session, member]) => {
    const li = document.createElement("li");
    const who = member.name || session;
    li.textContent = `${who}${session === room.session ? " (you)" : ""}${member.holding.length ? ` — holding ${member.holding.join(", ")}` : ""}`;
    return li;
  }));
}

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  e.append(...children);
  return e;
}

/** A button that sends press on pointerdown/Space/Enter and release when let go. */
function holdButton(id, direction, text, label) {
  const button = el("button", { type: "button", "aria-label": label, "data-direction": direction }, text);
  let held = false;
  const press = (event) => {
    event.preventDefault();
    if (held || button.disabled) return;
    held = true;
    if (event.pointerId !== undefined) button.setPointerCapture(event.pointerId);
    room.intent(id, "press", { direction }).catch(() => { held = false; });
  };
  const release = () => {
    if (!held) return;
    held = false;
    room.intent(id, "release").catch(() => {});
  };
  button.addEventListener("pointerdown", press);
  for (const type of ["pointerup", "pointercancel", "lostpointercapture"]) button.addEventListener(type, release);
  button.addEventListener("keydown", (e) => { if ((e.key === " " || e.key === "Enter") && !e.repeat) press(e); });
  button.addEventListener("keyup", (e) => { if (e.key === " " || e.key === "Enter") release(); });
  button.addEventListener("blur", release);
  return button;
}

function stepperView(id) {
  const title = el("h2", { id: `${id}-label` });
  const output = el("output", { "aria-labelledby": `${id}-label`, "aria-live": "polite", "data-testid": `${id}-value` });
  const minus = holdButton(id, "prev", "−", "Decrease");
  const plus = holdButton(id, "next", "+", "Increase");
  const holding = el("p", { class: "holding" });
  const element = el("section", { class: "control", "data-control": id }, title, el("div", { class: "stepper" }, minus, output, plus), holding);
  return {
    element,
    update(c) {
      title.textContent = c.label;
      output.textContent = c.value;
      minus.disabled = !c.canPrev;
      plus.disabled = !c.canNext;
      const holder = c.holding && (room.state.presence[c.holding.session]?.name || c.holding.session);
      holding.textContent = c.holding ? `${holder} is holding ${c.holding.direction === "next" ? "+" : "−"}` : "";
    },
  };
}

function genericView(id) {
  const title = el("h2");
  const pre = el("pre");
  return { element: el("section", { class: "control", "data-control": id }, title, pre), update(c) { title.textContent = c.label || id; pre.textContent = JSON.stringify(c, null, 2); } };
}
