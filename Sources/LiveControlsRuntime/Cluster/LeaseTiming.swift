import LiveControlsEngine

/// The ticker's times, all derived from the lease (`--lease-ms`): how often a node renews its leases, how long one of
/// its control commands may take, when a renewal that failed is tried again, and until when a room whose renewals fail
/// may go on.
///
/// A renewal that fails (Redis stalled, a command timed out, the connection dropped, an error reply) is tried again
/// after `retryDelay` instead of a period later, and its rooms stay owned meanwhile — each until its `deadline`, a
/// `retryDelay` before its lease can lapse in Redis (the lease runs from when Redis set it, which is after the
/// acquisition or renewal was sent: `confirmed`). A renewal that succeeds moves the deadline on; one that Redis answers 0
/// (the lease was lost) stops the room at once; at the deadline a watchdog stops it whatever the ticker is doing. With
/// the default 3 s lease a Redis that stalls for up to ~1.7 s (wherever the stall starts between two renewals) moves
/// no idle room. Going on is safe either way: every write is fenced, so an owner whose lease lapsed cannot write.
struct LeaseTiming: Sendable {
    /// Milliseconds a lease lasts from when Redis set it.
    let lease: Int

    /// Milliseconds between renewals (a third of the lease).
    var period: Int { max(50, lease / 3) }
    /// Milliseconds a control command (the node's `alive` key, the renewals) may take: a third of the lease, 100 ms to 1 s.
    var commandTimeout: Int { min(1_000, max(100, lease / 3)) }
    /// Milliseconds from a failed renewal to its retry, and how long before its lease can lapse a room stops.
    var retryDelay: Int { max(50, lease / 12) }

    /// When a room whose lease Redis last set no earlier than `confirmed` stops acting unless it is renewed meanwhile.
    func deadline(confirmed: Instant) -> Instant {
        Instant(nanoseconds: confirmed.nanoseconds + UInt64(lease - retryDelay) * 1_000_000)
    }
}
