// The test page: renders every control of a room, presence, status and a log of patches.
import { LiveRoom } from "./livecontrols.js";
import { el, memberColor } from "./views/common.js";
import { stepperView } from "./views/stepper.js";
import { listView } from "./views/list.js";
import { wizardView } from "./views/wizard.js";
import { formView } from "./views/form.js";
import { pagerView } from "./views/pager.js";

const params = new URLSearchParams(location.search);
const room = new LiveRoom({ room: params.get("room") || "demo", name: params.get("name"), token: params.get("token"),
                           template: params.get("template") });
const $ = (id) => document.getElementById(id);
$("room-name").textContent = room.room;

const statusText = { open: "connected", connecting: "connecting…", closed: "disconnected — reconnecting…", refused: "refused (see the error)",
                     deleted: "this room was deleted — reload the page to start it anew", removed: "disconnected by the server" };
room.addEventListener("status", (e) => {
  $("status").textContent = statusText[e.detail.status] ?? e.detail.status;
  $("status").dataset.state = e.detail.status;
  document.body.dataset.status = e.detail.status;
});
room.addEventListener("state", render);
room.addEventListener("patch", (e) => logPatch(e.detail));
room.addEventListener("error", (e) => { $("errors").textContent = `${e.detail.code}: ${e.detail.message}`; });

const makers = { stepper: stepperView, list: listView, wizard: wizardView, form: formView, pager: pagerView };
const views = new Map();

function genericView(room, id) {
  const title = el("h2");
  const pre = el("pre");
  return { element: el("section", { class: "control", "data-control": id }, title, pre),
    update(c) { title.textContent = c.label || id; pre.textContent = JSON.stringify(c, null, 2); } };
}

function render() {
  $("version").textContent = room.version;
  const controls = room.state.controls;
  for (const [id, control] of Object.entries(controls)) {
    let view = views.get(id);
    if (!view || view.kind !== control.kind) {
      const fresh = (makers[control.kind] ?? genericView)(room, id);
      fresh.kind = control.kind;
      if (view) view.element.replaceWith(fresh.element);
      else $("controls").append(fresh.element); // controls arrive in the room's order
      view = fresh;
      views.set(id, view);
    }
    view.update(control);
  }
  for (const [id, view] of views) if (!(id in controls)) { view.element.remove(); views.delete(id); }
  renderPresence();
}

function renderPresence() {
  const entries = Object.entries(room.state.presence);
  $("presence-count").textContent = entries.length;
  const label = (id) => room.state.controls[id]?.label ?? id;
  $("presence").replaceChildren(...entries.map(([session, member]) => {
    const who = member.name || "Guest";
    const roles = (member.roles ?? []).filter((r) => !["viewer", "editor", "admin"].includes(r));
    const holds = member.holding.length ? ` — holding ${member.holding.map(label).join(", ")}` : "";
    const editing = (member.editing ?? []).map((e) => (e.target === "*" ? label(e.control) : `${label(e.control)} › ${e.target.split(".").pop()}`));
    const dot = el("span", { class: "dot", "aria-hidden": "true" });
    dot.style.background = memberColor(room, session); // CSSOM, not a style attribute: the page's CSP allows only this
    return el("li", { "data-session": session }, dot,
      `${who}${session === room.session ? " (you)" : ""}`,
      roles.length ? el("span", { class: "role" }, roles.join(", ")) : null,
      `${holds}${editing.length ? ` — editing ${editing.join(", ")}` : ""}`);
  }));
}

function logPatch(patch) {
  const log = $("log");
  const cause = patch.cause ? `${patch.cause.kind}${patch.cause.intent ? ` ${patch.cause.intent}` : ""}${patch.cause.control ? ` ${patch.cause.control}` : ""}` : "";
  log.prepend(el("li", {}, `v${patch.version} · ${cause} · ${patch.ops.map((o) => `${o.op} ${o.path}`).join(", ")}`));
  while (log.children.length > 200) log.lastChild.remove();
}
