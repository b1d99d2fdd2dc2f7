/// The stable `code` strings of `error` messages. docs/PROTOCOL.md lists each with its meaning.
public enum ErrorCode: String, Sendable, CaseIterable {
    /// The text frame is not valid JSON (or not valid UTF-8).
    case invalidJSON = "invalid_json"
    /// Valid JSON, but not a message: not an object, a field missing or of the wrong type.
    case invalidMessage = "invalid_message"
    /// The `type` field names no message this server knows.
    case unknownType = "unknown_type"
    /// `join` named a template the server does not have.
    case unknownTemplate = "unknown_template"
    /// The room does not exist and this server does not create rooms on join.
    case unknownRoom = "unknown_room"
    /// `intent` or `leave` for a room this connection has not joined.
    case notJoined = "not_joined"
    /// The room has no control with that id.
    case unknownControl = "unknown_control"
    /// The control's kind has no intent with that name.
    case unknownIntent = "unknown_intent"
    /// The intent's `args` are missing a field, or a field has the wrong type.
    case invalidArgs = "invalid_args"
    /// A value is outside what the control allows (`set` beyond min…max, for instance).
    case outOfRange = "out_of_range"
    /// `next`/`prev`/`press` asked to move past a bound of a control that does not wrap.
    case atBound = "at_bound"
    /// `release` from a session that does not hold the control.
    case notHolder = "not_holder"
    /// The intent named an item, section, element or field the control does not have.
    case notFound = "not_found"
    /// `finish` on a form element whose fields break their rules (the element is not `valid`).
    case notValid = "not_valid"
    /// A wizard `next` refused because its step's guard (a form, or one form element) is not valid yet.
    case guardFailed = "guard_failed"
    /// The control has reached its end (wizard `complete`/`exit`, form `completed`); only `reset` applies.
    case finished = "finished"
    /// The intent was aimed at a state that has moved on (a form element that is not the expanded one).
    case conflict = "conflict"
    /// The connection sent messages faster than its rate limit; this one was dropped. Slow down
    /// (a connection that keeps going is closed with 1008).
    case rateLimited = "rate_limited"
    /// `join` would create a room beyond the server's room limit.
    case roomLimit = "room_limit"
    /// `join` without a valid token where one is required, or with a token that is malformed or wrongly signed.
    case unauthorized = "unauthorized"
    /// The token's `exp` has passed (at `join`, or while connected: the session is then removed from the room).
    case tokenExpired = "token_expired"
    /// The token does not allow this: another room, an intent from a viewer, creating a room, or an intent the
    /// template's `permissions` reserve for roles the session does not have (the message names them).
    case forbidden = "forbidden"
    /// Cluster mode: the node that owns the room, or Redis, cannot be reached right now, or did not answer in
    /// time. The request may or may not have taken effect; the room's next patch or snapshot shows its state.
    /// Retry after a moment (a failed owner is replaced within the lease time).
    case unavailable = "unavailable"
    /// The server failed in a way that is not the client's fault.
    case internalError = "internal"
    /// Server API: a room of that name already exists (loaded or stored).
    case roomExists = "room_exists"
    /// The room was deleted through the server API: every member is told (with `room`, no `id`) and is no
    /// longer in it.
    case roomDeleted = "room_deleted"
    /// More than a bound allows: a server API request body larger than the API accepts, or presence `data` past its
    /// bounds (keys, bytes). Nothing changed.
    case tooLarge = "too_large"
    /// Server API: the path exists, but not with this HTTP method.
    case methodNotAllowed = "method_not_allowed"
    /// The room is behind: more intents wait for it than `--room-queue` allows, so this one was not queued (and
    /// not applied). Retry after a moment; nothing else about the room or the connection changed.
    case overloaded = "overloaded"
    /// `presence` in a room whose template turned presence off (`"presence": false`).
    case presenceOff = "presence_off"
    /// Someone else is editing it: a `claim` on a part another session holds a claim on, or an intent writing a part
    /// another session holds an exclusive claim on (the message names the holder).
    case claimed = "claimed"
    /// The control changes only by a hold that lasts long enough (a toggle's `confirmHoldMs`): `press`, then `release`
    /// after that time. Its `set` and `flip` are refused.
    case holdRequired = "hold_required"
    /// The control takes no such change in its current phase, and may again later: a `vote` on a closed poll.
    case closed = "closed"
    /// The app's backend refused the intent (the template's intent hook answered `allow: false`). The error's `reason`
    /// is the backend's own code, when it gave one, and `message` its words.
    case denied = "denied"
    /// `undo` (`redo`) with nothing to take back: the user has no change in the room that is kept (none made, all undone,
    /// dropped past the template's bounds, or the room was reloaded), or the room records none.
    case nothingToUndo = "nothing_to_undo"
}

/// A request the server refuses: becomes one `error` message.
public struct ProtocolError: Error, Equatable, Sendable {
    public var code: ErrorCode
    public var message: String
    /// The `id` of the request, when it had a usable one.
    public var id: RequestID?
    /// The room the request was for, when known.
    public var room: String?
    /// `denied`: the app's backend's own code for why (its answer's `code`), when it gave one.
    public var reason: String?
    /// `conflict` of an `undo`/`redo`: who made the change it conflicts with (`{session, name, user}`), when a member did.
    public var by: JSONObject?

    public init(_ code: ErrorCode, _ message: String, id: RequestID? = nil, room: String? = nil, reason: String? = nil, by: JSONObject? = nil) {
        self.code = code
        self.message = message
        self.id = id
        self.room = room
        self.reason = reason
        self.by = by
    }
}
