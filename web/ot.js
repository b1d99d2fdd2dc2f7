// Shared text editing for a `text` control (docs/PROTOCOL.md, "text"): operational transformation as ot.js does it,
// against the server's `splice {at, delete, insert, base}`. Offsets are Unicode scalar values (code points), never
// UTF-16 units: a string is handled as `Array.from(string)`.
//
//   import { SharedTextEditor } from "./ot.js";
//   const editor = new SharedTextEditor(room, "notes");
//   editor.addEventListener("change", (e) => { textarea.value = editor.text; });   // e.detail.op: how it moved
//   textarea.addEventListener("input", () => editor.update(textarea.value));

/** An edit of a whole text: retain n, insert a string, delete n — in order, over every code point of the text. */
export class TextOperation {
  constructor() {
    this.ops = []; // numbers > 0 retain, numbers < 0 delete, strings insert
    this.baseLength = 0;
    this.targetLength = 0;
  }

  /** The edit of a text of `length` code points that deletes `del` at `at` and inserts `insert` there. */
  static splice(length, at, del, insert) {
    return new TextOperation().retain(at).insert(insert).delete(del).retain(length - at - del);
  }

  /** The smallest edit (one splice over what differs) from `from` to `to` (code point arrays). */
  static diff(from, to) {
    let start = 0;
    while (start < from.length && start < to.length && from[start] === to[start]) start++;
    let end = 0;
    while (end < from.length - start && end < to.length - start && from[from.length - 1 - end] === to[to.length - 1 - end]) end++;
    return TextOperation.splice(from.length, start, from.length - start - end, to.slice(start, to.length - end).join(""));
  }

  retain(n) {
    if (n <= 0) return this;
    this.baseLength += n;
    this.targetLength += n;
    const last = this.ops.length - 1;
    if (typeof this.ops[last] === "number" && this.ops[last] > 0) this.ops[last] += n; else this.ops.push(n);
    return this;
  }

  insert(s) {
    if (s === "") return this;
    this.targetLength += Array.from(s).length;
    const ops = this.ops, last = ops.length - 1;
    if (typeof ops[last] === "string") ops[last] += s;
    else if (typeof ops[last] === "number" && ops[last] < 0) {
      // An insert next to a delete goes first (one normal form).
      if (typeof ops[last - 1] === "string") ops[last - 1] += s; else ops.splice(last, 0, s);
    } else ops.push(s);
    return this;
  }

  delete(n) {
    if (n <= 0) return this;
    this.baseLength += n;
    const last = this.ops.length - 1;
    if (typeof this.ops[last] === "number" && this.ops[last] < 0) this.ops[last] -= n; else this.ops.push(-n);
    return this;
  }

  get isNoop() { return this.ops.every((op) => typeof op === "number" && op > 0); }

  /** The code points it makes of `text` (code points, `baseLength` of them). */
  apply(text) {
    if (text.length !== this.baseLength) throw new Error(`an edit of ${this.baseLength} code points applied to ${text.length}`);
    const out = [];
    let i = 0;
    for (const op of this.ops) {
      if (typeof op === "string") out.push(...Array.from(op));
      else if (op > 0) { for (let k = 0; k < op; k++) out.push(text[i + k]); i += op; }
      else i -= op;
    }
    return out;
  }

  /** The edit as splices applied one after another: [{at, delete, insert}]. */
  splices() {
    const out = [];
    let position = 0, pending = null;
    for (const op of this.ops) {
      if (typeof op === "number" && op > 0) {
        if (pending) out.push(pending);
        pending = null;
        position += op;
      } else if (typeof op === "string") {
        pending ??= { at: position, delete: 0, insert: "" };
        pending.insert += op;
        position += Array.from(op).length;
      } else {
        pending ??= { at: position, delete: 0, insert: "" };
        pending.delete -= op;
      }
    }
    if (pending) out.push(pending);
    return out;
  }

  /** Where `index` (a position in the text it applies to) is in the text it makes (a cursor moved by someone's edit). */
  transformIndex(index) {
    let from = 0, to = 0;
    for (const op of this.ops) {
      if (from > index) break;
      if (typeof op === "string") to += Array.from(op).length;
      else if (op > 0) { const n = Math.min(op, index - from); from += op; to += n; if (n < op) break; }
      else { from -= op; if (from > index) break; }
    }
    return to;
  }

  /** `a` and `b` are edits of one text: returns [a', b'] with b then a' making what a then b' makes; where both insert at
   * one place, `a`'s insert comes first (as the server does with a client's splice against what it applied before). */
  static transform(a, b) {
    if (a.baseLength !== b.baseLength) throw new Error("transform of edits of different texts");
    const a2 = new TextOperation(), b2 = new TextOperation();
    const x = a.ops.slice(), y = b.ops.slice();
    let i = 0, j = 0, c1 = x[0], c2 = y[0];
    const next1 = () => { c1 = x[++i]; }, next2 = () => { c2 = y[++j]; };
    while (c1 !== undefined || c2 !== undefined) {
      if (typeof c1 === "string") { a2.insert(c1); b2.retain(Array.from(c1).length); next1(); continue; }
      if (typeof c2 === "string") { a2.retain(Array.from(c2).length); b2.insert(c2); next2(); continue; }
      if (c1 === undefined || c2 === undefined) throw new Error("edits of different lengths");
      const n = Math.abs(c1), m = Math.abs(c2), k = Math.min(n, m);
      if (c1 > 0 && c2 > 0) { a2.retain(k); b2.retain(k); }
      else if (c1 < 0 && c2 > 0) a2.delete(k);
      else if (c1 > 0 && c2 < 0) b2.delete(k);
      // both delete: nothing left to do for that stretch
      if (n > m) { c1 = Math.sign(c1) * (n - m); next2(); } else if (n < m) { c2 = Math.sign(c2) * (m - n); next1(); } else { next1(); next2(); }
    }
    return [a2, b2];
  }
}

/**
 * One `text` control of a LiveRoom, edited here while others edit it too. Its text is the server's (at revision `rev`)
 * with this page's edits not yet applied there: the first sent as a splice, the others waiting their turn. Edits the
 * server applied meanwhile come with their patch (`cause.splices`); the waiting edits are transformed against them,
 * so nothing typed here or elsewhere is lost and every page ends with the server's text. Events: `change` (the text
 * changed by someone else's edit; `detail.op` moves a cursor: `op.transformIndex(i)`), `error` (a refusal).
 */
export class SharedTextEditor extends EventTarget {
  constructor(room, control) {
    super();
    this.room = room;
    this.control = control;
    this.server = null; // code points, at `rev`
    this.rev = 0;
    this.pending = []; // TextOperations, each on the text the ones before it make; the first is in flight when `sent`
    this.sent = null; // the splice in flight: {id, session, unsure} (unsure: the connection dropped, or its ack
    //                  said a version this page has not seen — applied or not, the next state tells)
    this.backoff = null;
    this.listeners = [
      ["state", (e) => { if (e.detail.reason === "snapshot") this.resynced(); }],
      ["patch", (e) => this.patched(e.detail)],
      ["resumed", (e) => this.resumed(e.detail)],
      // (After the room's own handling of what came: a snapshot's `open` comes before its `state`.)
      ["status", () => setTimeout(() => this.flush(), 0)],
    ];
    for (const [type, listener] of this.listeners) room.addEventListener(type, listener);
    if (room.state) this.resynced();
  }

  /** Stops following the room. */
  dispose() {
    for (const [type, listener] of this.listeners) this.room.removeEventListener(type, listener);
    clearTimeout(this.backoff);
  }

  /** The text as this page shows it. */
  get text() { return (this.pending.reduce((t, op) => op.apply(t), this.server ?? [])).join(""); }

  /** This page's text became `value` (a textarea's input): the difference is this page's edit. */
  update(value) {
    if (this.server === null) return;
    const op = TextOperation.diff(Array.from(this.text), Array.from(value));
    if (op.isNoop) return;
    this.pending.push(op);
    this.flush();
  }

  /** Sends the waiting edits: composed into one (a burst of typing is one splice), one splice at a time. */
  flush() {
    if (this.sent || this.pending.length === 0 || this.room.status !== "open" || this.backoff || this.server === null) return;
    // Composed, the edits may be several splices (someone's edit landed inside them): sent one by one.
    this.pending = this.split(this.pending.reduce((all, op) => compose(all, op)));
    if (this.pending.length === 0) return;
    const [splice] = this.pending[0].splices();
    // The request's id (LiveRoom numbers them c1, c2, …): its patch's `cause.id`, so a late patch of an edit given up
    // in a snapshot is never taken for the one in flight.
    const sent = this.sent = { id: `c${this.room.nextID}`, session: this.room.session, unsure: false };
    this.room.intent(this.control, "splice", { ...splice, base: this.rev }).then((ack) => {
      if (this.sent !== sent) return; // settled already (its patch, or a snapshot)
      if (ack.version > this.room.version) {
        // Applied, but its patch has not reached this page (a slow reader's dropped patches): the snapshot on its way
        // has it.
        sent.unsure = true;
        return;
      }
      // No patch for it before its ack: it changed nothing by the time it arrived (someone's edit took it all).
      this.pending.shift();
      this.sent = null;
      this.flush();
    }, (error) => {
      if (this.sent !== sent) return;
      if (error.code === "disconnected") {
        // Lost with the connection, applied or not: a resume replays it if it was (its cause names the former
        // session); our join's patch ends the replay. A snapshot instead settles it in `resynced`.
        sent.unsure = true;
        return;
      }
      this.sent = null;
      this.dispatchEvent(new CustomEvent("error", { detail: error }));
      if (["rate_limited", "overloaded", "unavailable"].includes(error.code)) {
        // Too fast, or the room busy: wait a moment, then send what is waiting then.
        this.backoff = setTimeout(() => { this.backoff = null; this.flush(); }, 500);
        return;
      }
      // Refused for good (too long, not allowed, made on a revision the server no longer keeps): the refused edit is
      // given up, and the others are redone on the server's text.
      const refused = this.pending.shift();
      if (error.code === "conflict" && this.pending.length === 0) this.pending = [refused]; // (only stale: redo it)
      const moved = this.rebase();
      this.dispatchEvent(new CustomEvent("change", { detail: { op: moved } }));
      setTimeout(() => this.flush(), 0);
    });
  }

  /** An edit as single splices (the first waiting one may have become several). */
  split(op) {
    const out = [];
    let length = op.baseLength;
    for (const s of op.splices()) {
      out.push(TextOperation.splice(length, s.at, s.delete, s.insert));
      length += Array.from(s.insert).length - s.delete;
    }
    return out;
  }

  /** The waiting edits redone on the server's text as it is (after a refusal): returns how the page's text moved. */
  rebase() {
    const shown = Array.from(this.text);
    const ours = this.pending.length ? this.pending.reduce((all, op) => compose(all, op)) : null;
    this.pending = ours && !ours.isNoop ? [ours] : [];
    return TextOperation.diff(shown, Array.from(this.text));
  }

  /** A snapshot: the server's text anew. Our waiting edits are transformed against what changed and sent again. */
  resynced() {
    const state = this.room.state?.controls?.[this.control];
    if (!state) return;
    const text = Array.from(state.lines.join("\n"));
    if (this.server === null) {
      this.server = text;
      this.rev = state.rev;
      return;
    }
    const shown = Array.from(this.text);
    // The edit in flight counts as applied (the snapshot has it if it was; if not, the merge takes it out, and its
    // patch puts it back if it lands later): never sent twice.
    if (this.sent) {
      this.server = this.pending.shift().apply(this.server);
      this.sent = null;
    }
    // What others did, as one edit of the text we had; our waiting edits, composed, transformed against it.
    const theirs = TextOperation.diff(this.server, text);
    let ours = this.pending.length ? this.pending.reduce((all, op) => compose(all, op)) : null;
    if (ours) ours = TextOperation.transform(ours, theirs)[0];
    this.server = text;
    this.rev = state.rev;
    this.pending = ours && !ours.isNoop ? [ours] : [];
    const moved = TextOperation.diff(shown, Array.from(this.text));
    if (!moved.isNoop) this.dispatchEvent(new CustomEvent("change", { detail: { op: moved } }));
    setTimeout(() => this.flush(), 0);
  }

  /** A resume: the missed patches up to `version` follow; the edit in flight, if unsure, is settled by them. */
  resumed(message) {
    this.replayUntil = message.version;
    this.settleReplay();
  }

  /** The replay after a resume is over and did not have our edit in flight: it was not applied; send it again. */
  settleReplay() {
    if (this.replayUntil === undefined || this.room.version < this.replayUntil) return;
    this.replayUntil = undefined;
    if (this.sent?.unsure) {
      this.sent = null;
      setTimeout(() => this.flush(), 0);
    }
  }

  patched(message) {
    try { this.apply(message); } finally { this.settleReplay(); }
  }

  apply(message) {
    const cause = message.cause ?? {};
    if (this.server === null) return;
    // The server API's intents (one patch, several intents) say their splices each; any other change of the text
    // without splices (a room reset to its template) is merged from the state.
    const edits = cause.kind === "server" ? (cause.intents ?? []).filter((i) => i.control === this.control) : cause.control === this.control ? [cause] : [];
    if (edits.length === 0 || !edits.every((e) => Array.isArray(e.splices))) {
      const prefix = `/controls/${this.control.replaceAll("~", "~0").replaceAll("/", "~1")}/`;
      if (!(message.ops ?? []).some((op) => op.path.startsWith(prefix))) return;
      const state = this.room.state?.controls?.[this.control];
      if (state && (state.rev !== this.rev || state.lines.join("\n") !== this.server.join(""))) this.resynced();
      return;
    }
    if (cause.kind !== "server" && this.sent && cause.session === this.sent.session && cause.id === this.sent.id) {
      // Ours, applied: the server's text has it now.
      this.server = this.pending.shift().apply(this.server);
      this.rev += 1;
      this.sent = null;
      setTimeout(() => this.flush(), 0);
      return;
    }
    let moved = null; // how the page's text moved: each remote splice as transformed through our waiting edits
    for (const edit of edits) {
      for (const s of edit.splices) {
        let remote = TextOperation.splice(this.server.length, s.at, s.delete, s.insert);
        this.server = remote.apply(this.server);
        this.pending = this.pending.map((op) => {
          const [mine, theirs] = TextOperation.transform(op, remote);
          remote = theirs;
          return mine;
        });
        moved = moved ? compose(moved, remote) : remote;
      }
      this.rev += 1;
    }
    if (moved) this.dispatchEvent(new CustomEvent("change", { detail: { op: moved } }));
  }
}

/** `a` then `b` as one edit (for moving a cursor through several splices of one patch). */
function compose(a, b) {
  const out = new TextOperation();
  const x = a.ops.slice(), y = b.ops.slice();
  let i = 0, j = 0, c1 = x[0], c2 = y[0];
  while (c1 !== undefined || c2 !== undefined) {
    if (typeof c1 === "number" && c1 < 0) { out.delete(-c1); c1 = x[++i]; continue; }
    if (typeof c2 === "string") { out.insert(c2); c2 = y[++j]; continue; }
    if (c1 === undefined || c2 === undefined) throw new Error("compose of edits that do not fit");
    const len1 = typeof c1 === "string" ? Array.from(c1).length : c1, len2 = Math.abs(c2), k = Math.min(len1, len2);
    if (typeof c1 === "string") {
      const cps = Array.from(c1);
      if (c2 > 0) out.insert(cps.slice(0, k).join(""));
      c1 = len1 > k ? cps.slice(k).join("") : undefined;
    } else {
      if (c2 > 0) out.retain(k); else out.delete(k);
      c1 = c1 > k ? c1 - k : undefined;
    }
    c2 = len2 > k ? Math.sign(c2) * (len2 - k) : undefined;
    if (c1 === undefined) c1 = x[++i];
    if (c2 === undefined) c2 = y[++j];
  }
  return out;
}
