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
 * changed by someone else's edit; `detail.op` moves a cursor: `op.transformIndex(i)`).
 */
export class SharedTextEditor extends EventTarget {
  constructor(room, control) {
    super();
    this.room = room;
    this.control = control;
    this.server = null; // code points, at `rev`
    this.rev = 0;
    this.pending = []; // TextOperations, each on the text the ones before it make; the first is sent when `sent`
    this.sent = false;
    room.addEventListener("state", (e) => { if (e.detail.reason === "snapshot") this.resynced(); });
    room.addEventListener("patch", (e) => this.patched(e.detail));
    room.addEventListener("status", () => this.flush());
    if (room.state) this.resynced();
  }

  /** The text as this page shows it. */
  get text() { return (this.pending.reduce((t, op) => op.apply(t), this.server ?? [])).join(""); }

  /** This page's text became `value` (a textarea's input): the difference is this page's edit. */
  update(value) {
    if (this.server === null) return;
    const local = Array.from(this.text), next = Array.from(value);
    const op = TextOperation.diff(local, next);
    if (op.isNoop) return;
    this.pending.push(op);
    this.flush();
  }

  /** Sends the waiting edits: composed into one (a burst of typing is one splice), one splice at a time. */
  flush() {
    if (this.sent || this.pending.length === 0 || this.room.status !== "open" || this.backoff) return;
    // Composed, the edits may be several splices (someone's edit landed inside them): sent one by one.
    this.pending = this.split([this.pending.reduce((all, op) => compose(all, op))]);
    if (this.pending.length === 0) return;
    const op = this.pending[0];
    const [splice] = op.splices();
    this.sent = true;
    this.sentSession = this.room.session;
    this.room.intent(this.control, "splice", { ...splice, base: this.rev }).then(() => {
      // The ack comes after our patch; still sent here: the server applied nothing (someone's edit took it all).
      if (this.sent && this.pending[0] === op) { this.pending.shift(); this.sent = false; }
      this.flush();
    }, (error) => {
      if (this.pending[0] !== op) return;
      if (error.code === "disconnected") {
        // Lost with the connection, applied or not: the rejoin tells. Resumed, the missed patches bring it if it was
        // (its cause names the former session); our join's patch ends the replay, and then it is sent again.
        this.inDoubt = true;
        return;
      }
      this.sent = false;
      if (error.code === "conflict" || error.code === "out_of_range") {
        // Made on a revision the server no longer transforms from: redo our edits on its text as one.
        const local = Array.from(this.text);
        this.pending = [];
        this.rebase(local);
      }
      this.dispatchEvent(new CustomEvent("error", { detail: error }));
      // Too fast (the connection's rate limit) or the room behind: wait a moment, then send what is waiting then.
      this.backoff = setTimeout(() => { this.backoff = null; this.flush(); }, error.code === "rate_limited" || error.code === "overloaded" ? 500 : 0);
    });
  }

  split(ops) {
    const out = [];
    ops.forEach((op, index) => {
      if (index === 0 && this.sent) { out.push(op); return; }
      let length = op.baseLength;
      for (const s of op.splices()) {
        out.push(TextOperation.splice(length, s.at, s.delete, s.insert));
        length += Array.from(s.insert).length - s.delete;
      }
    });
    return out;
  }

  /** A snapshot: the server's text anew. Our unapplied edits are redone on it, transformed against what changed. */
  resynced() {
    const state = this.room.state?.controls?.[this.control];
    if (!state) return;
    const text = Array.from(state.lines.join("\n"));
    if (this.server === null || this.pending.length === 0) {
      const before = this.server;
      this.server = text;
      this.rev = state.rev;
      this.sent = false;
      if (before !== null) this.dispatchEvent(new CustomEvent("change", { detail: { op: TextOperation.diff(before, text) } }));
      return;
    }
    // An edit in doubt (sent when the connection dropped, and no resume told whether it was applied) is given up: the
    // snapshot may already have it, and redone it would be there twice.
    if (this.inDoubt && this.sent) {
      const dropped = this.pending.shift();
      this.server = dropped.apply(this.server);
      this.sent = false;
    }
    this.inDoubt = false;
    const local = Array.from(this.text), base = this.server;
    // What others did, as one edit of the text we had; our edits as one, transformed against it.
    const theirs = TextOperation.diff(base, text), ours = TextOperation.diff(base, local);
    const [mine, moved] = TextOperation.transform(ours, theirs);
    this.server = text;
    this.rev = state.rev;
    this.sent = false;
    this.pending = mine.isNoop ? [] : [mine];
    this.dispatchEvent(new CustomEvent("change", { detail: { op: moved } }));
    this.flush();
  }

  rebase(local) {
    const op = TextOperation.diff(this.server, local);
    if (!op.isNoop) this.pending = [op];
  }

  patched(message) {
    const cause = message.cause ?? {};
    if (cause.kind === "join" && cause.session === this.room.session && this.inDoubt) {
      // The replay after a resume is over and did not have our edit: it was not applied; send it again.
      this.inDoubt = false;
      this.sent = false;
      this.flush();
      return;
    }
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
    if (cause.kind !== "server" && cause.session === this.sentSession && cause.intent === "splice" && this.sent) {
      this.inDoubt = false;
      // Ours, applied: the server's text has it now.
      this.server = this.pending.shift().apply(this.server);
      this.rev += 1;
      this.sent = false;
      return;
    }
    let moved = null;
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
