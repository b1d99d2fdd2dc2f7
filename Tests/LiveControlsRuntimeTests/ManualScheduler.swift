@testable import LiveControlsRuntime
import LiveControlsProtocol
import Dispatch
import LiveControlsEngine
import Synchronization

/// A manual clock for rooms: time moves only when a test says so, and each timer fires at exactly its
/// deadline (the clock reads that deadline while its handler runs), in deadline order, on its own queue.
final class ManualScheduler: RoomScheduler {
    private struct State {
        var now: UInt64
        var timers: [ObjectIdentifier: ManualTimer] = [:]
    }
    private let state: Mutex<State>

    init(startingAt nanoseconds: UInt64 = 5_000_000_000) {
        state = Mutex(State(now: nanoseconds))
    }

    func now() -> Instant { Instant(nanoseconds: state.withLock { $0.now }) }

    /// Server time on a manual clock: instant 0 is 2025-11-28T12:00Z, so every manual clock of a test (a restarted
    /// server's too) tells the same time at the same instant.
    static let unixMillisecondsAtZero = 1_764_331_200_000
    var wallClock: WallClock { .fixed(unixMillisecondsAtZero: Self.unixMillisecondsAtZero) }

    func makeTimer(on queue: DispatchQueue, _ handler: @escaping @Sendable () -> Void) -> any RoomTimer {
        let timer = ManualTimer(queue: queue, handler: handler, scheduler: self)
        state.withLock { $0.timers[ObjectIdentifier(timer)] = timer }
        return timer
    }

    fileprivate func forget(_ timer: ManualTimer) {
        state.withLock { _ = $0.timers.removeValue(forKey: ObjectIdentifier(timer)) }
    }

    /// Timers made and not cancelled.
    var live: Int { state.withLock { $0.timers.count } }

    /// Timers armed now, and for when.
    var armed: [Instant] {
        state.withLock { $0.timers.values.compactMap(\.deadline).sorted() }
    }

    /// Moves the clock forward by `nanoseconds`, firing every timer that falls due on the way at its own
    /// deadline (a handler that re-arms its timer within the span fires again), and returns once each
    /// handler has run on its queue.
    func advance(nanoseconds: UInt64) {
        let target = state.withLock { $0.now } + nanoseconds
        while true {
            let due: ManualTimer? = state.withLock { s in
                let next = s.timers.values.filter { ($0.deadline?.nanoseconds ?? .max) <= target }
                    .min { $0.deadline!.nanoseconds < $1.deadline!.nanoseconds }
                if let next { s.now = max(s.now, next.deadline!.nanoseconds) }
                return next
            }
            guard let due else { break }
            due.fire()
        }
        state.withLock { $0.now = target }
    }
}

final class ManualTimer: RoomTimer, @unchecked Sendable {
    let queue: DispatchQueue
    let handler: @Sendable () -> Void
    private unowned let scheduler: ManualScheduler
    private let armedAt = Mutex<Instant?>(nil)

    init(queue: DispatchQueue, handler: @escaping @Sendable () -> Void, scheduler: ManualScheduler) {
        self.queue = queue
        self.handler = handler
        self.scheduler = scheduler
    }

    var deadline: Instant? { armedAt.withLock { $0 } }

    func schedule(at deadline: Instant?) { armedAt.withLock { $0 = deadline } }

    func cancel() {
        armedAt.withLock { $0 = nil }
        scheduler.forget(self)
    }

    /// Runs the handler on the timer's queue, once, and waits for it (a DispatchSource timer fires once per arming).
    fileprivate func fire() {
        armedAt.withLock { $0 = nil }
        queue.sync { handler() }
    }
}

/// A subscriber that keeps every message it is given (no transport), and a waker that counts wakes.
final class RecordingSubscriber: RoomSubscriber, @unchecked Sendable {
    let session: SessionID
    private let received = Mutex<[String]>([])

    init(_ session: String = "s\(Int.random(in: 0..<1_000_000))") {
        self.session = SessionID(session)
    }

    func deliver(_ frame: Frame) -> Bool {
        received.withLock { $0.append(frame.text) }
        return true
    }

    var messages: [String] { received.withLock { $0 } }
}

final class CountingWaker: SubscriberWaker {
    private let count = Atomic<Int>(0)
    func wake(_ subscribers: [any RoomSubscriber]) { count.add(subscribers.count, ordering: .relaxed) }
    func wake(_ subscriber: any RoomSubscriber) { count.add(1, ordering: .relaxed) }
    var wakes: Int { count.load(ordering: .relaxed) }
}
