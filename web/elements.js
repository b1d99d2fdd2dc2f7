// LiveControls elements: a page of two tags and no script of its own.
//
//   <script type="module" src="/elements.js"></script>
//   <lc-room room="workshop-1" token="…"> <lc-wizard control="agenda"></lc-wizard> <lc-timer control="timebox"></lc-timer> </lc-room>
//
// <lc-room> connects (and reconnects, resuming) and shows its status; every element inside it draws one control of the
// room — <lc-control control="id"> whichever its kind, or <lc-stepper>, <lc-list>, <lc-wizard>, <lc-form>,
// <lc-pager>, <lc-toggle>, <lc-timer>, <lc-range>, <lc-poll>, <lc-text> for that kind — with press-and-hold by pointer
// and keyboard, claims while editing, refusals in words next to it, and what the state allows (buttons disabled when
// `canNext` is false, or when the template reserves an intent for other roles). <lc-presence> lists who is here, and
// <lc-undo> is Undo and Redo of one's own changes. Each draws in its own shadow root with the page's stylesheet: style
// it with CSS custom properties (`--lc-accent`) and `::part(control)`, `::part(status)`.
//
// Events, for apps that want to react: `lc-change` on an element when its control changed (`detail`: {control,
// state}), `lc-error` when the server refused what it sent (`detail`: {control, code, message}; it bubbles out of the
// shadow root); `lc-status` on <lc-room> (`detail`: {status}). `room.liveRoom` is the LiveRoom (web/livecontrols.js).
import { LiveRoom } from "./livecontrols.js";
import { viewRoots } from "./views/common.js";
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
import { renderPeople } from "./views/presence.js";
import { historyBar } from "./views/history.js";

const makers = { stepper: stepperView, list: listView, wizard: wizardView, form: formView, pager: pagerView, toggle: toggleView,
                 timer: timerView, range: rangeView, poll: pollView, text: textView };
const stylesheet = new URL("./style.css", import.meta.url).href;

/** A shadow root with the stylesheet (a link: the server's content policy lets pages load styles from it only). */
function shadow(host) {
  const root = host.attachShadow({ mode: "open" });
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = stylesheet;
  root.append(link);
  return root;
}

const statusText = { open: "connected", connecting: "connecting…", closed: "disconnected — reconnecting…", refused: "could not join",
                     deleted: "room deleted", removed: "disconnected by the server", expired: "access expired" };

/** `<lc-room room="…" [token] [name] [template] [url]>`: one room's connection, for the elements inside it. */
export class LcRoom extends HTMLElement {
  constructor() {
    super();
    this.liveRoom = null;
    this.statusLine = Object.assign(document.createElement("p"), { className: "status" });
    this.statusLine.setAttribute("part", "status");
    this.statusLine.setAttribute("role", "status");
    shadow(this).append(this.statusLine, document.createElement("slot"));
    this.statusLine.textContent = statusText.connecting;
  }

  connectedCallback() {
    if (this.liveRoom) return; // moved within the page: the same connection
    const option = (name) => this.getAttribute(name) || null;
    this.dataset.status = "connecting";
    this.liveRoom = new LiveRoom({ room: option("room") ?? "demo", token: option("token"), name: option("name"), template: option("template"),
                                   ...(option("url") ? { url: option("url") } : {}) });
    this.liveRoom.addEventListener("status", (e) => {
      const status = e.detail.status;
      this.statusLine.textContent = statusText[status] ?? status;
      this.statusLine.dataset.state = status;
      this.dataset.status = status;
      this.dispatchEvent(new CustomEvent("lc-status", { detail: { status } }));
    });
    this.dispatchEvent(new CustomEvent("lc-room-ready", { bubbles: false }));
  }

  disconnectedCallback() {
    // Taken out of the page (not moved): the connection goes with it.
    queueMicrotask(() => { if (!this.isConnected) { this.liveRoom?.close(); this.liveRoom = null; } });
  }
}

/** The base of the elements inside an <lc-room>: finds its room once both are in the page, lets go of it when it
 * leaves the page (moved into another <lc-room>, it draws that one's). */
class RoomPart extends HTMLElement {
  connectedCallback() {
    const host = this.closest("lc-room");
    if (!host) {
      console.warn(`<${this.localName}> draws nothing outside an <lc-room>`);
      return;
    }
    const attach = () => {
      if (this.room === host.liveRoom || !host.liveRoom) return;
      this.detach();
      this.room = host.liveRoom;
      this.onState = (e) => this.refresh(e.detail.patch ?? null);
      this.onStatus = () => this.statusChanged?.();
      this.attached(this.room);
      if (this.room.state) this.refresh(null);
      this.room.addEventListener("state", this.onState);
      this.room.addEventListener("status", this.onStatus);
    };
    if (host.liveRoom) attach(); else host.addEventListener("lc-room-ready", attach, { once: true });
  }

  disconnectedCallback() {
    this.detach();
  }

  /** Moved within the page by `moveBefore` (the test page reorders its controls so): it stays as it is. */
  connectedMoveCallback() {}

  /** Stops drawing its room (what it drew stays until it draws another). */
  detach() {
    if (!this.room) return;
    this.room.removeEventListener("state", this.onState);
    this.room.removeEventListener("status", this.onStatus);
    this.detached?.();
    this.room = null;
  }
}

/** `<lc-control control="id">`, and one tag per kind (`<lc-stepper control="id">`: the control must be of that kind). */
export class LcControl extends RoomPart {
  /** The kind this tag draws; null: any. */
  static kind = null;

  attached(room) {
    this.root = this.shadowRoot ?? shadow(this);
    this.view = null; // a view is made for one room
    viewRoots.set(this.root, room);
  }

  detached() {
    viewRoots.delete(this.root);
  }

  /** Not joined: nothing in the control acts, keyboard included (who is here and undo stay readable). */
  statusChanged() {
    this.view?.element.toggleAttribute("inert", this.room.status !== "open");
  }

  refresh(patch) {
    const id = this.getAttribute("control");
    const state = id ? this.room.state.controls[id] : undefined;
    const wanted = this.constructor.kind;
    const mine = !patch || patch.ops.some((op) => op.path === `/controls/${id}` || op.path.startsWith(`/controls/${id}/`));
    if (!state || (wanted && state.kind !== wanted) || !makers[state.kind]) {
      this.view = null;
      const problem = !id ? `<${this.localName}> needs a control attribute` : !state ? `room ${this.room.room} has no control "${id}"`
        : !makers[state.kind] ? `control "${id}" is a ${state.kind}, a kind these elements do not draw yet`
        : `control "${id}" is a ${state.kind}, not a ${wanted}`;
      // Said once (a status, not an alert: it would be read out again at every change of the room).
      if (this.problem?.textContent === problem && this.problem.isConnected) return;
      this.problem = Object.assign(document.createElement("p"), { className: "notice", textContent: problem });
      this.problem.setAttribute("role", "status");
      this.root.replaceChildren(this.root.firstChild, this.problem);
      return;
    }
    if (!this.view || this.view.kind !== state.kind) {
      this.view = makers[state.kind](this.room, id);
      this.view.kind = state.kind;
      this.view.element.setAttribute("part", "control");
      this.root.replaceChildren(this.root.firstChild, this.view.element);
    } else if (!mine && !patch.ops.some((op) => op.path.startsWith("/presence/"))) {
      return; // a change of another control: nothing here moved (who holds or edits what is presence)
    }
    this.view.update(state);
    this.view.element.toggleAttribute("inert", this.room.status !== "open");
    // A viewer sends no intents: the control shows disabled (still read out, unlike an inert one).
    if ((this.room.state.presence?.[this.room.session]?.roles ?? []).includes("viewer")) {
      for (const c of this.view.element.querySelectorAll("button, input, select, textarea")) c.disabled = true;
      for (const li of this.view.element.querySelectorAll("li.item")) li.setAttribute("aria-disabled", "true");
    }
    if (mine) this.dispatchEvent(new CustomEvent("lc-change", { bubbles: true, detail: { control: id, state } }));
  }
}

/** `<lc-presence>`: who is here, each person once, with what they hold and edit. */
export class LcPresence extends RoomPart {
  attached(room) {
    this.onEnded = () => {
      // Out of the room for good: nobody is shown as here any more, this page's own session least of all (issue 41).
      if (!["refused", "deleted", "removed", "expired"].includes(room.status)) return;
      this.list.replaceChildren();
      this.count.textContent = "0";
    };
    room.addEventListener("status", this.onEnded);
    if (this.root) return;
    this.root = shadow(this);
    this.count = Object.assign(document.createElement("span"), { id: "presence-count", textContent: "0" });
    this.heading = Object.assign(document.createElement("h2"), { id: "presence-title" });
    this.heading.append("Here now (", this.count, ")");
    this.list = Object.assign(document.createElement("ul"), { id: "presence" });
    const panel = document.createElement("section");
    panel.className = "panel";
    panel.setAttribute("part", "presence");
    panel.setAttribute("aria-labelledby", "presence-title");
    panel.append(this.heading, this.list);
    this.root.append(panel);
  }

  detached() {
    this.room.removeEventListener("status", this.onEnded);
  }

  refresh() {
    this.count.textContent = renderPeople(this.room, this.list);
  }
}

/** `<lc-undo>`: Undo and Redo of this person's changes in the room (Ctrl+Z, Ctrl+Shift+Z outside text fields). */
export class LcUndo extends RoomPart {
  attached(room) {
    this.root ??= shadow(this);
    this.bar = historyBar(room, this.closest("lc-room"));
    this.bar.element.setAttribute("part", "undo");
    this.root.replaceChildren(this.root.firstChild, this.bar.element);
    // The element takes no room in the page while its bar is hidden (a viewer, a room that records nothing).
    this.hidden = this.bar.element.hidden;
    this.watch = new MutationObserver(() => { this.hidden = this.bar.element.hidden; });
    this.watch.observe(this.bar.element, { attributes: true, attributeFilter: ["hidden"] });
  }

  detached() {
    this.watch?.disconnect();
    this.bar?.dispose();
  }

  refresh() {
    const me = this.room.state.presence?.[this.room.session];
    this.bar.setViewer((me?.roles ?? []).includes("viewer"));
  }
}

customElements.define("lc-room", LcRoom);
customElements.define("lc-control", LcControl);
customElements.define("lc-presence", LcPresence);
customElements.define("lc-undo", LcUndo);
for (const kind of Object.keys(makers)) {
  customElements.define(`lc-${kind}`, class extends LcControl { static kind = kind; });
}
