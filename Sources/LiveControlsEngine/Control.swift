import LiveControlsProtocol

/// Why a hold ended; recorded in the `cause.ended` of the patch that ends it.
public enum HoldEndReason: String, Sendable {
    /// The holder sent `release`.
    case release
    /// The holder's connection closed.
    case disconnect
    /// The holder left the room.
    case leave
    /// The control reached a bound it cannot step past (it does not wrap).
    case bound
    /// The hold ran longer than `maxHoldMs` without being renewed by another `press`.
    case lease
    /// Another `press` (by someone else, or in the other direction) took the hold over.
    case replaced
    /// The server restarted; nobody is connected to a recovered room until they join again.
    case restart
    /// The holder's token expired, which removed it from the room.
    case expired
    /// Cluster mode: the node that ran the room (and its hold timers) was lost; another node took the room over.
    case failover
    /// The room was reset to its template (the server API), which ends every hold.
    case reset
    /// A toggle's confirming hold lasted its `confirmHoldMs`: the toggle switched.
    case confirmed
}

/// A hold that ended, and why.
public struct HoldEnd: Sendable, Equatable {
    public var session: SessionID
    public var reason: HoldEndReason
}

/// What an intent or timer did to a control, beyond its rendered state.
public struct ControlEvents: Sendable, Equatable {
    /// Holds that ended during the step.
    public var ended: [HoldEnd] = []
    /// Set when a timer step applied repeat number `tick` (1 = first repeat after the delay).
    public var tick: Int? = nil
    /// An intent the room runs as the server in the same change (a timer's `then` when it finishes).
    public var then: ServerIntent? = nil
    /// Fields the control adds to the patch's `cause` (a text's `splices`: its edit as applied).
    public var detail: JSONObject? = nil
    public init(ended: [HoldEnd] = [], tick: Int? = nil, then: ServerIntent? = nil) {
        self.ended = ended
        self.tick = tick
        self.then = then
    }
    public static let none = ControlEvents()
}

/// One control kind: a value type driven by intents, rendered as a small JSON object.
///
/// Controls are pure: time comes in as `now`, and a control that needs waking says when in
/// `wakeDeadline`; the room's owner arms a timer for it and calls `wake(at:)`.
public protocol Control: Sendable {
    /// The `kind` string in the rendered state and in config.
    static var kind: String { get }
    /// Every intent the kind has (a template's `permissions` may name them).
    static var intents: [String] { get }
    /// The state under `/controls/<id>`, from this control alone.
    func render() -> JSONValue
    /// The state under `/controls/<id>` in its room: `render()` plus what follows from other controls (a wizard's
    /// `canNext` reads the form guarding its step). Such a control says which others it reads (`reads(_:)`), so a
    /// change to one of them patches it too.
    func render(in room: RoomView) -> JSONValue
    /// Whether `render(in:)` reads control `id`.
    func reads(_ id: ControlID) -> Bool
    /// Whether any control of this kind reads others (`reads(_:)` can be true): rooms without one skip the check.
    static var readsOtherControls: Bool { get }
    /// Whether the kind keeps parts of its state from some members (`privateParts`): rooms without one skip the views.
    static var hasPrivateParts: Bool { get }
    /// The members of `render()` not everyone sees, and who does (`Views.swift`); empty for a kind whose state is the
    /// same for everyone.
    var privateParts: [PrivatePart] { get }
    /// Whether the kind is dragged: a client sends its `set`/`nudge` at display rate and the room coalesces them, so
    /// each costs a fraction of a message toward the rate limit (a range).
    static var takesDrags: Bool { get }
    /// Whether `target` names a part of the control a session may claim (`Claim`); `*`, the whole control, always
    /// may be claimed and is not asked.
    func isClaimTarget(_ target: String) -> Bool
    /// What `intent` with `args` writes, for exclusive claims.
    func reach(of intent: String, args: IntentArgs) -> IntentReach
    /// Roughly how many bytes the control adds to its room's state, without encoding it (a room's `maxStateBytes`).
    /// Kinds whose size is bounded by their config count a small constant; a list counts its values.
    var stateBytes: Int { get }
    /// Applies one intent by `session`, or throws a typed error and changes nothing.
    /// `room` gives read access to the other controls (a wizard step guarded by a form, say).
    mutating func apply(_ intent: String, args: IntentArgs, by session: SessionID, at now: Instant, room: RoomView) throws(IntentError) -> ControlEvents
    /// The next instant this control wants `wake(at:)`, if any.
    var wakeDeadline: Instant? { get }
    /// Called at or after `wakeDeadline`.
    mutating func wake(at now: Instant) -> ControlEvents
    /// The session left the room (or disconnected): end whatever it held.
    mutating func sessionLeft(_ session: SessionID, reason: HoldEndReason) -> ControlEvents
    /// Who holds the control right now, if anyone.
    var holder: SessionID? { get }
    /// The room was reset to its template (the server API): this control, fresh from the template, takes the place of
    /// `previous` (a text goes on counting its revisions, the reset one more edit, so a splice made before it is
    /// transformed, not misplaced).
    mutating func succeed(_ previous: any Control)
    /// The room's clock, after the control was made or loaded in this process: a control whose state names moments in
    /// server time (a running timer's `endsAt`) places them on the monotonic clock its `wakeDeadline` is on.
    mutating func adopt(clock: WallClock)
}

extension Control {
    public func render(in room: RoomView) -> JSONValue { render() }
    public func reads(_ id: ControlID) -> Bool { false }
    public static var readsOtherControls: Bool { false }
    public static var takesDrags: Bool { false }
    public static var hasPrivateParts: Bool { false }
    public var privateParts: [PrivatePart] { [] }
    public func isClaimTarget(_ target: String) -> Bool { false }
    public func reach(of intent: String, args: IntentArgs) -> IntentReach { .whole }
    public var stateBytes: Int { 512 }
    public var wakeDeadline: Instant? { nil }
    public mutating func wake(at now: Instant) -> ControlEvents { .none }
    public mutating func sessionLeft(_ session: SessionID, reason: HoldEndReason) -> ControlEvents { .none }
    public var holder: SessionID? { nil }
    public mutating func adopt(clock: WallClock) {}
    public mutating func succeed(_ previous: any Control) {}

    /// The error for an intent the kind does not have.
    public static func unknownIntent(_ intent: String, known: [String]) -> IntentError {
        IntentError(.unknownIntent, "\(kind) has no intent \"\(intent)\" (it has: \(known.joined(separator: ", ")))")
    }
}

/// Read-only access to a room's controls while one of them applies an intent.
public struct RoomView: Sendable {
    let controls: [ControlID: any Control]
    /// The room's server time (`WallClock`), for a state that names a moment.
    public let clock: WallClock
    public init(controls: [ControlID: any Control], clock: WallClock = .fixed(unixMillisecondsAtZero: 0)) {
        self.controls = controls
        self.clock = clock
    }
    public func control(_ id: ControlID) -> (any Control)? { controls[id] }
}
