import LiveControlsProtocol

/// A shared switch — a latch, a "live" toggle, a mute — shared by everyone in the room.
///
/// State: `on`. `set {on}` and `flip` change it at once. With `confirmHoldMs`, only a hold that lasts that long changes
/// it: `press` starts a confirming hold (who confirms, what it switches to and until when show in `holding`),
/// `release` before then changes nothing, and at the deadline the server switches it (hold end reason `confirmed`).
/// Members' `set` and `flip` are then refused with `hold_required`; the server API's are not (it is the backend).
public struct Toggle: ConfigurableControl {
    public static let kind = "toggle"
    public static let intents = ["set", "flip", "press", "release"]
    /// The longest `confirmHoldMs`: a minute.
    public static let maxConfirmHoldMs = 60_000

    /// A running confirming hold.
    public struct Confirming: Sendable, Equatable {
        public var session: SessionID
        /// What the toggle becomes at the deadline (the opposite of `on` at the press).
        public var to: Bool
        /// When the toggle switches (the room's monotonic clock).
        public var deadline: Instant
        /// The same moment in server time (ms since 1970), for clients.
        public var until: Int
    }

    public var label: String
    public private(set) var on: Bool
    /// How long a press must be held to switch; nil: `set` and `flip` switch at once, and `press` too.
    public let confirmHoldMs: Int?
    public private(set) var confirming: Confirming?

    public init(label: String, on: Bool = false, confirmHoldMs: Int? = nil) {
        precondition(confirmHoldMs.map { (1...Self.maxConfirmHoldMs).contains($0) } ?? true)
        self.label = label
        self.on = on
        self.confirmHoldMs = confirmHoldMs
    }

    init(label: String, on: Bool, confirmHoldMs: Int?, confirming: Confirming?) {
        self.init(label: label, on: on, confirmHoldMs: confirmHoldMs)
        self.confirming = confirming
    }

    public func render() -> JSONValue {
        [
            "kind": .string(Self.kind), "label": .string(label), "on": .bool(on),
            "confirmHoldMs": confirmHoldMs.map { .int($0) } ?? .null,
            "holding": confirming.map { ["session": .string($0.session.rawValue), "to": .bool($0.to), "until": .int($0.until)] } ?? .null,
        ]
    }

    public var stateBytes: Int { 192 }
    public var holder: SessionID? { confirming?.session }
    public var wakeDeadline: Instant? { confirming?.deadline }

    public mutating func apply(_ intent: String, args: IntentArgs, by session: SessionID, at now: Instant, room: RoomView) throws(IntentError) -> ControlEvents {
        switch intent {
        case "flip":
            try checkDirect(intent, by: session)
            on.toggle()
        case "set":
            let value = try args.bool("on")
            try checkDirect(intent, by: session)
            on = value
        case "press":
            // A hold whose time is up switches first, even if the room's timer has not fired yet.
            if let confirmed = confirmIfDue(at: now) {
                var events = press(by: session, at: now, clock: room.clock)
                events.ended.insert(confirmed, at: 0)
                return events
            }
            return press(by: session, at: now, clock: room.clock)
        case "release":
            guard let current = confirming else { throw IntentError(.notHolder, "nobody holds this toggle") }
            guard current.session == session else { throw IntentError(.notHolder, "the toggle is held by \(current.session)") }
            // Released at or after `until` (the room's timer a moment late): the hold did last, so the toggle switches.
            if let confirmed = confirmIfDue(at: now) { return ControlEvents(ended: [confirmed]) }
            confirming = nil
            return ControlEvents(ended: [HoldEnd(session: session, reason: .release)])
        default:
            throw Self.unknownIntent(intent, known: Self.intents)
        }
        return .none
    }

    /// A toggle that confirms by holding switches only that way, except for the server API.
    private func checkDirect(_ intent: String, by session: SessionID) throws(IntentError) {
        guard let confirmHoldMs, session != .server else { return }
        throw IntentError(.holdRequired, "\(label) switches only when held for \(confirmHoldMs) ms: send press, and release after that")
    }

    /// `press`: without `confirmHoldMs` a flip; with it, a confirming hold (the holder's own press again renews nothing
    /// and changes nothing; anyone else's replaces it and starts over).
    private mutating func press(by session: SessionID, at now: Instant, clock: WallClock) -> ControlEvents {
        guard let confirmHoldMs else {
            on.toggle()
            return .none
        }
        if confirming?.session == session { return .none }
        var events = ControlEvents()
        if let previous = confirming { events.ended.append(HoldEnd(session: previous.session, reason: .replaced)) }
        confirming = Confirming(session: session, to: !on, deadline: now.adding(milliseconds: confirmHoldMs),
                                until: clock.unixMilliseconds(at: now) + confirmHoldMs)
        return events
    }

    public mutating func wake(at now: Instant) -> ControlEvents {
        confirmIfDue(at: now).map { ControlEvents(ended: [$0]) } ?? .none
    }

    /// The confirming hold whose time is up switches the toggle (reason `confirmed`); nil when none is due.
    private mutating func confirmIfDue(at now: Instant) -> HoldEnd? {
        guard let current = confirming, current.deadline <= now else { return nil }
        on = current.to
        confirming = nil
        return HoldEnd(session: current.session, reason: .confirmed)
    }

    public mutating func sessionLeft(_ session: SessionID, reason: HoldEndReason) -> ControlEvents {
        guard let current = confirming, current.session == session else { return .none }
        confirming = nil
        return ControlEvents(ended: [HoldEnd(session: session, reason: reason)])
    }
}

extension Toggle {
    /// Reads a toggle from its template entry.
    public init(config node: ConfigNode, id: ControlID, today: CivilDate) throws(ConfigError) {
        _ = try node.object(allowed: ["kind", "label", "on", "confirmHoldMs"])
        let confirm = try node.optionalInt("confirmHoldMs")
        if let confirm, !(1...Self.maxConfirmHoldMs).contains(confirm) {
            throw node.error(at: "confirmHoldMs", "must be 1…\(Self.maxConfirmHoldMs) (ms), or left out for a toggle that switches at once")
        }
        self.init(label: try node.string("label", default: id.rawValue), on: try node.bool("on", default: false), confirmHoldMs: confirm)
    }
}
