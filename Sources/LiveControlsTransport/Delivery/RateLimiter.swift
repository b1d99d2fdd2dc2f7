import LiveControlsEngine
import LiveControlsProtocol

/// The per-connection message rate limit as a value: a token bucket of `burst` tokens refilled at `rate` per
/// second (one message costs one token), and a count of refusals that drains at `strikeLimit` per `strikeWindow`
/// (50 per 10 s: 5 a second). A refusal that takes the count above `strikeLimit` closes the connection — 50 refusals
/// in a row as before, and also a steady flood that gets one message in four through (issue 38: refusals in a row
/// never reached 50 then, and a client sending 200/s against 50/s kept its connection for good), while a client a
/// little over its rate (fewer than 5 refusals a second) is only refused. The caller passes `now`.
struct RateLimiter: Sendable {
    let rate: Double
    let burst: Double
    /// Refusals (net of the drain) after which the connection is closed.
    let strikeLimit: Int
    /// The time over which `strikeLimit` refusals drain away.
    static let strikeWindowSeconds: Double = 10
    private var tokens: Double
    private var last: Instant
    /// Refusals, drained at `strikeLimit / strikeWindowSeconds` per second since `last`.
    private var strikeLevel: Double = 0
    /// The refusals counted now (rounded down).
    var strikes: Int { Int(strikeLevel) }

    init(rate: Double, burst: Double, strikeLimit: Int, now: Instant) {
        self.rate = rate
        self.burst = burst
        self.strikeLimit = strikeLimit
        self.tokens = burst
        self.last = now
    }

    enum Admission: Equatable {
        case accept
        /// Refused (`rate_limited`): the message is dropped.
        case refuse
        /// Refused again after `strikeLimit` refusals in a row (each answered `rate_limited`): close the
        /// connection (1008).
        case close
    }

    /// Whether the bucket would be full at `now` (nothing taken for as long as a full refill takes).
    func isFull(now: Instant) -> Bool {
        let elapsed = now.nanoseconds >= last.nanoseconds ? now.nanoseconds - last.nanoseconds : 0
        return tokens + Double(elapsed) / 1e9 * rate >= burst
    }

    /// Takes `cost` tokens (1 for a message; a drag's frames less, `DragPace`) or refuses.
    mutating func admit(now: Instant, cost: Double = 1) -> Admission {
        let elapsed = now.nanoseconds >= last.nanoseconds ? now.nanoseconds - last.nanoseconds : 0
        let seconds = Double(elapsed) / 1e9
        tokens = min(burst, tokens + seconds * rate)
        strikeLevel = max(0, strikeLevel - seconds * Double(strikeLimit) / Self.strikeWindowSeconds)
        last = Instant(nanoseconds: max(last.nanoseconds, now.nanoseconds))
        if tokens >= cost {
            tokens -= cost
            return .accept
        }
        strikeLevel += 1
        return strikeLevel > Double(strikeLimit) ? .close : .refuse
    }
}

/// A drag: a slider sends `set` (or `nudge`) to one control at display rate — 60 to 120 or more a second, past the
/// message rate — and the room coalesces them (a range: `Control.takesDrags`). Such an intent costs `cost` of a message
/// when it follows one to the same room and control within `windowNanoseconds`; anything else costs 1, so a flood of
/// `set`s to a stepper (each a patch to everyone) is paced like any flood. Service thread only (a `Connection`'s).
struct DragPace: Sendable {
    static let cost = 0.25
    static let windowNanoseconds: UInt64 = 100_000_000
    private var last: (room: String, control: String, at: Instant)?

    /// What `message` costs toward the rate limit at `now`, and the drag it continues from here on. `dragged`: the ids
    /// of the controls that take drags (`ServerConfig.draggedControlIDs`).
    mutating func cost(of message: ClientMessage, dragged: Set<String>, now: Instant) -> Double {
        guard case let .intent(request) = message, request.intent == "set" || request.intent == "nudge",
              dragged.contains(request.control) else { return 1 }
        defer { last = (request.room, request.control, now) }
        guard let last, last.room == request.room, last.control == request.control,
              now.nanoseconds &- last.at.nanoseconds <= Self.windowNanoseconds else { return 1 }
        return Self.cost
    }
}
