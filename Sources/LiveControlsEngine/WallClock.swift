import LiveControlsProtocol

/// How a room's monotonic `Instant`s map onto server time as clients see it: Unix time in milliseconds (since
/// 1970-01-01T00:00Z). A state that names a moment (a toggle's confirm deadline, a timer's `endsAt`) names it in server
/// time, and `welcome` carries the server's time, so each client can place it on its own clock.
///
/// The engine reads no clock of its own: the room's owner gives it one (`RoomScheduler.wallClock`: the system's, or a
/// fixed one on a manual clock).
public struct WallClock: Sendable {
    /// Unix time minus the monotonic clock, in nanoseconds, as of now (the system's moves when NTP steps the time).
    private let offset: @Sendable () -> Int64

    public init(offsetNanoseconds: @escaping @Sendable () -> Int64) { self.offset = offsetNanoseconds }

    /// A clock whose instant 0 is `unixMilliseconds` (tests, manual clocks).
    public static func fixed(unixMillisecondsAtZero ms: Int) -> WallClock {
        let nanoseconds = Int64(ms) * 1_000_000
        return WallClock(offsetNanoseconds: { nanoseconds })
    }

    /// Server time at `instant`, in milliseconds since 1970.
    public func unixMilliseconds(at instant: Instant) -> Int {
        Int((Int64(truncatingIfNeeded: instant.nanoseconds) &+ offset()) / 1_000_000)
    }

    /// The instant at server time `ms` (an instant before the monotonic clock's start is its start).
    public func instant(atUnixMilliseconds ms: Int) -> Instant {
        let (scaled, overflow) = Int64(ms).multipliedReportingOverflow(by: 1_000_000)
        let nanoseconds = overflow ? (ms > 0 ? Int64.max : 0) : scaled &- offset()
        return Instant(nanoseconds: UInt64(max(0, nanoseconds)))
    }
}
