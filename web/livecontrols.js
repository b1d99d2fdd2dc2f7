// LiveControls protocol v1 client: connect, join, keep the room document, apply patches,
// resume after reconnects, and send intents that resolve on `ack` or reject on `error`.
// No dependencies; lift it into your own page. See docs/PROTOCOL.md.

/** Applies RFC 6902 add/remove/replace operations to a JSON document (returns the new document). */
export function applyPatch(doc, ops) {
  for (const op of ops) {
    const tokens = op.path === "" ? [] : op.path.slice(1).split("/").map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
    if (tokens.length === 0) {
      if (op.op === "remove") throw new Error("cannot remove the root");
      doc = structuredClone(op.value);
      continue;
    }
    let parent = doc;
    for (const t of tokens.slice(0, -1)) {
      parent = Array.isArray(parent) ? parent[Number(t)] : Object.hasOwn(parent, t) ? parent[t] : undefined;
      if (parent === undefined || parent === null || typeof parent !== "object") throw new Error(`no parent for ${op.path}`);
    }
    const last = tokens[tokens.length - 1];
    if (Array.isArray(parent)) {
      const i = last === "-" ? parent.length : Number(last);
      if (op.op === "add") parent.splice(i, 0, structuredClone(op.value));
      else if (op.op === "replace") parent[i] = structuredClone(op.value);
      else if (op.op === "remove") parent.splice(i, 1);
      else throw new Error(`unsupported op ${op.op}`);
    } else {
      // Own properties only, defined rather than assigned: a key such as "__proto__" (presence data is the client's)
      // is a key like any other, as JSON.parse makes it.
      if (op.op === "add" || op.op === "replace") {
        if (op.op === "replace" && !Object.hasOwn(parent, last)) throw new Error(`replace: ${op.path} does not exist`);
        Object.defineProperty(parent, last, { value: structuredClone(op.value), writable: true, enumerable: true, configurable: true });
      } else if (op.op === "remove") {
        if (!Object.hasOwn(parent, last)) throw new Error(`remove: ${op.path} does not exist`);
        delete parent[last];
      } else throw new Error(`unsupported op ${op.op}`);
    }
  }
  return doc;
}

/** A client for one room. Events: "status", "state", "patch", "resumed" (the missed patches up to `detail.version`
 * follow), "error", "startedover" (a snapshot of a new epoch). */
export class LiveRoom extends EventTarget {
  /**
   * `WebSocket`: the WebSocket class to connect with — by default the global one as each connection is made (the
   * page's; Node 22's, or Node 20's with --experimental-websocket); or any class with the browser's API. Outside a
   * browser, `url` is required.
   */
  constructor({ url, room = "demo", name = null, template = null, token = null, maxMessageBytes = 65536, WebSocket = null } = {}) {
    super();
    if (typeof (WebSocket ?? globalThis.WebSocket) !== "function") throw new TypeError("no WebSocket class: pass one as the WebSocket option");
    this.WebSocket = WebSocket;
    // A token travels in the WebSocket URL (`/ws?token=…`), which browsers can set, unlike headers.
    this.url = (url ?? LiveRoom.defaultURL()) + (token ? `?token=${encodeURIComponent(token)}` : "");
    this.room = room;
    this.name = name;
    this.template = template;
    this.session = null;
    /** The server's clock minus this page's, in ms, from the last `welcome` (0 before it). */
    this.serverClockOffset = 0;
    this.epoch = null;
    this.shownEpoch = null; // the epoch of the state shown (kept when a gap drops `epoch` to ask for a snapshot)
    this.version = null;
    this.state = null;
    this.status = "connecting";
    this.pending = new Map();
    this.nextID = 1;
    this.retry = 0;
    this.joinRetry = 0;
    this.joinTimer = null;
    this.closedByUser = false;
    this.presenceData = {};
    this.maxMessageBytes = maxMessageBytes;
    this.connect();
  }

  /** ws(s)://<this page's host>/ws */
  static defaultURL() {
    if (typeof location === "undefined") throw new TypeError("no page to take the server's address from: pass url");
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    return `${scheme}//${location.host}/ws`;
  }

  connect() {
    this.setStatus("connecting");
    const ws = new (this.WebSocket ?? globalThis.WebSocket)(this.url, "livecontrols.v1");
    this.ws = ws;
    ws.onmessage = (event) => this.receive(JSON.parse(event.data));
    ws.onclose = (event) => {
      if (this.ws !== ws) return;
      clearTimeout(this.joinTimer);
      // 1009: a message of ours was larger than the server takes (its --max-message-bytes is below maxMessageBytes).
      const closed = event.code === 1009
        ? Object.assign(new Error("a message was larger than the server accepts"), { code: "too_large" })
        : Object.assign(new Error("connection closed"), { code: "disconnected" });
      for (const { reject } of this.pending.values()) reject(closed);
      this.pending.clear();
      if (event.code === 1009) this.emit("error", { type: "error", code: "too_large", message: closed.message });
      if (event.code === LiveRoom.disconnectedCode) {
        // The server's operator disconnected this session (server API): do not come back on our own.
        this.setStatus("removed");
        return;
      }
      // Out of the room for good (its token expired): a reconnect would be refused with the same token.
      if (this.status === "expired") return;
      this.setStatus("closed");
      if (this.closedByUser) return;
      // Backoff up to 4 s (jittered): a server back after a restart is found within seconds.
      const delay = Math.min(4000, 250 * 2 ** this.retry++) * (0.75 + Math.random() / 2);
      this.reconnectTimer = setTimeout(() => this.connect(), delay);
    };
  }

  /** While disconnected: tries again now instead of at the end of the backoff (a "Retry now" button, the network back). */
  reconnectNow() {
    if (this.status !== "closed" || this.closedByUser) return;
    clearTimeout(this.reconnectTimer);
    this.connect();
  }

  close() { this.closedByUser = true; clearTimeout(this.reconnectTimer); this.ws?.close(1000); }

  send(message) { if (this.ws?.readyState === LiveRoom.OPEN) this.ws.send(JSON.stringify(message)); }

  join() {
    const msg = { type: "join", id: LiveRoom.joinID, room: this.room };
    if (this.name) msg.name = this.name;
    if (this.template) msg.template = this.template;
    // `session`: the one this state was seen as (a room whose members see different states — a poll's ballots — needs it).
    if (this.epoch !== null && this.version !== null) msg.since = { epoch: this.epoch, version: this.version, session: this.seenAs };
    this.send(msg);
  }

  /** Sends an intent; resolves with the ack, rejects with an Error carrying `code` on `error`. */
  intent(control, intent, args) {
    const msg = { type: "intent", room: this.room, control, intent };
    if (args !== undefined) msg.args = args;
    return this.request(msg);
  }

  /** Sends `message` with a fresh id; resolves with its `ack`, rejects with an Error carrying `code` on `error`. */
  request(message) {
    const id = `c${this.nextID++}`;
    return new Promise((resolve, reject) => {
      if (this.ws?.readyState !== LiveRoom.OPEN) {
        reject(Object.assign(new Error("not connected"), { code: "disconnected" }));
        return;
      }
      const text = JSON.stringify({ ...message, id });
      // The server closes the connection (1009) on a message over its limit: refuse it here instead, nothing sent.
      const bytes = new TextEncoder().encode(text).length;
      if (bytes > this.maxMessageBytes) {
        reject(Object.assign(new Error(`the message would take ${bytes} bytes; the server takes at most ${this.maxMessageBytes}`), { code: "too_large" }));
        return;
      }
      this.pending.set(id, { resolve, reject });
      this.ws.send(text);
    });
  }

  /**
   * The room's members as people: `[{user, name, sessions: [session, …], you}]`, the sessions of one `user` (the
   * token's `sub`) together, in the order of each person's first session; a session without a user alone. `you`: one
   * of the sessions is this page's.
   */
  people() {
    const people = new Map();
    for (const [session, member] of Object.entries(this.state?.presence ?? {})) {
      const key = member.user === null || member.user === undefined ? `s:${session}` : `u:${member.user}`;
      let person = people.get(key);
      if (!person) people.set(key, (person = { user: member.user ?? null, name: member.name ?? null, sessions: [], you: false }));
      person.sessions.push(session);
      person.name ??= member.name ?? null;
      if (session === this.session) person.you = true;
    }
    return [...people.values()];
  }

  /**
   * Hands `event` (any JSON) to the room's other members as is: not state, not stored (cursors, reactions, "typing").
   * Resolves with the ack, rejects with an Error carrying `code` (`rate_limited`, `too_large`, `forbidden`…); while
   * not joined, rejects with `disconnected` (a broadcast is not kept for later).
   */
  broadcast(event) {
    if (this.status !== "open") return Promise.reject(Object.assign(new Error("not joined"), { code: "disconnected" }));
    return this.request({ type: "broadcast", room: this.room, event });
  }

  /**
   * Takes back this user's last change in the room (its other devices' too): what it changed goes back, what others
   * changed since stays. Resolves with the ack; rejects with an Error carrying `code`: `conflict` (someone changed that
   * part since: `by` is `{session, name, user}` when a member did), `nothing_to_undo`…; while not joined, `disconnected`.
   */
  undo() { return this.takeBack("undo"); }

  /** Takes back this user's last undo in the room (as `undo`). */
  redo() { return this.takeBack("redo"); }

  takeBack(type) {
    if (this.status !== "open") return Promise.reject(Object.assign(new Error("not joined"), { code: "disconnected" }));
    return this.request({ type, room: this.room });
  }

  /**
   * Sets fields of this session's presence `data` (a field set to null is removed); resolves with the `ack`, rejects
   * like `intent`. What the server accepts is kept here too: after a reconnect (a new session, with empty data)
   * the client sends it again. A refused update is forgotten (it would be refused again).
   */
  setPresence(data) {
    const before = {};
    for (const [key, value] of Object.entries(data)) {
      before[key] = this.presenceData[key];
      if (value === null) delete this.presenceData[key]; else this.presenceData[key] = value;
    }
    if (this.status !== "open") return Promise.resolve(null); // sent with the rest after the (re)join
    return this.request({ type: "presence", room: this.room, data }).catch((error) => {
      if (error.code !== "disconnected") {
        // Undo only this update's keys, and only those nothing has set since.
        for (const [key, value] of Object.entries(data)) {
          if ((this.presenceData[key] ?? null) !== value) continue;
          if (before[key] === undefined) delete this.presenceData[key]; else this.presenceData[key] = before[key];
        }
      }
      throw error;
    });
  }

  /** Claims a control (`target` "*") or a part of it ("account.email") while this session edits it. */
  claim(control, target = "*") { return this.request({ type: "claim", room: this.room, control, target }); }

  /** Gives a claim up (`reason` "blur" when its field lost focus, else "release"). */
  unclaim(control, target = "*", reason = "release") { return this.request({ type: "unclaim", room: this.room, control, target, reason }); }

  /** This page's clock (ms since 1970, as `Date.now()`) at a server time — a toggle's `holding.until`. */
  localTime(serverTime) {
    return serverTime - this.serverClockOffset;
  }

  /** After a (re)join: the presence data this client keeps, sent again for the session now in the room. */
  restorePresence() {
    if (Object.keys(this.presenceData).length > 0) this.request({ type: "presence", room: this.room, data: this.presenceData }).catch(() => {});
  }

  receive(msg) {
    switch (msg.type) {
      case "welcome":
        this.session = msg.session;
        // Server time minus ours (ms): moments in states (a toggle's holding.until) are in server time.
        if (Number.isInteger(msg.serverTime)) this.serverClockOffset = msg.serverTime - Date.now();
        this.join();
        break;
      case "snapshot":
        // Another epoch than the one this page showed: the room started over (the server kept nothing of it, or
        // its template changed), so what was shown before is gone — not a resumption.
        if (this.shownEpoch !== null && msg.epoch !== this.shownEpoch) this.emit("startedover", { epoch: msg.epoch });
        this.shownEpoch = msg.epoch;
        this.seenAs = this.session;
        this.epoch = msg.epoch;
        this.version = msg.version;
        this.state = msg.state;
        this.retry = 0;
        this.joinRetry = 0;
        this.setStatus("open");
        this.emit("state", { reason: "snapshot" });
        this.restorePresence();
        break;
      case "resumed":
        this.seenAs = this.session;
        this.retry = 0;
        this.joinRetry = 0;
        this.emit("resumed", msg); // the missed patches up to msg.version follow
        this.setStatus("open");
        this.restorePresence();
        break;
      case "patch":
        if (msg.epoch !== this.epoch || msg.version !== this.version + 1) {
          // A gap: ask for a fresh snapshot rather than show a wrong state.
          this.epoch = this.version = null;
          this.join();
          return;
        }
        this.state = applyPatch(this.state, msg.ops);
        this.version = msg.version;
        this.emit("patch", msg);
        this.emit("state", { reason: "patch", patch: msg });
        break;
      case "broadcast":
        if (msg.room === this.room) this.emit("broadcast", { from: msg.from, name: msg.name ?? null, event: msg.event });
        break;
      case "undoable":
        if (msg.room !== this.room) break;
        this.canUndo = msg.undo;
        this.canRedo = msg.redo;
        this.emit("undoable", { undo: msg.undo, redo: msg.redo });
        break;
      case "ack":
        this.pending.get(msg.id)?.resolve(msg);
        this.pending.delete(msg.id);
        break;
      case "error": {
        const err = Object.assign(new Error(msg.message), { code: msg.code }, msg.reason === undefined ? {} : { reason: msg.reason },
          msg.by === undefined ? {} : { by: msg.by });
        if (msg.id === LiveRoom.joinID) {
          // The join was refused. A passing condition (the room changing owner, too many messages, too many
          // rooms loaded) is retried with backoff; anything else stands until the page changes something.
          this.emit("error", msg);
          if (LiveRoom.retriedJoinErrors.has(msg.code)) {
            const delay = Math.min(10000, 250 * 2 ** this.joinRetry++) * (0.75 + Math.random() / 2);
            this.joinTimer = setTimeout(() => this.join(), delay);
          } else {
            this.setStatus("refused");
          }
        } else if (msg.id === undefined && msg.code === "unavailable" && msg.room === this.room) {
          // The room stopped on the server (saving a change failed): intents still waiting were not applied,
          // and the room is joined again (it loads from the server's store; `since` resumes from here).
          this.emit("error", msg);
          for (const { reject } of this.pending.values()) reject(err);
          this.pending.clear();
          clearTimeout(this.joinTimer);
          this.setStatus("connecting");
          const delay = Math.min(10000, 250 * 2 ** this.joinRetry++) * (0.75 + Math.random() / 2);
          this.joinTimer = setTimeout(() => this.join(), delay);
        } else if (msg.id === undefined && msg.room === this.room && LiveRoom.leavingErrors.has(msg.code)) {
          // Out of the room for good: it was deleted on the server (a rejoin would make it anew), or the token expired
          // (a rejoin needs a new one). Nothing we were waiting for will be answered.
          this.emit("error", msg);
          for (const { reject } of this.pending.values()) reject(err);
          this.pending.clear();
          clearTimeout(this.joinTimer);
          if (msg.code === "room_deleted") this.epoch = this.version = null;
          this.setStatus(LiveRoom.leavingErrors.get(msg.code));
        } else if (msg.id !== undefined && this.pending.has(msg.id)) {
          this.pending.get(msg.id).reject(err);
          this.pending.delete(msg.id);
        } else {
          this.emit("error", msg);
        }
        break;
      }
    }
  }

  setStatus(status) {
    this.status = status;
    this.emit("status", { status });
  }

  emit(type, detail) { this.dispatchEvent(new CustomEvent(type, { detail })); }
}

/** A WebSocket's `readyState` when open (the same in every implementation of the API). */
LiveRoom.OPEN = 1;
/** The request id of joins (intents use `c1`, `c2`, …). */
LiveRoom.joinID = "join";
/** The close code of a session the server API disconnected (docs/PROTOCOL.md): no automatic reconnect. */
LiveRoom.disconnectedCode = 4001;
/** Errors about the room (no id) that take this session out of it for good, with the status each leaves. */
LiveRoom.leavingErrors = new Map([["room_deleted", "deleted"], ["token_expired", "expired"]]);
/** Join refusals that pass on their own: the join is sent again after a backoff. */
LiveRoom.retriedJoinErrors = new Set(["unavailable", "rate_limited", "room_limit"]);
