// The test page: every control of a room as LiveControls elements (web/elements.js: <lc-control> per control,
// <lc-presence>, <lc-undo>, all in one <lc-room>), plus what only this page has — the name box, the status line with
// Retry, reactions and a log of patches. The elements are enough to draw and drive every control.
import { el, plainWords } from "./views/common.js";
import { reactionsPanel } from "./views/reactions.js";

const params = new URLSearchParams(location.search);
// The name: the URL's (?name=), else the one chosen here before (kept in this browser).
const storedName = (() => { try { return localStorage.getItem("livecontrols.name"); } catch { return null; } })();
// A name is 1–64 characters (the server refuses a longer one): what the box would save, the URL's is cut to.
const name = (params.get("name") ?? storedName)?.trim().slice(0, 64) || null;
const $ = (id) => document.getElementById(id);
// The room's attributes come from the URL: set before the elements are defined, so <lc-room> connects with them.
for (const [attribute, value] of [["room", params.get("room") || "demo"], ["name", name], ["token", params.get("token")], ["template", params.get("template")]]) {
  if (value) $("room").setAttribute(attribute, value);
}

// The name box works from the start (before the elements load: a submit then would be the browser's own, a reload
// without the room or token).
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

try {
  await import("./elements.js");
} catch (error) {
  $("errors").textContent = "This page could not load its controls (web/elements.js). Reload to try again.";
  throw error;
}
const room = $("room").liveRoom;
$("room-name").textContent = room.room;
const reactionsView = reactionsPanel(room);
$("presence-panel").after(reactionsView.element);

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
room.addEventListener("status", (e) => showStatus(e.detail.status));
showStatus(room.status); // (the connection began as the elements loaded)

function showStatus(status) {
  if (status === "closed") reconnecting = true;
  else if (status !== "connecting") reconnecting = false;
  const shown = status === "connecting" && reconnecting ? "closed" : status;
  $("status").textContent = statusText[shown] ?? shown;
  $("status").dataset.state = shown;
  document.body.dataset.status = status;
  // Not joined: nothing in the controls acts, keyboard included (greyed by the stylesheet; `inert` stops typing too).
  $("controls").inert = status !== "open";
  $("retry").hidden = shown !== "closed";
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
}
room.addEventListener("startedover", () => {
  $("notice").textContent = "This room started over: the server did not keep what it held before (it restarted, or the room was changed).";
  clearTimeout($("notice").clearTimer);
  $("notice").clearTimer = setTimeout(() => { $("notice").textContent = ""; }, 15000);
});
room.addEventListener("state", render);
if (room.state) render();
room.addEventListener("patch", (e) => logPatch(e.detail));
room.addEventListener("error", (e) => {
  // A token in the link that the server does not take (mistyped, cut, signed for another server) is not a missing one.
  const badToken = e.detail.code === "unauthorized" && params.get("token");
  $("errors").textContent = badToken ? "The access link's token is not valid on this server (it may be cut short or meant for another server): ask for a new link."
    : plainWords(e.detail);
  $("errors").dataset.code = e.detail.code; // the protocol's code, for tools and tests
});

/** What this session may do and is called, as the server has it: a viewer's page says it only watches; a name set by
 * the access token shows in the name box, which cannot change it. */
function renderSelf() {
  const me = room.state.presence?.[room.session];
  if (!me) return;
  const viewer = (me.roles ?? []).includes("viewer");
  document.body.classList.toggle("viewer", viewer);
  reactionsView.setViewer(viewer); // viewers may not broadcast (unless a template lists them); the elements disable themselves
  $("viewer-note").hidden = !viewer;
  const fromToken = params.get("token") && me.name !== null && me.name !== (name ?? null);
  if (fromToken) {
    $("name-input").value = me.name;
    $("name-input").disabled = $("name-save").disabled = true;
    $("name-input").title = "Your access link sets your name";
  }
}

/** One <lc-control> per control of the room, in the room's order; each draws (and redraws) itself. */
function render() {
  $("version").textContent = room.version;
  renderSelf();
  const ids = Object.keys(room.state.controls);
  const shown = new Map([...$("controls").children].map((e) => [e.getAttribute("control"), e]));
  for (const [id, element] of shown) if (!ids.includes(id)) element.remove();
  let previous = null;
  for (const id of ids) {
    let element = shown.get(id);
    if (!element) {
      element = document.createElement("lc-control");
      element.setAttribute("control", id);
    }
    const wanted = previous ? previous.nextElementSibling : $("controls").firstElementChild;
    // moveBefore keeps a moved control as it is (its view, focus, what is typed); insertBefore would draw it anew.
    if (wanted !== element) {
      if (element.isConnected && $("controls").moveBefore) $("controls").moveBefore(element, wanted);
      else $("controls").insertBefore(element, wanted);
    }
    previous = element;
  }
}

function logPatch(patch) {
  const log = $("log");
  const cause = patch.cause ? `${patch.cause.kind}${patch.cause.intent ? ` ${patch.cause.intent}` : ""}${patch.cause.control ? ` ${patch.cause.control}` : ""}` : "";
  log.prepend(el("li", {}, `version ${patch.version} · ${cause} · ${patch.ops.map((o) => `${o.op} ${o.path}`).join(", ")}`));
  while (log.children.length > 200) log.lastChild.remove();
}
