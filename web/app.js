// The test page: renders every control of a room, presence, status and a log of patches.
import { LiveRoom } from "./livecontrols.js";
import { el, plainWords } from "./views/common.js";
import { stepperView } from "./views/stepper.js";
import { listView } from "./views/list.js";
import { wizardView } from "./views/wizard.js";
import { formView } from "./views/form.js";
import { pagerView } from "./views/pager.js";
import { toggleView } from "./views/toggle.js";
import { timerView } from "./views/timer.js";
import { rangeView } from "./views/range.js";
import { pollView } from "./views/poll.js";
import { textView } from "./views/text.js";
import { reactionsPanel } from "./views/reactions.js";
import { historyBar } from "./views/history.js";
import { renderPeople } from "./views/presence.js";

const params = new URLSearchParams(location.search);
// The name: the URL's (?name=), else the one chosen here before (kept in this browser).
const storedName = (() => { try { return localStorage.getItem("livecontrols.name"); } catch { return null; } })();
// A name is 1–64 characters (the server refuses a longer one): what the box would save, the URL's is cut to.
const name = (params.get("name") ?? storedName)?.trim().slice(0, 64) || null;
const room = new LiveRoom({ room: params.get("room") || "demo", name, token: params.get("token"), template: params.get("template") });
const $ = (id) => document.getElementById(id);
$("room-name").textContent = room.room;
const reactionsView = reactionsPanel(room);
$("presence-panel").after(reactionsView.element);
const historyView = historyBar(room);
$("name-form").after(historyView.element); // in the header: on a phone, beside the name box

$("name-input").value = name ?? "";
$("name-form").addEventListener("submit", (event) => {
  // A name is given at join: choosing another joins again under it (a reload with the name in the URL).
  event.preventDefault();
  const chosen = $("name-input").value.trim().slice(0, 64);
  try { localStorage.setItem("livecontrols.name", chosen); } catch { /* private mode: the URL still carries it */ }
  const next = new URLSearchParams(location.search);
  if (chosen) next.set("name", chosen); else next.delete("name");
  location.search = next.toString();
});

// Protocol details (version, patches) are for developers: behind a toggle, remembered in this browser.
const debug = (() => { try { return localStorage.getItem("livecontrols.debug") === "1"; } catch { return false; } })();
$("debug-toggle").checked = debug;
document.body.classList.toggle("debug", debug);
$("debug-toggle").addEventListener("change", (e) => {
  document.body.classList.toggle("debug", e.target.checked);
  try { localStorage.setItem("livecontrols.debug", e.target.checked ? "1" : "0"); } catch { /* not kept */ }
});

const statusText = { open: "connected", connecting: "connecting…", closed: "disconnected — reconnecting…", refused: "could not join",
                     deleted: "room deleted", removed: "disconnected by the server", expired: "access expired" };
// Disconnected: the page keeps trying by itself. Only a disconnection that lasts is worth a message (a restart takes
// a few seconds); "Retry now" skips the wait.
const unreachableAfterMs = 8000;
let everConnected = false;
let unreachableTimer = null; // set from the first close until connected (or ended for good)
$("retry").addEventListener("click", () => room.reconnectNow());
for (const type of ["online", "visibilitychange"]) {
  addEventListener(type, () => { if (document.visibilityState === "visible") room.reconnectNow(); });
}
let reconnecting = false; // from a lost connection until joined again: each new attempt is still "reconnecting"
room.addEventListener("status", (e) => {
  const status = e.detail.status;
  if (status === "closed") reconnecting = true;
  else if (status !== "connecting") reconnecting = false;
  const shown = status === "connecting" && reconnecting ? "closed" : status;
  $("status").textContent = statusText[shown] ?? shown;
  $("status").dataset.state = shown;
  document.body.dataset.status = status;
  // Not joined: nothing in the controls acts, keyboard included (greyed by the stylesheet; `inert` stops typing too).
  $("controls").inert = status !== "open";
  $("retry").hidden = shown !== "closed";
  if (["refused", "deleted", "removed", "expired"].includes(status)) {
    // Out of the room for good: nobody is shown as here any more, this page's own session least of all (issue 41).
    $("presence").replaceChildren();
    $("presence-count").textContent = 0;
  }
  if (status !== "closed" && status !== "connecting") {
    // Connected, or ended for a reason of its own (refused, deleted, removed): no longer "still trying".
    clearTimeout(unreachableTimer);
    unreachableTimer = null;
  }
  if (status === "open") {
    everConnected = true;
    $("errors").textContent = "";
  } else if (status === "closed" && unreachableTimer === null) {
    unreachableTimer = setTimeout(() => {
      $("errors").textContent = everConnected ? "The server has not answered for a while. Still trying…"
        : "Cannot reach the server. It may be down, or it may not accept this page. Still trying…";
      // Browsers do not tell a page why a WebSocket failed; for whoever runs the server, the usual reason besides a
      // server that is down:
      if (!everConnected) console.warn("LiveControls: no WebSocket connection. If the server is up, check that its --allowed-origin list includes", location.origin);
    }, unreachableAfterMs);
  } else if (status === "removed") $("errors").textContent = "The server's operator disconnected this page. Reload to join again.";
});
room.addEventListener("startedover", () => {
  $("notice").textContent = "This room started over: the server did not keep what it held before (it restarted, or the room was changed).";
  clearTimeout($("notice").clearTimer);
  $("notice").clearTimer = setTimeout(() => { $("notice").textContent = ""; }, 15000);
});
room.addEventListener("state", render);
room.addEventListener("patch", (e) => logPatch(e.detail));
room.addEventListener("error", (e) => {
  // A token in the link that the server does not take (mistyped, cut, signed for another server) is not a missing one.
  const badToken = e.detail.code === "unauthorized" && params.get("token");
  $("errors").textContent = badToken ? "The access link's token is not valid on this server (it may be cut short or meant for another server): ask for a new link."
    : plainWords(e.detail);
  $("errors").dataset.code = e.detail.code; // the protocol's code, for tools and tests
});

const makers = { stepper: stepperView, list: listView, wizard: wizardView, form: formView, pager: pagerView, toggle: toggleView, timer: timerView, range: rangeView, poll: pollView, text: textView };
const views = new Map();

function genericView(room, id) {
  const title = el("h2");
  const pre = el("pre");
  return { element: el("section", { class: "control", "data-control": id }, title, pre),
    update(c) { title.textContent = c.label || id; pre.textContent = JSON.stringify(c, null, 2); } };
}

/** What this session may do and is called, as the server has it: a viewer's page says it only watches; a name set by
 * the access token shows in the name box, which cannot change it. */
function renderSelf() {
  const me = room.state.presence?.[room.session];
  if (!me) return;
  const viewer = (me.roles ?? []).includes("viewer");
  document.body.classList.toggle("viewer", viewer);
  reactionsView.setViewer(viewer); // viewers may not broadcast (unless a template lists them)
  historyView.setViewer(viewer); // nor change anything, so nothing to undo
  $("viewer-note").hidden = !viewer;
  const fromToken = params.get("token") && me.name !== null && me.name !== (name ?? null);
  if (fromToken) {
    $("name-input").value = me.name;
    $("name-input").disabled = $("name-save").disabled = true;
    $("name-input").title = "Your access link sets your name";
  }
}

function render() {
  $("version").textContent = room.version;
  renderSelf();
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
  // A viewer sends no intents: every control shows disabled (still read out, unlike an inert part of the page).
  if (document.body.classList.contains("viewer")) {
    for (const c of $("controls").querySelectorAll("button, input, select")) c.disabled = true;
    for (const li of $("controls").querySelectorAll("li.item")) li.setAttribute("aria-disabled", "true");
  }
  renderPresence();
}

function renderPresence() {
  $("presence-count").textContent = renderPeople(room, $("presence"));
}

function logPatch(patch) {
  const log = $("log");
  const cause = patch.cause ? `${patch.cause.kind}${patch.cause.intent ? ` ${patch.cause.intent}` : ""}${patch.cause.control ? ` ${patch.cause.control}` : ""}` : "";
  log.prepend(el("li", {}, `version ${patch.version} · ${cause} · ${patch.ops.map((o) => `${o.op} ${o.path}`).join(", ")}`));
  while (log.children.length > 200) log.lastChild.remove();
}
