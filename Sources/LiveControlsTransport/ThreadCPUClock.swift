#if canImport(Glibc)
import Glibc
#endif

/// The calling thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`: user and system, not time spent blocked in `poll()`),
/// read lap by lap. One `clock_gettime` per lap (a system call: this clock has no vDSO path), ~0.2 µs.
struct ThreadCPUClock {
    /// The thread's CPU time at the last lap, in nanoseconds.
    private(set) var last = Self.now()

    /// Microseconds of CPU since the previous lap (or since the clock was made).
    mutating func lap() -> Int {
        let now = Self.now()
        defer { last = now }
        return (now - last) / 1000
    }

    /// The calling thread's CPU time in nanoseconds.
    static func nanoseconds() -> Int { now() }

    private static func now() -> Int {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return ts.tv_sec * 1_000_000_000 + ts.tv_nsec
    }
}
