// Small DOM helpers shared by the control views.

/** Creates an element with attributes and children. */
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === false || v === null || v === undefined) continue;
    e.setAttribute(k, v === true ? "" : v);
  }
  e.append(...children.filter((c) => c !== null && c !== undefined));
  return e;
}

/** What a refusal means, in plain words for the person who acted (the server's message is for developers). */
export function plainWords(error) {
  switch (error.code) {
    case "at_bound": return "Already at the end — it cannot go further that way.";
    case "out_of_range": return `That is outside what this allows (${error.message}).`;
    case "claimed": return "Someone else is editing this right now. Try again when they are done.";
    case "forbidden": return `You cannot do that here: ${error.message}.`;
    case "not_valid": return "Some fields still need attention before you can continue.";
    case "guard_failed": return "Finish the form part this step waits for first.";
    case "finished": return "This is finished. Start it over to change it.";
    case "conflict": return `Someone changed this meanwhile: ${error.message}.`;
    case "rate_limited": case "overloaded": return "Too fast — wait a moment and try again.";
    case "invalid_args": return `That value does not fit: ${error.message}.`;
    case "not_found": return "That item is gone — someone removed it.";
    case "unauthorized": return "This room needs an access token: open the link you were given (it ends in ?token=…).";
    case "token_expired": return "Your access has expired: get a new link and open it.";
    case "room_limit": return "The server has no room for another room right now. Trying again…";
    case "room_deleted": return "This room was deleted. Reload the page to start it anew.";
    case "unavailable": return "The room is briefly unavailable (it is moving or restarting). Trying again…";
    case "unknown_room": return "There is no room by this name on this server.";
    case "too_large": return `That is too large to send or keep here (${error.message}).`;
    default: return error.message;
  }
}

/**
 * Shows a refusal next to the control it concerns (`[data-notice]` inside its section), in plain words, and
 * clears it after a few seconds or at the control's next accepted action. Without a control: the page's line.
 */
export function reportError(error, control, room = null) {
  if (error?.code === "disconnected") return;
  console.warn("refused", error);
  const box = (control && findNotice(control, room)) || document.getElementById("errors");
  const detail = { control: control ?? null, code: error.code, message: error.message };
  if (!box) return document.dispatchEvent(new CustomEvent("lc-error", { detail }));
  box.textContent = plainWords(error);
  box.dataset.code = error.code;
  clearTimeout(box.clearTimer);
  box.clearTimer = setTimeout(() => { box.textContent = ""; }, 6000);
  // For apps: the element (web/elements.js) and the page hear it (`lc-error`, out of a shadow root too).
  box.dispatchEvent(new CustomEvent("lc-error", { bubbles: true, composed: true, detail }));
}

/** Clears the control's notice (an action of it was accepted). */
export function clearNotice(control, room = null) {
  const box = findNotice(control, room);
  if (box) box.textContent = "";
}

/** Shadow roots that hold control views (web/elements.js), each with the LiveRoom it draws: a notice is found in the
 * one of its room (two rooms of one template have the same control ids). Elements take theirs out when they leave. */
export const viewRoots = new Map();

function findNotice(control, room) {
  const selector = `[data-control="${CSS.escape(control)}"] [data-notice]`;
  const inPage = document.querySelector(selector);
  if (inPage) return inPage;
  for (const [root, rootRoom] of viewRoots) {
    if (room && rootRoom !== room) continue;
    const box = root.querySelector(selector);
    if (box) return box;
  }
  return null;
}

/** The element that has the focus where `node` is: its shadow root's, or the page's. */
export function focusedNear(node) {
  return node.getRootNode().activeElement ?? null;
}

/** Sends an intent; shows a refusal next to the control instead of throwing. */
export function act(room, control, intent, args) {
  return room.intent(control, intent, args).then((ack) => { clearNotice(control, room); return ack; }, (e) => reportError(e, control, room));
}

/** The parts every control view starts with: its title, a one-line caption, and the place its notices go. */
export function controlHeader(id, caption) {
  return [
    el("h2", { id: `${id}-label` }),
    el("p", { class: "caption" }, caption),
    el("p", { class: "notice", role: "alert", "data-notice": "", "data-testid": `${id}-notice` }),
  ];
}

/** A small inline form: an input and a button that calls `submit(value)`; the input empties when it resolves. */
export function inlineForm(label, input, button, submit) {
  const form = el("form", { class: "inline", "aria-label": label }, input, el("button", { type: "submit", class: "text" }, button));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const value = input.value.trim(); // a blank entry (spaces only) is not sent
    if (value === "") return;
    if (await submit(value)) input.value = "";
  });
  return form;
}

/**
 * A button that holds: `press` on pointer down / Space / Enter, `release` when let go (pointer up,
 * cancel, lost capture, key up, blur). The repeat runs on the server; the page only sends the two intents.
 * `direction` null: a press with no direction (a toggle's confirming hold).
 */
export function holdButton(room, control, direction, text, label) {
  const button = el("button", { type: "button", class: "hold", "aria-label": label, "data-direction": direction }, text);
  let held = false;
  const press = (event) => {
    event.preventDefault();
    if (held || button.disabled) return;
    held = true;
    button.classList.add("pressed");
    // Capture keeps the release coming to this button; a pointer the browser no longer tracks throws, which must not
    // leave the button pressed without its intent.
    try { if (event.pointerId !== undefined) button.setPointerCapture?.(event.pointerId); } catch { /* released anyway on pointerup */ }
    // An accepted press clears the control's refusal, as any accepted action does (act).
    room.intent(control, "press", direction ? { direction } : {}).then(() => clearNotice(control, room), (e) => {
      held = false;
      button.classList.remove("pressed");
      reportError(e, control, room);
    });
  };
  const release = () => {
    if (!held) return;
    held = false;
    button.classList.remove("pressed");
    room.intent(control, "release").catch(() => {}); // the hold may already have ended (bound, replaced)
  };
  button.addEventListener("pointerdown", press);
  for (const type of ["pointerup", "pointercancel", "lostpointercapture"]) button.addEventListener(type, release);
  button.addEventListener("keydown", (e) => { if ((e.key === " " || e.key === "Enter") && !e.repeat) press(e); });
  button.addEventListener("keyup", (e) => { if (e.key === " " || e.key === "Enter") release(); });
  button.addEventListener("blur", release);
  button.addEventListener("contextmenu", (e) => e.preventDefault());
  return button;
}

/** "Ann is holding +" for a control's `holding`, or "". */
export function holdingText(room, holding, next = "+", prev = "−") {
  if (!holding) return "";
  const who = holding.session === room.session ? "You are" : `${memberName(room, holding.session)} is`;
  return `${who} holding ${holding.direction === "next" ? next : prev}`;
}

/**
 * A button whose action is for everyone in the room and cannot be undone (starting a form over clears what everyone
 * entered): the first click asks (`question` on the button), a second one within 4 s does it; leaving the button
 * or waiting takes the question back. `button.dataset.ask = "no"` makes it act at once (a label that changed).
 */
export function confirmingButton(text, question, action) {
  const button = el("button", { type: "button", class: "text", "data-text": text }, text);
  let timer = null;
  const disarm = () => {
    clearTimeout(timer);
    timer = null;
    button.classList.remove("confirming");
    button.textContent = button.dataset.text;
  };
  button.addEventListener("click", () => {
    if (timer === null && button.dataset.ask !== "no") {
      button.classList.add("confirming");
      button.textContent = button.dataset.question ?? question;
      timer = setTimeout(disarm, 4000);
      return;
    }
    disarm();
    action();
  });
  button.addEventListener("blur", () => { if (timer !== null) disarm(); });
  return button;
}

/** A plain button that sends one intent. */
export function intentButton(room, control, intent, text, args, attrs = {}) {
  const button = el("button", { type: "button", class: "text", ...attrs }, text);
  button.addEventListener("click", () => act(room, control, intent, typeof args === "function" ? args() : args));
  return button;
}

/**
 * The roles a control's `permissions` ask for `intent`, when this session has none of them (else null): a
 * restricted button is disabled, with a line saying who may use it. Admins may always.
 */
export function missingRoles(room, control, intent) {
  const rules = room.state?.controls?.[control]?.permissions;
  if (!rules) return null;
  const needed = rules[intent] ?? rules["*"];
  if (!needed) return null;
  const mine = room.state.presence?.[room.session]?.roles ?? [];
  return mine.includes("admin") || needed.some((r) => mine.includes(r)) ? null : needed;
}

/** A member's display name: its name, or "Guest" (never a session id), as in the list of who is here; "You" for this session. */
export function memberName(room, session) {
  if (session === room.session) return "You";
  return room.state?.presence?.[session]?.name || "Guest";
}

// Eight colours far apart (each pair at least 25 apart in CIELAB, Tests/browser/test_page_polish.py checks it), all
// dark enough for a border on white: red, orange and pink were near-identical before (issue 41).
const palette = ["#2563eb", "#db2777", "#16a34a", "#ea580c", "#7c3aed", "#0891b2", "#a16207", "#475569"];

function hashColor(session) {
  let hash = 0;
  for (const ch of session) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return hash % palette.length;
}

/**
 * The colour a member chose (presence `data.color`), or one of the palette: its session id's, unless a member who
 * joined before has that one — then the next free one (members keep theirs as others come; eight apart at least).
 */
export function memberColor(room, session) {
  const presence = room.state?.presence ?? {};
  const chosen = presence[session]?.data?.color;
  if (typeof chosen === "string" && /^#[0-9a-fA-F]{6}$/.test(chosen)) return chosen;
  const members = Object.keys(presence);
  if (members.length > 64 || !members.includes(session)) return palette[hashColor(session)];
  const taken = new Set();
  for (const other of members) {  // presence lists members in join order
    let c = hashColor(other);
    if (taken.size < palette.length) while (taken.has(c)) c = (c + 1) % palette.length;
    if (other === session) return palette[c];
    taken.add(c);
  }
  return palette[hashColor(session)];
}

/** Tints the hold button of this session's running hold, and only that one (a hold taken over is no longer ours). */
export function syncPressed(room, holding, ...buttons) {
  for (const b of buttons) b.classList.toggle("pressed", holding?.session === room.session && holding.direction === b.dataset.direction);
}
