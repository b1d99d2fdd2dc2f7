// Type declarations for livecontrols.js (the LiveControls protocol v1 client). Checked in CI with `tsc --noEmit
// --strict` against Tests/types/example.ts. The protocol itself: docs/PROTOCOL.md and docs/asyncapi.yaml.

/** Any JSON value. */
export type JSONValue = null | boolean | number | string | JSONValue[] | { [key: string]: JSONValue };

/** One RFC 6902 operation; the server sends `add`, `remove` and `replace`. */
export type PatchOp =
  | { op: "add"; path: string; value: JSONValue }
  | { op: "replace"; path: string; value: JSONValue }
  | { op: "remove"; path: string };

/** Applies patch operations to a JSON document and returns the new document. */
export function applyPatch<T extends JSONValue>(doc: T, ops: readonly PatchOp[]): T;

/** One session in `state.presence` (docs/PROTOCOL.md, *Presence*). */
export interface Member {
  name: string | null;
  /** The token's `sub`: sessions with the same user are one person. */
  user: string | null;
  roles: string[];
  holding: string[];
  editing: { control: string; target: string }[];
  data: { [key: string]: JSONValue };
}

/** The room document: every control's state by id, and presence by session. */
export interface RoomState {
  controls: { [id: string]: { kind: string; label: string; [field: string]: JSONValue } };
  presence: { [session: string]: Member };
}

/** A person: the sessions of one user together (`LiveRoom.people`). */
export interface Person {
  user: string | null;
  name: string | null;
  sessions: string[];
  /** One of the sessions is this client's. */
  you: boolean;
}

export interface PatchMessage {
  type: "patch";
  room: string;
  epoch: string;
  version: number;
  ops: PatchOp[];
  cause?: { kind: string; [field: string]: JSONValue };
}

export interface AckMessage {
  type: "ack";
  id: string | number;
  room: string;
  version: number;
}

export interface ErrorMessage {
  type: "error";
  id?: string | number;
  room?: string;
  /** The stable code (docs/PROTOCOL.md, *error*). */
  code: string;
  message: string;
  /** `denied` only: the app's backend's own code. */
  reason?: string;
  /** The `conflict` of an undo or redo only: who changed that part since, when a member did. */
  by?: ConflictAuthor;
}

/** Who made the change an undo conflicts with. */
export interface ConflictAuthor {
  session: string;
  name: string | null;
  user: string | null;
}

/** What a refused request rejects with: the server's `code` (or `disconnected`, `too_large`) and, for `denied`, `reason`. */
export interface LiveRoomError extends Error {
  code: string;
  reason?: string;
  by?: ConflictAuthor;
}

export type Status = "connecting" | "open" | "closed" | "refused" | "deleted" | "removed" | "expired";

/** Another member's (or the server API's, `from` "server") broadcast. */
export interface BroadcastDetail {
  from: string;
  name: string | null;
  event: JSONValue;
}

/** The `detail` of each event `LiveRoom` dispatches. */
export interface LiveRoomEventMap {
  status: { status: Status };
  state: { reason: "snapshot" } | { reason: "patch"; patch: PatchMessage };
  patch: PatchMessage;
  resumed: { type: "resumed"; room: string; epoch: string; from: number; version: number };
  error: ErrorMessage | { code: "too_large"; message: string };
  broadcast: BroadcastDetail;
  /** How many of this user's changes `undo()` and undos `redo()` can take back now. */
  undoable: { undo: number; redo: number };
  startedover: { epoch: string };
}

export interface LiveRoomOptions {
  /** The server's WebSocket URL; by default the page's own server (`/ws`). */
  url?: string;
  room?: string;
  name?: string | null;
  template?: string | null;
  token?: string | null;
  maxMessageBytes?: number;
  /** The WebSocket class to connect with: by default the global one at each connection (the page's; Node 22's, Node 20 with
   * --experimental-websocket) or any class with the browser's API (then `url` is required). */
  WebSocket?: (new (url: string, protocols?: string | string[]) => WebSocket) | null;
}

/** One joined room: connection, resume, the room document, intents, presence, claims, broadcasts. */
export class LiveRoom extends EventTarget {
  constructor(options?: LiveRoomOptions);

  readonly url: string;
  readonly room: string;
  readonly name: string | null;
  readonly template: string | null;
  /** This connection's session (`welcome.session`); null before it. */
  readonly session: string | null;
  readonly epoch: string | null;
  readonly version: number | null;
  /** The room document; null until the first snapshot. */
  readonly state: RoomState | null;
  readonly status: Status;
  /** Server time minus this machine's time, in milliseconds (from `welcome.serverTime`). */
  readonly serverClockOffset: number;
  readonly maxMessageBytes: number;
  /** From the last `undoable` message: how many changes `undo()` can take back, and undos `redo()` (undefined before one). */
  readonly canUndo: number | undefined;
  readonly canRedo: number | undefined;

  static defaultURL(): string;
  /** The request id of joins. */
  static readonly joinID: "join";
  /** The close code of a session the server API disconnected: no automatic reconnect. */
  static readonly disconnectedCode: 4001;
  /** A WebSocket's `readyState` when open. */
  static readonly OPEN: 1;

  /** Opens the connection (done by the constructor; again after a drop, with a backoff). */
  connect(): void;
  /** While `closed`, tries again at once. */
  reconnectNow(): void;
  /** Closes for good. */
  close(): void;

  intent(control: string, intent: string, args?: { [key: string]: JSONValue }): Promise<AckMessage>;
  setPresence(data: { [key: string]: JSONValue | null }): Promise<AckMessage | null>;
  claim(control: string, target?: string): Promise<AckMessage>;
  unclaim(control: string, target?: string, reason?: "release" | "blur"): Promise<AckMessage>;
  broadcast(event: JSONValue): Promise<AckMessage>;
  /** Takes back this user's last change in the room; rejects with `conflict` (`by`), `nothing_to_undo`, `disconnected`… */
  undo(): Promise<AckMessage>;
  /** Takes back this user's last undo. */
  redo(): Promise<AckMessage>;
  people(): Person[];
  /** A moment in server time (ms since 1970) on this machine's clock. */
  localTime(serverTime: number): number;

  addEventListener<K extends keyof LiveRoomEventMap>(
    type: K, listener: (event: CustomEvent<LiveRoomEventMap[K]>) => void, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof LiveRoomEventMap>(
    type: K, listener: (event: CustomEvent<LiveRoomEventMap[K]>) => void, options?: boolean | EventListenerOptions): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | EventListenerOptions): void;
}
