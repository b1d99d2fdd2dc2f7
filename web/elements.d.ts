// Declarations of web/elements.js, the LiveControls elements (custom elements, no build step): for TypeScript and for
// editors. The tags need no script; these types are for pages that also listen to them or reach the room.
import type { LiveRoom, Status } from "./livecontrols.js";

/** `<lc-room room token name template url>`: one room's connection for the elements inside it. */
export class LcRoom extends HTMLElement {
  /** The room's client (null before the element is in the page, and after it left it). */
  readonly liveRoom: LiveRoom | null;
}

/** `<lc-control control="id">`, or a tag of the control's kind (`<lc-stepper control="quantity">`). */
export class LcControl extends HTMLElement {
  /** The kind the tag draws (`"stepper"` for `<lc-stepper>`); null for `<lc-control>`: any. */
  static readonly kind: string | null;
  /** The LiveRoom of the enclosing `<lc-room>`, once both are in the page. */
  readonly room?: LiveRoom;
}

/** `<lc-presence>`: who is here, each person once. */
export class LcPresence extends HTMLElement {}

/** `<lc-undo>`: Undo and Redo of this person's changes in the room. */
export class LcUndo extends HTMLElement {}

/** `lc-change`: the element's control changed (it bubbles). */
export interface LcChangeDetail {
  control: string;
  state: { [key: string]: unknown };
}

/** `lc-error`: the server refused what the element sent (it bubbles out of the shadow root). */
export interface LcErrorDetail {
  control: string | null;
  code: string;
  message: string;
}

declare global {
  interface HTMLElementTagNameMap {
    "lc-room": LcRoom;
    "lc-control": LcControl;
    "lc-stepper": LcControl;
    "lc-list": LcControl;
    "lc-wizard": LcControl;
    "lc-form": LcControl;
    "lc-pager": LcControl;
    "lc-toggle": LcControl;
    "lc-timer": LcControl;
    "lc-range": LcControl;
    "lc-poll": LcControl;
    "lc-text": LcControl;
    "lc-presence": LcPresence;
    "lc-undo": LcUndo;
  }
  interface HTMLElementEventMap {
    "lc-change": CustomEvent<LcChangeDetail>;
    "lc-error": CustomEvent<LcErrorDetail>;
    "lc-status": CustomEvent<{ status: Status }>;
  }
  /** Both bubble to the page. */
  interface DocumentEventMap {
    "lc-change": CustomEvent<LcChangeDetail>;
    "lc-error": CustomEvent<LcErrorDetail>;
  }
}
