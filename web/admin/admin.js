// LiveControls admin console: the server API (/api/v1), /healthz and /metrics, read every few seconds with the
// credential typed in (kept in this tab's session storage only). Nothing here joins a room: watching a room does not
// make its members see one more person. It shows what the server answers for the credential: an admin token sees
// its rooms and their failed deliveries; endpoints and nodes are the API key's alone (403 otherwise, said in words).
import { chart, sample } from "./charts.js";

const STORE = "livecontrols-admin-credential";
const EVERY_MS = 2000;
/** Rooms, nodes and webhooks (each a scan of every room in cluster mode) are read every this many rounds. */
const SLOW_EVERY = 5;
const ROOMS_SHOWN = 200;
const PATCHES_KEPT = 50;
const SIGNED_OUT = "Signed out: the key or token is forgotten in this tab.";

const $ = (id) => document.getElementById(id);
const url = (path) => new URL(path, location.href);

class APIError extends Error {
  constructor(status, code, message) { super(message); this.status = status; this.code = code; }
}

let credential = sessionStorage.getItem(STORE);
/** Counts sign-ins and sign-outs: an answer that arrives after the session it was asked for has ended is dropped. */
let session = 0;
let timer = null;
let round = 0;
let rooms = [];
let selected = null; // {name, epoch, version, patches: [], seen, history, loading}
const series = { connections: [], rooms: [], intents: [], deliveries: [] };
let lastCounters = null;
let node = undefined; // the node /healthz and /metrics describe (null: a single server)

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

/** Sets a line's text only when it changes (a live region would read it out again). */
function say(id, text) {
  const line = $(id);
  if (line.textContent !== (text ?? "")) line.textContent = text ?? "";
}

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

/**
 * The rows of a table, one per item, by key: a row whose content did not change stays as it is (focus, a pressed
 * button), a changed one is made again in place, the others go.
 */
function syncRows(tbody, items, keyOf, signatureOf, make) {
  const existing = new Map([...tbody.children].map((row) => [row.dataset.key, row]));
  let previous = null;
  for (const item of items) {
    const key = String(keyOf(item));
    const signature = signatureOf(item);
    let row = existing.get(key);
    existing.delete(key);
    if (!row || row.dataset.signature !== signature) {
      const fresh = make(item);
      fresh.dataset.key = key;
      fresh.dataset.signature = signature;
      if (row) row.replaceWith(fresh);
      row = fresh;
    }
    const wanted = previous ? previous.nextElementSibling : tbody.firstElementChild;
    if (wanted !== row) tbody.insertBefore(row, wanted);
    previous = row;
  }
  for (const row of existing.values()) row.remove();
}

// Signing in and out.

async function signIn(event) {
  event?.preventDefault();
  const typed = $("credential").value.trim();
  if (typed) credential = typed;
  if (!credential) return;
  const mine = ++session;
  $("sign-in-button").disabled = true;
  try {
    const listing = await request("GET", "rooms");
    const access = await describeCredential();
    if (mine !== session) return;
    sessionStorage.setItem(STORE, credential);
    $("credential").value = "";
    document.body.dataset.signedIn = "true";
    document.body.dataset.access = access;
    $("who").textContent = access === "key" ? "Signed in with the API key: every room." : "Signed in with an admin token: the rooms it grants.";
    $("sign-in").hidden = true;
    $("console").hidden = false;
    $("sign-out").hidden = false;
    say("problem", "");
    $("problem").dataset.kind = "problem";
    showRooms(listing.rooms);
    round = 0;
    refresh(mine);
    selectFromHash();
  } catch (error) {
    if (mine === session) signOut(words(error));
  } finally {
    $("sign-in-button").disabled = false;
  }
}

function signOut(reason) {
  session++;
  clearTimeout(timer);
  timer = null;
  credential = null;
  sessionStorage.removeItem(STORE);
  document.body.dataset.signedIn = "false";
  delete document.body.dataset.access;
  $("console").hidden = true;
  $("sign-in").hidden = false;
  $("sign-out").hidden = true;
  $("who").textContent = "";
  rooms = [];
  closeRoom();
  if (location.hash) history.replaceState(null, "", location.pathname + location.search);
  lastCounters = null;
  node = undefined;
  for (const list of Object.values(series)) list.length = 0;
  for (const id of ["health", "charts"]) $(id).replaceChildren();
  for (const table of document.querySelectorAll("tbody")) table.replaceChildren();
  for (const id of ["rooms-count", "rooms-more", "nodes-note", "endpoints-note", "failed-note", "webhooks-notice"]) say(id, "");
  say("problem", typeof reason === "string" ? reason : "");
  $("problem").dataset.kind = reason === SIGNED_OUT ? "info" : "problem";
  $("credential").focus();
}

/** "key" when the credential may list the webhook endpoints (only the API key may), else "token". */
async function describeCredential() {
  try {
    await request("GET", "webhooks");
    return "key";
  } catch (error) {
    if (error.status !== 403) throw error;
    return "token";
  }
}

// The loop: every source is read, each on its own (one that fails says so and does not stop the others). Only one
// loop runs per sign-in; a hidden tab reads nothing until it is shown again.

async function refresh(mine) {
  clearTimeout(timer);
  if (mine !== session) return;
  if (document.hidden) {
    timer = setTimeout(() => refresh(mine), EVERY_MS);
    return;
  }
  const started = performance.now();
  const slow = round++ % SLOW_EVERY === 0;
  // Health first: it says whether this is a cluster (and which node answers), which the others go by.
  const health = await Promise.allSettled([loadHealth(mine)]);
  const jobs = [loadMetrics(mine), loadRoom(selected)];
  if (slow) jobs.push(loadRooms(mine), loadNodes(mine), loadWebhooks(mine));
  const results = [...health, ...await Promise.allSettled(jobs)];
  if (mine !== session) return;
  const failures = results.filter((r) => r.status === "rejected").map((r) => r.reason);
  const unauthorized = failures.find((f) => f?.status === 401);
  if (unauthorized) return signOut(words(unauthorized));
  say("problem", failures.length ? words(failures[0]) : "");
  timer = setTimeout(() => refresh(mine), Math.max(250, EVERY_MS - (performance.now() - started)));
}

addEventListener("visibilitychange", () => { if (!document.hidden && credential && document.body.dataset.signedIn === "true") refresh(session); });

async function loadHealth(mine) {
  const response = await fetch(url("../healthz"), { cache: "no-store" });
  const health = await response.json();
  if (mine !== session) return;
  const rows = [
    ["Status", health.status], ["Protocol", health.protocol], ["Up for", duration(health.uptimeSeconds)],
    ["Connections", health.connections], ["Rooms loaded", health.rooms],
  ];
  if (health.cluster) {
    rows.push(["Node", health.cluster.node], ["Redis", health.cluster.redis], ["Rooms owned", health.cluster.ownedRooms]);
  }
  $("health").replaceChildren(...rows.flatMap(([k, v]) => [element("dt", { textContent: k }), element("dd", { textContent: String(v), dataset: { field: k } })]));
  $("health").dataset.status = health.status;
  const answering = health.cluster?.node ?? null;
  if (node !== undefined && node !== answering) {
    // Another node answered (a load balancer in front): its counters are not this one's. Start the charts again.
    for (const list of Object.values(series)) list.length = 0;
    lastCounters = null;
  }
  node = answering;
}

async function loadMetrics(mine) {
  const response = await fetch(url("../metrics"), { headers: { Authorization: `Bearer ${credential}` }, cache: "no-store" });
  if (!response.ok) {
    const body = await response.json().catch(() => null);
    throw new APIError(response.status, body?.error?.code ?? "metrics", body?.error?.message ?? "the metrics could not be read");
  }
  const text = await response.text();
  if (mine !== session) return;
  const now = performance.now() / 1000;
  const totals = sample(text);
  series.connections.push(totals.livecontrols_connections ?? 0);
  series.rooms.push(totals.livecontrols_rooms ?? 0);
  const counters = { t: now, intents: totals.livecontrols_intents_total ?? 0, deliveries: totals.livecontrols_patch_deliveries_total ?? 0 };
  if (lastCounters && counters.t > lastCounters.t && counters.intents >= lastCounters.intents && counters.deliveries >= lastCounters.deliveries) {
    const seconds = counters.t - lastCounters.t;
    series.intents.push((counters.intents - lastCounters.intents) / seconds);
    series.deliveries.push((counters.deliveries - lastCounters.deliveries) / seconds);
  }
  lastCounters = counters; // (counters that went down: the server restarted; the rates start again from here)
  for (const list of Object.values(series)) if (list.length > 60) list.splice(0, list.length - 60);
  const of = node ? ` (node ${node})` : "";
  $("charts").replaceChildren(
    chart("Connections" + of, series.connections, "connections"),
    chart("Rooms loaded" + of, series.rooms, "rooms"),
    chart("Intents per second" + of, series.intents, "intents"),
    chart("Fan-out per second" + of, series.deliveries, "fan-out", "patch messages sent to members"),
  );
}

async function loadRooms(mine) {
  const { rooms: list } = await request("GET", "rooms");
  if (mine === session) showRooms(list);
}

function showRooms(list) {
  rooms = list;
  const inCluster = rooms.some((r) => "node" in r);
  for (const cell of document.querySelectorAll(".node-col")) cell.hidden = !inCluster;
  const query = $("room-search").value.trim().toLowerCase();
  const matching = query ? rooms.filter((r) => r.room.toLowerCase().includes(query) || r.template.toLowerCase().includes(query)) : rooms;
  const shown = matching.slice(0, ROOMS_SHOWN);
  say("rooms-count", query ? `(${matching.length} of ${rooms.length})` : `(${rooms.length})`);
  say("rooms-more", matching.length > shown.length ? `${matching.length - shown.length} more: narrow the search.` : (matching.length ? "" : "No room matches."));
  syncRows($("rooms").querySelector("tbody"), shown, (r) => r.room,
    (r) => JSON.stringify([r.template, r.version, r.members, r.loaded, r.node, inCluster]), (r) => {
      const open = element("button", { type: "button", className: "link", textContent: r.room, dataset: { room: r.room } });
      open.addEventListener("click", () => select(r.room, { focus: true }));
      const row = element("tr", { dataset: { room: r.room } },
        element("td", {}, open), element("td", { textContent: r.template }), element("td", { className: "num", textContent: r.version }),
        element("td", { className: "num", textContent: r.members }), element("td", { textContent: r.loaded ? "yes" : "stored" }));
      if (inCluster) row.append(element("td", { textContent: r.node ?? "–" }));
      return row;
    });
  markSelected();
}

function markSelected() {
  for (const row of $("rooms").querySelectorAll("tbody tr")) row.toggleAttribute("aria-current", row.dataset.room === selected?.name);
}

async function loadNodes(mine) {
  if (node === null || node === undefined) { $("nodes").hidden = true; return; }
  $("nodes").hidden = false;
  const body = $("nodes").querySelector("tbody");
  if (document.body.dataset.access !== "key") {
    say("nodes-note", "Only the API key lists the nodes; the rooms' owners show in the room list.");
    body.replaceChildren();
    return;
  }
  const { nodes } = await request("GET", "nodes");
  if (mine !== session) return;
  say("nodes-note", `${nodes.length} node${nodes.length === 1 ? "" : "s"} running.`);
  syncRows(body, nodes, (n) => n.node, (n) => JSON.stringify(n), (n) => element("tr", { dataset: { node: n.node } },
    element("td", { textContent: n.node + (n.self ? " (answering)" : "") }), element("td", { className: "num", textContent: n.rooms })));
}

// One room: its live state and members (GET the room), its recent patches (GET patches after the last one seen).

function selectFromHash() {
  const name = new URLSearchParams(location.hash.slice(1)).get("room");
  if (name && name !== selected?.name) select(name);
}

function closeRoom() {
  selected = null;
  $("room").hidden = true;
  for (const id of ["room-name", "room-meta", "room-notice"]) say(id, "");
  $("room-state").replaceChildren();
  $("room-patches").replaceChildren();
  $("room").querySelector("tbody").replaceChildren();
}

async function select(name, { focus = false } = {}) {
  if (new URLSearchParams(location.hash.slice(1)).get("room") !== name) history.replaceState(null, "", "#" + new URLSearchParams({ room: name }));
  closeRoom();
  const current = { name, epoch: null, version: null, patches: [], seen: null, history: "unknown", loading: null };
  selected = current;
  $("room").hidden = false;
  say("room-name", name);
  markSelected();
  if (focus) $("room-title").focus(); // on a phone the room is below the list: take the reader there
  try {
    await loadRoom(current);
  } catch (error) {
    if (selected === current) say("room-notice", words(error));
  }
}

/** One read of the room at a time (the loop, a selection and a disconnect may all ask): later askers share it. */
function loadRoom(current) {
  if (!current) return Promise.resolve();
  current.loading ??= readRoom(current).finally(() => { current.loading = null; });
  return current.loading;
}

async function readRoom(current) {
  let room;
  try {
    room = await request("GET", "rooms/" + encodeURIComponent(current.name));
  } catch (error) {
    if (selected !== current) return;
    if (error.status === 404 || error.status === 403) {
      // Gone (deleted) or not granted: nothing of it stays on the screen, as if it had never been shown.
      say("room-notice", words(error));
      say("room-meta", "");
      $("room-state").replaceChildren();
      $("room").querySelector("tbody").replaceChildren();
      $("room-patches").replaceChildren();
      Object.assign(current, { epoch: null, version: null, patches: [], seen: null, history: "unknown", stateText: null });
      return;
    }
    throw error;
  }
  if (selected !== current) return;
  say("room-notice", current.acted ?? "");
  if (current.epoch !== room.epoch) {
    // A new epoch (the room was deleted and made again, or started over): its history starts again.
    Object.assign(current, { epoch: room.epoch, patches: [], seen: null, history: "unknown" });
    $("room-patches").replaceChildren();
  }
  current.version = room.version;
  const owner = rooms.find((r) => r.room === current.name)?.node;
  say("room-meta", `template ${room.template} · version ${room.version} · epoch ${room.epoch} · `
    + `${room.members.length} member${room.members.length === 1 ? "" : "s"}` + (owner ? ` · owned by ${owner}` : ""));
  showMembers(current, room.members);
  const text = JSON.stringify(room.state, null, 2);
  if (text !== current.stateText) {
    current.stateText = text;
    $("room-state").textContent = text;
  }
  await loadPatches(current);
}

function showMembers(current, members) {
  const body = $("room").querySelector("tbody");
  if (!members.length) {
    syncRows(body, [null], () => "nobody", () => "", () => element("tr", {}, element("td", { colSpan: 5, className: "note", textContent: "Nobody is in the room." })));
    return;
  }
  syncRows(body, members, (m) => m.session, (m) => JSON.stringify([m.name, m.user, m.roles, m.holding, m.editing]), (m) => {
    const who = m.name ?? m.session;
    const out = element("button", { type: "button", textContent: "Disconnect", dataset: { session: m.session } });
    out.setAttribute("aria-label", `Disconnect ${who}`);
    // Two steps: the first press asks, the second (within 5 s) disconnects.
    out.addEventListener("click", () => {
      if (out.dataset.confirm !== "true") {
        out.dataset.confirm = "true";
        out.textContent = "Really disconnect?";
        out.setAttribute("aria-label", `Really disconnect ${who}? Press again to disconnect`);
        out.resetTimer = setTimeout(() => {
          out.dataset.confirm = "false";
          out.textContent = "Disconnect";
          out.setAttribute("aria-label", `Disconnect ${who}`);
        }, 5000);
        return;
      }
      clearTimeout(out.resetTimer);
      disconnect(current, m);
    });
    const activity = [...m.holding.map((c) => "holding " + c), ...m.editing.map((e) => "editing " + (typeof e === "string" ? e : JSON.stringify(e)))];
    return element("tr", { dataset: { session: m.session } },
      element("td", { textContent: (m.name ?? "(no name)") + (m.user ? ` · ${m.user}` : "") }),
      element("td", { className: "mono", textContent: m.session }), element("td", { textContent: m.roles.join(", ") || "–" }),
      element("td", { textContent: activity.join(", ") || "–" }), element("td", {}, out));
  });
}

async function disconnect(current, member) {
  const who = member.name ?? member.session;
  try {
    await request("DELETE", `rooms/${encodeURIComponent(current.name)}/members/${encodeURIComponent(member.session)}`);
    current.acted = `Disconnected ${who} (its connection closed with 4001; it left every room it was in).`;
  } catch (error) {
    current.acted = `Could not disconnect ${who}: ${words(error)}`;
  }
  if (selected === current) say("room-notice", current.acted);
  await loadRoom(current).catch(() => {});
}

/** The recent patches: up to the last 50 the room keeps at first, then each new one. */
async function loadPatches(current) {
  if (current.history === "none") return;
  const path = `rooms/${encodeURIComponent(current.name)}/patches`;
  if (current.seen == null) {
    for (const back of [PATCHES_KEPT, 20, 10, 5, 1]) {
      const after = Math.max(0, current.version - back);
      try {
        const answer = await request("GET", path, { query: { after, epoch: current.epoch } });
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
    if (selected === current) {
      $("room-patches").replaceChildren(element("li", { className: "note", textContent: "This room keeps no patches (its template's historyLimit is 0)." }));
    }
    return;
  }
  if (current.version <= current.seen) return;
  try {
    addPatches(current, (await request("GET", path, { query: { after: current.seen, epoch: current.epoch } })).patches);
  } catch (error) {
    if (error.status !== 409) throw error;
    // Fell behind what the room keeps, or a new epoch: start again from the newest.
    Object.assign(current, { seen: null, patches: [], history: "unknown" });
    if (selected === current) $("room-patches").replaceChildren();
  }
}

/** Adds the patches past the last one shown, newest first (an open one stays open). */
function addPatches(current, patches) {
  if (selected !== current) return;
  const list = $("room-patches");
  list.querySelector(".note")?.remove();
  for (const p of patches) {
    if (current.seen !== null && p.version <= current.seen) continue; // (two reads of the same versions: shown once)
    current.seen = Math.max(current.seen ?? 0, p.version);
    current.patches.unshift(p);
    const summary = element("summary", {}, element("strong", { textContent: "v" + p.version }), ` ${cause(p.cause)} · ${p.ops.length} op${p.ops.length === 1 ? "" : "s"}`);
    list.prepend(element("li", { value: p.version, dataset: { version: p.version } },
      element("details", {}, summary, element("pre", { className: "json", textContent: JSON.stringify(p.ops, null, 1) }))));
  }
  current.patches.length = Math.min(current.patches.length, PATCHES_KEPT);
  while (list.children.length > PATCHES_KEPT) list.lastElementChild.remove();
  if (!current.patches.length) list.replaceChildren(element("li", { className: "note", textContent: "No change kept yet." }));
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

async function loadWebhooks(mine) {
  const endpoints = $("webhooks").querySelector('[data-testid="endpoints"] tbody');
  if (document.body.dataset.access === "key") {
    const answer = await request("GET", "webhooks");
    if (mine !== session) return;
    say("endpoints-note", answer.endpoints.length ? "" : "No webhook endpoint is configured.");
    syncRows(endpoints, answer.endpoints, (e) => e.index, (e) => JSON.stringify(e), (e) => element("tr", { dataset: { index: e.index } },
      element("td", { className: "mono", textContent: e.url }), element("td", { textContent: e.events.join(", ") || "every event" }),
      element("td", { className: "num", textContent: e.pending }), element("td", { className: "num", textContent: e.inFlight }),
      element("td", { textContent: e.spilled ? "yes (to the store)" : "no" })));
  } else {
    say("endpoints-note", "Only the API key lists the endpoints.");
    endpoints.replaceChildren();
  }
  const { failed } = await request("GET", "webhooks/failed", { query: { limit: 100 } });
  if (mine !== session) return;
  say("failed-note", failed.length ? "" : "No delivery has failed.");
  syncRows($("webhooks").querySelector('[data-testid="failed"] tbody'), failed, (f) => f.event.id + " " + f.endpoint,
    (f) => JSON.stringify([f.attempts, f.error, f.failedAt]), (f) => {
      const retry = element("button", { type: "button", textContent: "Retry", dataset: { event: f.event.id } });
      retry.setAttribute("aria-label", `Retry ${f.event.type} ${f.event.id}`);
      retry.addEventListener("click", () => retryDelivery(f.event.id));
      return element("tr", { dataset: { event: f.event.id } },
        element("td", {}, element("span", { textContent: f.event.type }), element("br"), element("span", { className: "mono muted", textContent: f.event.id })),
        element("td", { textContent: f.event.room }), element("td", { className: "mono", textContent: f.endpoint }),
        element("td", { className: "num", textContent: f.attempts }), element("td", { textContent: `${f.error} (${new Date(f.failedAt).toLocaleString()})` }),
        element("td", {}, retry));
    });
}

async function retryDelivery(id) {
  const mine = session;
  try {
    const answer = await request("POST", `webhooks/failed/${encodeURIComponent(id)}/retry`);
    say("webhooks-notice", `Event ${id}: ${answer.retried} deliver${answer.retried === 1 ? "y is" : "ies are"} pending again.`);
  } catch (error) {
    say("webhooks-notice", `Could not retry ${id}: ${words(error)}`);
  }
  await loadWebhooks(mine).catch(() => {});
}

function duration(seconds) {
  const s = Number(seconds) || 0;
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

$("sign-in").addEventListener("submit", signIn);
$("sign-out").addEventListener("click", () => signOut(SIGNED_OUT));
$("room-search").addEventListener("input", () => showRooms(rooms));
addEventListener("hashchange", () => { if (credential) selectFromHash(); });
if (credential) signIn(); else $("credential").focus();
