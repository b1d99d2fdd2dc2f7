// Who is here: each person once (the sessions of one user — a phone and a laptop, two tabs — together), with what they
// hold and edit. The page's presence panel and the <lc-presence> element (web/elements.js) draw it.
import { el, memberColor } from "./common.js";

/** "Email" for a claim on a form's `account.email`; an item's label in a list; else the target's last part. */
function partLabel(room, control, target) {
  const c = room.state.controls[control];
  const [element, field] = target.split(".");
  const found = c?.elements?.find((e) => e.id === element);
  if (found) return (field ? found.fields?.find((f) => f.id === field)?.label : found.title) ?? target.split(".").pop();
  const item = c?.sections?.flatMap((s) => s.items).find((i) => i.id === target);
  return item?.label ?? target.split(".").pop();
}

/** Lists `room`'s people in `list` (a `ul`), each person once; returns how many there are. */
export function renderPeople(room, list) {
  // Each person once: the sessions of one user (the token's `sub`: a phone and a laptop, two tabs) together.
  const people = room.people();
  const label = (id) => room.state.controls[id]?.label ?? id;
  const union = (lists) => [...new Set(lists.flat())];
  list.replaceChildren(...people.map((person) => {
    const members = person.sessions.map((session) => room.state.presence[session]);
    const first = person.you ? room.session : person.sessions[0];
    const who = person.name || "Guest";
    const roles = union(members.map((m) => (m.roles ?? []).filter((r) => !["viewer", "editor", "admin"].includes(r))));
    const holding = union(members.map((m) => m.holding));
    const editing = union(members.map((m) => (m.editing ?? []).map((e) => (e.target === "*" ? label(e.control) : `${label(e.control)} › ${partLabel(room, e.control, e.target)}`))));
    const holds = holding.length ? ` — holding ${holding.map(label).join(", ")}` : "";
    const devices = person.sessions.length > 1 ? el("span", { class: "devices", "data-testid": "devices" }, `${person.sessions.length} devices`) : null;
    const dot = el("span", { class: "dot", "aria-hidden": "true" });
    dot.style.background = memberColor(room, first); // CSSOM, not a style attribute: the page's CSP allows only this
    return el("li", { "data-session": first, "data-sessions": person.sessions.join(" ") }, dot,
      `${who}${person.you ? " (you)" : ""}${devices ? " " : ""}`, devices,
      roles.length ? el("span", { class: "role" }, roles.join(", ")) : null,
      `${holds}${editing.length ? ` — editing ${editing.join(", ")}` : ""}`);
  }));
  return people.length;
}
