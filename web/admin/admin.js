// LiveControls admin console: the server API (/api/v1), /healthz and /metrics, read every few seconds with the
// credential typed in (kept in this tab's session storage only). Nothing here joins a room: watching a room does not
// make its members see one more person. It shows what the server answers for the credential: an admin token sees
// its rooms and their failed deliveries; endpoints and nodes are the API key's alone (403 otherwise, said in words).
import { chart, sample } from "./charts.js";

const STORE = "livecontrols-admin-credential";
const EVERY_MS = 2000;
const ROOMS_SHOWN = 200;
const PATCHES_KEPT = 50;

const $ = (id) => document.getElementById(id);
const url = (path) => new URL(path, location.href);

class APIError extends Error {
  constructor(status, code, message) { super(message); this.status = status; this.code = code; }
}

let credential = sessionStorage.getItem(STORE);
let timer = null;
let rooms = [];
let cluster = false;
let selected = null; // {name, epoch, version, stateText, patches: [], history: "unknown" | "kept" | "none"}
const series = { connections: [], rooms: [], intents: [], deliveries: [] };
let lastCounters = null;

async function request(method, path, { query } = {}) {
  const target = url("../api/v1/" + path);
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null) target.searchParams.set(k, String(v));
  const response = await fetch(target, { method, headers: { Authorization: `Bearer ${credential}` }, cache: "no-store" });
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    throw new APIError(response.status, body?.error?.code ?? "http_" + response.status, body?.error?.message ?? response.statusText);
  }
  return body;
}

/** An answer in words, for the notices. */
function words(error) {
  if (!(error instanceof APIError)) return `The server could not be reached (${error.message}).`;
  switch (error.status) {
    case 401: return error.code === "token_expired" ? "The token has expired: sign in again." : "The key or token was not accepted.";
    case 403: return `Not allowed: ${error.message}.`;
    case 404: return `Not found: ${error.message}.`;
    case 503: return `The server cannot answer right now (${error.message}); it is asked again in a moment.`;
    default: return `${error.message} (${error.code}).`;
  }
}

function problem(text) { $("problem").textContent = text ?? ""; }

function element(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "dataset") Object.assign(node.dataset, v);
    else if (k in node) node[k] = v;
    else node.setAttribute(k, v);
  }
  for (const child of children) node.append(child);
  return node;
}

// Signing in and out.

async function signIn(event) {
  event?.preventDefault();
  const typed = $("credential").value.trim();
  if (typed) credential = typed;
  if (!credential) return;
  try {
    const listing = await request("GET", "rooms");
    sessionStorage.setItem(STORE, credential);
    $("credential").value = "";
    document.body.dataset.signedIn = "true";
    $("sign-in").hidden = true;
    $("console").hidden = false;
    $("sign-out").hidden = false;
    problem("");
    showRooms(listing.rooms);
    await describeCredential();
    selectFromHash();
    refresh();
  } catch (error) {
    signOut(words(error));
  }
}

function signOut(reason) {
  clearTimeout(timer);
  timer = null;
  credential = null;
  sessionStorage.removeItem(STORE);
  document.body.dataset.signedIn = "false";
  $("console").hidden = true;
  $("sign-in").hidden = false;
  $("sign-out").hidden = true;
  $("who").textContent = "";
  rooms = [];
  selected = null;
  lastCounters = null;
  for (const list of Object.values(series)) list.length = 0;
  for (const id of ["health", "charts", "room-state", "room-patches"]) $(id).replaceChildren();
  for (const table of document.querySelectorAll("tbody")) table.replaceChildren();
  problem(typeof reason === "string" ? reason : "");
  $("credential").focus();
}

/** Whether the credential is the API key (it may list endpoints): said in the header. */
async function describeCredential() {
  try {
    await request("GET", "webhooks");
    $("who").textContent = "Signed in with the API key: every room.";
    document.body.dataset.access = "key";
  } catch (error) {
    if (error.status !== 403) throw error;
    $("who").textContent = "Signed in with an admin token: the rooms it grants.";
    document.body.dataset.access = "token";
  }
}

// The loop: every source is read, each on its own (one that fails says so and does not stop the others).

async function refresh() {
  clearTimeout(timer);
  if (!credential) return;
  const started = performance.now();
  const results = await Promise.allSettled([loadHealth(), loadMetrics(), loadRooms(), loadNodes(), loadRoom(), loadWebhooks()]);
  if (!credential) return;
  const failure = results.find((r) => r.status === "rejected")?.reason;
  if (failure?.status === 401) return signOut(words(failure));
  problem(failure ? words(failure) : "");
  timer = setTimeout(refresh, Math.max(250, EVERY_MS - (performance.now() - started)));
}

async function loadHealth() {
  const response = await fetch(url("../healthz"), { cache: "no-store" });
  const health = await response.json();
  const rows = [
    ["Status", health.status], ["Protocol", health.protocol], ["Up for", duration(health.uptimeSeconds)],
    ["Connections", health.connections], ["Rooms loaded", health.rooms],
  ];
  if (health.cluster) {
    rows.push(["Node", health.cluster.node], ["Redis", health.cluster.redis], ["Rooms owned", health.cluster.ownedRooms]);
  }
  $("health").replaceChildren(...rows.flatMap(([k, v]) => [element("dt", { textContent: k }), element("dd", { textContent: String(v), dataset: { field: k } })]));
  $("health").dataset.status = health.status;
  cluster = Boolean(health.cluster);
}

async function loadMetrics() {
  const response = await fetch(url("../metrics"), { headers: { Authorization: `Bearer ${credential}` }, cache: "no-store" });
  if (!response.ok) {
    const body = await response.json().catch(() => null);
    throw new APIError(response.status, body?.error?.code ?? "metrics", body?.error?.message ?? "the metrics could not be read");
  }
  const now = performance.now() / 1000;
  const totals = sample(await response.text());
  series.connections.push(totals.livecontrols_connections ?? 0);
  series.rooms.push(totals.livecontrols_rooms ?? 0);
  const counters = { t: now, intents: totals.livecontrols_intents_total ?? 0, deliveries: totals.livecontrols_patch_deliveries_total ?? 0 };
  if (lastCounters && counters.t > lastCounters.t) {
    const seconds = counters.t - lastCounters.t;
    series.intents.push(Math.max(0, (counters.intents - lastCounters.intents) / seconds));
    series.deliveries.push(Math.max(0, (counters.deliveries - lastCounters.deliveries) / seconds));
  }
  lastCounters = counters;
  for (const list of Object.values(series)) if (list.length > 60) list.splice(0, list.length - 60);
  const node = cluster ? " (this node)" : "";
  $("charts").replaceChildren(
    chart("Connections" + node, series.connections, "connections"),
    chart("Rooms loaded" + node, series.rooms, "rooms"),
    chart("Intents per second" + node, series.intents, "intents"),
    chart("Fan-out per second" + node, series.deliveries, "fan-out", "patch messages sent to members"),
  );
}

async function loadRooms() {
  showRooms((await request("GET", "rooms")).rooms);
}

function showRooms(list) {
  rooms = list;
  const inCluster = rooms.some((r) => "node" in r);
  for (const cell of document.querySelectorAll(".node-col")) cell.hidden = !inCluster;
  const query = $("room-search").value.trim().toLowerCase();
  const matching = query ? rooms.filter((r) => r.room.toLowerCase().includes(query) || r.template.toLowerCase().includes(query)) : rooms;
  const shown = matching.slice(0, ROOMS_SHOWN);
  $("rooms-count").textContent = query ? `(${matching.length} of ${rooms.length})` : `(${rooms.length})`;
  $("rooms-more").textContent = matching.length > shown.length ? `${matching.length - shown.length} more: narrow the search.` : (matching.length ? "" : "No room matches.");
  $("rooms").querySelector("tbody").replaceChildren(...shown.map((r) => {
    const open = element("button", { type: "button", className: "link", textContent: r.room, dataset: { room: r.room } });
    open.addEventListener("click", () => select(r.room));
    const row = element("tr", { dataset: { room: r.room } },
      element("td", {}, open), element("td", { textContent: r.template }), element("td", { className: "num", textContent: r.version }),
      element("td", { className: "num", textContent: r.members }), element("td", { textContent: r.loaded ? "yes" : "stored" }));
    if (inCluster) row.append(element("td", { textContent: r.node ?? "–" }));
    if (selected?.name === r.room) row.setAttribute("aria-current", "true");
    return row;
  }));
}

async function loadNodes() {
  if (!cluster) { $("nodes").hidden = true; return; }
  $("nodes").hidden = false;
  const body = $("nodes").querySelector("tbody");
  if (document.body.dataset.access !== "key") {
    $("nodes-note").textContent = "Only the API key lists the nodes; the rooms' owners show in the room list.";
    body.replaceChildren();
    return;
  }
  const { nodes } = await request("GET", "nodes");
  $("nodes-note").textContent = `${nodes.length} node${nodes.length === 1 ? "" : "s"} running.`;
  body.replaceChildren(...nodes.map((n) => element("tr", { dataset: { node: n.node } },
    element("td", { textContent: n.node + (n.self ? " (answering)" : "") }), element("td", { className: "num", textContent: n.rooms }))));
}

// One room: its live state and members (GET the room), its recent patches (GET patches after the last one seen).

function selectFromHash() {
  const name = new URLSearchParams(location.hash.slice(1)).get("room");
  if (name) select(name, { fromHash: true });
}

async function select(name, { fromHash = false } = {}) {
  if (!fromHash) history.replaceState(null, "", "#" + new URLSearchParams({ room: name }));
  selected = { name, epoch: null, version: null, stateText: null, patches: [], history: "unknown" };
  $("room").hidden = false;
  $("room-name").textContent = name;
  $("room-notice").textContent = "";
  $("room-state").replaceChildren();
  $("room-patches").replaceChildren();
  for (const row of $("rooms").querySelectorAll("tbody tr")) row.toggleAttribute("aria-current", row.dataset.room === name);
  try {
    await loadRoom();
  } catch (error) {
    if (selected?.name === name) $("room-notice").textContent = words(error);
  }
  $("room-title").scrollIntoView({ block: "nearest" });
}

async function loadRoom() {
  const current = selected;
  if (!current) return;
  let room;
  try {
    room = await request("GET", "rooms/" + encodeURIComponent(current.name));
  } catch (error) {
    if (error.status === 404 || error.status === 403) {
      $("room-notice").textContent = words(error);
      $("room-meta").textContent = "";
      return;
    }
    throw error;
  }
  if (selected !== current) return;
  if (current.epoch !== room.epoch) {
    current.epoch = room.epoch;
    current.patches = [];
    current.history = "unknown";
    current.seen = null;
  }
  current.version = room.version;
  const owner = rooms.find((r) => r.room === current.name)?.node;
  $("room-meta").textContent = `template ${room.template} · version ${room.version} · epoch ${room.epoch} · `
    + `${room.members.length} member${room.members.length === 1 ? "" : "s"}` + (owner ? ` · owned by ${owner}` : "");
  showMembers(room.members);
  const text = JSON.stringify(room.state, null, 2);
  if (text !== current.stateText) {
    current.stateText = text;
    $("room-state").textContent = text;
  }
  await loadPatches(current);
}

function showMembers(members) {
  const body = $("room").querySelector("tbody");
  if (!members.length) {
    body.replaceChildren(element("tr", {}, element("td", { colSpan: 5, className: "note", textContent: "Nobody is in the room." })));
    return;
  }
  body.replaceChildren(...members.map((m) => {
    const out = element("button", { type: "button", textContent: "Disconnect", dataset: { session: m.session } });
    out.setAttribute("aria-label", `Disconnect ${m.name ?? m.session}`);
    out.addEventListener("click", () => disconnect(m));
    const activity = [...m.holding.map((c) => "holding " + c), ...m.editing.map((e) => "editing " + (typeof e === "string" ? e : JSON.stringify(e)))];
    return element("tr", { dataset: { session: m.session } },
      element("td", { textContent: (m.name ?? "(no name)") + (m.user ? ` · ${m.user}` : "") }),
      element("td", { className: "mono", textContent: m.session }), element("td", { textContent: m.roles.join(", ") || "–" }),
      element("td", { textContent: activity.join(", ") || "–" }), element("td", {}, out));
  }));
}

async function disconnect(member) {
  const room = selected?.name;
  if (!room) return;
  try {
    await request("DELETE", `rooms/${encodeURIComponent(room)}/members/${encodeURIComponent(member.session)}`);
    $("room-notice").textContent = `Disconnected ${member.name ?? member.session} (its connection closed with 4001; it left every room it was in).`;
  } catch (error) {
    $("room-notice").textContent = `Could not disconnect ${member.name ?? member.session}: ${words(error)}`;
  }
  await loadRoom().catch(() => {});
}

/** The recent patches: the last few the room keeps at first, then each new one. */
async function loadPatches(current) {
  if (current.history === "none") return;
  if (current.seen == null) {
    for (const back of [PATCHES_KEPT, 10, 1]) {
      const after = Math.max(0, current.version - back);
      try {
        const answer = await request("GET", `rooms/${encodeURIComponent(current.name)}/patches`, { query: { after, epoch: current.epoch } });
        current.seen = after;
        current.history = "kept";
        addPatches(current, answer.patches);
        return;
      } catch (error) {
        if (error.status !== 409) throw error;
        if (after === current.version) break;
      }
    }
    current.history = "none";
    $("room-patches").replaceChildren(element("li", { className: "note", textContent: "This room keeps no patches (its template's historyLimit is 0)." }));
    return;
  }
  if (current.version <= current.seen) return;
  try {
    const answer = await request("GET", `rooms/${encodeURIComponent(current.name)}/patches`, { query: { after: current.seen, epoch: current.epoch } });
    addPatches(current, answer.patches);
  } catch (error) {
    if (error.status !== 409) throw error;
    current.seen = null; // fell behind what the room keeps, or a new epoch: start again from the newest
    current.patches = [];
  }
}

function addPatches(current, patches) {
  if (selected !== current) return;
  for (const patch of patches) {
    current.seen = Math.max(current.seen ?? 0, patch.version);
    current.patches.unshift(patch);
  }
  current.patches.length = Math.min(current.patches.length, PATCHES_KEPT);
  if (!patches.length && $("room-patches").childElementCount) return;
  $("room-patches").replaceChildren(...current.patches.map((p) => {
    const summary = element("summary", {}, element("strong", { textContent: "v" + p.version }), ` ${cause(p.cause)} · ${p.ops.length} op${p.ops.length === 1 ? "" : "s"}`);
    return element("li", { value: p.version, dataset: { version: p.version } },
      element("details", {}, summary, element("pre", { className: "json", textContent: JSON.stringify(p.ops, null, 1) })));
  }));
  if (!current.patches.length) $("room-patches").append(element("li", { className: "note", textContent: "No change yet." }));
}

function cause(c) {
  if (!c) return "";
  const parts = [c.kind];
  if (c.control) parts.push(c.control + (c.intent ? "." + c.intent : ""));
  if (c.intents) parts.push(c.intents.map((i) => `${i.control}.${i.intent}`).join(", "));
  if (c.session) parts.push("by " + c.session);
  return parts.join(" ");
}

// Webhooks: the endpoints (the API key's alone) and the deliveries given up, with Retry.

async function loadWebhooks() {
  const endpoints = $("webhooks").querySelector('[data-testid="endpoints"] tbody');
  if (document.body.dataset.access === "key") {
    const answer = await request("GET", "webhooks");
    $("endpoints-note").textContent = answer.endpoints.length ? "" : "No webhook endpoint is configured.";
    endpoints.replaceChildren(...answer.endpoints.map((e) => element("tr", { dataset: { index: e.index } },
      element("td", { className: "mono", textContent: e.url }), element("td", { textContent: e.events.join(", ") || "every event" }),
      element("td", { className: "num", textContent: e.pending }), element("td", { className: "num", textContent: e.inFlight }),
      element("td", { textContent: e.spilled ? "yes (to the store)" : "no" }))));
  } else {
    $("endpoints-note").textContent = "Only the API key lists the endpoints.";
    endpoints.replaceChildren();
  }
  const { failed } = await request("GET", "webhooks/failed", { query: { limit: 100 } });
  $("failed-note").textContent = failed.length ? "" : "No delivery has failed.";
  $("webhooks").querySelector('[data-testid="failed"] tbody').replaceChildren(...failed.map((f) => {
    const retry = element("button", { type: "button", textContent: "Retry", dataset: { event: f.event.id } });
    retry.setAttribute("aria-label", `Retry ${f.event.type} ${f.event.id}`);
    retry.addEventListener("click", () => retryDelivery(f.event.id));
    return element("tr", { dataset: { event: f.event.id } },
      element("td", {}, element("span", { textContent: f.event.type }), element("br"), element("span", { className: "mono muted", textContent: f.event.id })),
      element("td", { textContent: f.event.room }), element("td", { className: "mono", textContent: f.endpoint }),
      element("td", { className: "num", textContent: f.attempts }), element("td", { textContent: `${f.error} (${new Date(f.failedAt).toLocaleString()})` }),
      element("td", {}, retry));
  }));
}

async function retryDelivery(id) {
  try {
    const answer = await request("POST", `webhooks/failed/${encodeURIComponent(id)}/retry`);
    $("webhooks-notice").textContent = `Event ${id}: ${answer.retried} deliver${answer.retried === 1 ? "y is" : "ies are"} pending again.`;
  } catch (error) {
    $("webhooks-notice").textContent = `Could not retry ${id}: ${words(error)}`;
  }
  await loadWebhooks().catch(() => {});
}

function duration(seconds) {
  const s = Number(seconds) || 0;
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

$("sign-in").addEventListener("submit", signIn);
$("sign-out").addEventListener("click", () => signOut("Signed out."));
$("room-search").addEventListener("input", () => showRooms(rooms));
addEventListener("hashchange", selectFromHash);
if (credential) signIn(); else $("credential").focus();
