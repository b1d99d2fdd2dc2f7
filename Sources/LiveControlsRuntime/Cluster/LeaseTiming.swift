import LiveControlsEngine

/// The ticker's times, all derived from the lease (`--lease-ms`): how often a node renews its leases, how long one of
/// its control commands may take, and whether a room whose renewal failed may go on until a retry.
///
/// A renewal that fails (Redis paused, a command timed out, the connection dropped) is retried after `retryDelay`
/// rather than at the next period, and a room stays owned meanwhile as long as that retry, answered within
/// `commandTimeout`, still reaches Redis before the room's lease can lapse (`outlasts`). With the default 3 s lease
/// (renewals every 1 s, control commands bounded by 750 ms, a retry 250 ms after a failure) one failed renewal is
/// tolerated; a second one in a row gives the rooms up, as does a lease Redis says was lost. Going on is safe either
/// way: every write is fenced, so an owner that lost its lease cannot write (its rooms then stop).
struct LeaseTiming: Sendable {
    /// Milliseconds a lease lasts from when Redis set it.
    let lease: Int

    /// Milliseconds between renewals (a third of the lease).
    var period: Int { max(50, lease / 3) }
    /// Milliseconds a control command (the node's `alive` key, the renewals) may take: a quarter of the lease, 100 ms to
    /// 1 s. Shorter than the period, so a failed renewal leaves time for a retry.
    var commandTimeout: Int { min(1_000, max(100, lease / 4)) }
    /// Milliseconds from a failed renewal to its retry.
    var retryDelay: Int { max(50, lease / 12) }

    /// Whether a room whose lease Redis last set no earlier than `confirmed` (when the acquisition or the renewal that
    /// succeeded was sent) may stay owned after a renewal failed at `now`: its retry would still reach Redis in time.
    func outlasts(confirmed: Instant, now: Instant) -> Bool {
        confirmed.nanoseconds + UInt64(lease) * 1_000_000 > now.nanoseconds + UInt64(retryDelay + commandTimeout) * 1_000_000
    }
}
