import LiveControlsEngine

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

    mutating func admit(now: Instant) -> Admission {
        let elapsed = now.nanoseconds >= last.nanoseconds ? now.nanoseconds - last.nanoseconds : 0
        let seconds = Double(elapsed) / 1e9
        tokens = min(burst, tokens + seconds * rate)
        strikeLevel = max(0, strikeLevel - seconds * Double(strikeLimit) / Self.strikeWindowSeconds)
        last = Instant(nanoseconds: max(last.nanoseconds, now.nanoseconds))
        if tokens >= 1 {
            tokens -= 1
            return .accept
        }
        strikeLevel += 1
        return strikeLevel > Double(strikeLimit) ? .close : .refuse
    }
}
