import LiveControlsEngine

/// The per-connection message rate limit as a value: a token bucket of `burst` tokens refilled at `rate` per
/// second (one message costs one token), and a count of refusals in a row. The caller passes `now`.
struct RateLimiter: Sendable {
    let rate: Double
    let burst: Double
    /// Refusals in a row after which the connection is closed.
    let strikeLimit: Int
    private var tokens: Double
    private var last: Instant
    /// Consecutive refusals.
    private(set) var strikes = 0

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
        tokens = min(burst, tokens + Double(elapsed) / 1e9 * rate)
        last = Instant(nanoseconds: max(last.nanoseconds, now.nanoseconds))
        if tokens >= 1 {
            tokens -= 1
            strikes = 0
            return .accept
        }
        strikes += 1
        return strikes > strikeLimit ? .close : .refuse
    }
}
