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

/** Reports a refused intent in the page's live region (and the console). */
export function reportError(error) {
  if (error?.code === "disconnected") return;
  const box = document.getElementById("errors");
  if (box) box.textContent = `${error.code}: ${error.message}`;
  console.warn("intent refused", error);
}

/** Sends an intent; shows a refusal instead of throwing. */
export function act(room, control, intent, args) {
  return room.intent(control, intent, args).catch(reportError);
}

/**
 * A button that holds: `press` on pointer down / Space / Enter, `release` when let go (pointer up,
 * cancel, lost capture, key up, blur). The repeat runs on the server; the page only sends the two intents.
 */
export function holdButton(room, control, direction, text, label) {
  const button = el("button", { type: "button", class: "hold", "aria-label": label, "data-direction": direction }, text);
  let held = false;
  const press = (event) => {
    event.preventDefault();
    if (held || button.disabled) return;
    held = true;
    button.classList.add("pressed");
    if (event.pointerId !== undefined) button.setPointerCapture?.(event.pointerId);
    room.intent(control, "press", { direction }).catch((e) => {
      held = false;
      button.classList.remove("pressed");
      reportError(e);
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
  const who = holding.session === room.session ? "You are" : `${room.state.presence[holding.session]?.name || holding.session} is`;
  return `${who} holding ${holding.direction === "next" ? next : prev}`;
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

/** A member's display name: its name, or "Someone" (never a session id); "You" for this session. */
export function memberName(room, session) {
  if (session === room.session) return "You";
  return room.state?.presence?.[session]?.name || "Someone";
}

const palette = ["#2563eb", "#db2777", "#16a34a", "#ea580c", "#7c3aed", "#0891b2", "#ca8a04", "#dc2626"];

/** The colour a member chose (presence `data.color`), or one derived from its session id. */
export function memberColor(room, session) {
  const chosen = room.state?.presence?.[session]?.data?.color;
  if (typeof chosen === "string" && /^#[0-9a-fA-F]{6}$/.test(chosen)) return chosen;
  let hash = 0;
  for (const ch of session) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return palette[hash % palette.length];
}
