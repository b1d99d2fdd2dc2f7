import Foundation
import Dispatch
import Synchronization
import LiveControlsEngine

/// Where rooms get the time and their timers: the machine's monotonic clock and the server's timer thread
/// (`TimerThreadScheduler`), or in tests a manual clock that fires timers at exact instants.
package protocol RoomScheduler: Sendable {
    /// The monotonic time rooms, timers and idle times use.
    func now() -> Instant
    /// How `now()`'s instants map onto server time (Unix ms) for what rooms show of time (`WallClock`).
    var wallClock: WallClock { get }
    /// A parked timer whose `handler` runs on `queue` once the time reaches the deadline it is armed for.
    func makeTimer(on queue: DispatchQueue, _ handler: @escaping @Sendable () -> Void) -> any RoomTimer
    /// The same, for a timer whose owner may run a firing right on the firing thread (`inline`: given the work, it runs
    /// it on `queue` through `queue.sync` and returns true, or returns false when the queue may be busy), instead of
    /// the scheduler waking another thread for it (`TimerThreadScheduler`). Others ignore it.
    func makeTimer(on queue: DispatchQueue, inline: (@Sendable (_ work: () -> Void) -> Bool)?,
                   _ handler: @escaping @Sendable () -> Void) -> any RoomTimer
}

/// One timer of a room. Armed and re-armed only on the queue it runs its handler on; cancelled from there or
/// once nothing else uses it (at shutdown). Any thread may hold it.
package protocol RoomTimer: AnyObject, Sendable {
    /// Fires once at `deadline` (re-arming replaces the previous deadline); nil parks it.
    func schedule(at deadline: Instant?)
    /// Stops it for good.
    func cancel()
}

extension RoomScheduler {
    /// The system's: CLOCK_REALTIME against the monotonic clock `now()` reads, taken anew each time it is read.
    package var wallClock: WallClock { .system }

    package func makeTimer(on queue: DispatchQueue, inline: (@Sendable (_ work: () -> Void) -> Bool)?,
                           _ handler: @escaping @Sendable () -> Void) -> any RoomTimer {
        makeTimer(on: queue, handler)
    }

    /// Runs `body` once on `queue` at `deadline` (a retry's delay), through a timer of this scheduler, which is
    /// cancelled once it has fired.
    package func once(at deadline: Instant, on queue: DispatchQueue, _ body: @escaping @Sendable () -> Void) {
        let holder = OneShotTimer()
        let timer = makeTimer(on: queue) {
            body()
            holder.cancel()
        }
        holder.set(timer)
        timer.schedule(at: deadline)
    }
}

/// Keeps a one-shot timer until it has fired, then cancels it (so the timer does not outlive its use).
private final class OneShotTimer: Sendable {
    private let timer = Mutex<(any RoomTimer)?>(nil)
    func set(_ t: any RoomTimer) { timer.withLock { $0 = t } }
    func cancel() { timer.withLock { $0?.cancel(); $0 = nil } }
}

extension WallClock {
    /// The machine's: Unix time (CLOCK_REALTIME) minus the monotonic clock `DispatchTime` reads (CLOCK_MONOTONIC).
    package static let system = WallClock(offsetNanoseconds: {
        var real = timespec(), mono = timespec()
        clock_gettime(CLOCK_MONOTONIC, &mono)
        clock_gettime(CLOCK_REALTIME, &real)
        return (Int64(real.tv_sec) - Int64(mono.tv_sec)) * 1_000_000_000 + (Int64(real.tv_nsec) - Int64(mono.tv_nsec))
    })

    /// Server time now, in milliseconds since 1970 (what `welcome` tells clients).
    package static func unixMillisecondsNow() -> Int {
        var real = timespec()
        clock_gettime(CLOCK_REALTIME, &real)
        return real.tv_sec * 1000 + real.tv_nsec / 1_000_000
    }
}
