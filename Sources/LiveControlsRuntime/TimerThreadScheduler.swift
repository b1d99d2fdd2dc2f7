import CThreadTiming
import Dispatch
import Foundation
import Synchronization
import LiveControlsEngine

/// The server's timers (`RoomScheduler`) on one thread of their own, so a hold's ticks fire on time on a busy machine.
///
/// A Dispatch timer reaches its handler through two threads — Dispatch's timer thread, then a worker of the pool —
/// and when every core is busy (a hold ticking to 10,000 clients keeps the service thread sending), each waits for
/// a running thread's scheduling slice to end: milliseconds (docs/benchmarks/HISTORY.md). This thread runs at real-time
/// priority (SCHED_FIFO 1) where the process may have it (CAP_SYS_NICE, or an RLIMIT_RTPRIO of 1: systemd's
/// `LimitRTPRIO=1`, compose's `ulimits: rtprio`), so it runs as soon as it wakes; otherwise it asks for 100 µs slices
/// (`lc_request_slice`, Linux 6.12 and later, no privilege needed: under EEVDF a waking thread with a shorter slice
/// usually preempts the running one). It sleeps on a timerfd (no slack). A timer whose owner offers it (`inline`) may
/// run its firing right here, on its queue through `queue.sync` (the owner decides: `RoomRuntime.runInline`): one
/// wake-up between a deadline and the tick's patch, and the tick's fan-out at that priority too. Otherwise the firing
/// goes to the timer's queue with `async`, as Dispatch's timers do — also every firing but the last of several due at
/// once, so one room's long tick delays no other room's due at the same moment (a firing that comes due while an
/// inline one runs waits for it: at most one handler's time).
///
/// Thread rules: `schedule` and `cancel` from any thread; the heap is behind one lock, never held while a handler
/// runs (a handler re-arms its own timer). A cancelled timer's firing does nothing, even one already handed to its
/// queue. The thread lives as long as the process.
package final class TimerThreadScheduler: RoomScheduler, Sendable {
    /// The process's timer thread, started on first use.
    package static let shared = TimerThreadScheduler()

    /// The slice the timer thread asks for: the kernel's shortest.
    static let slice: UInt64 = 100_000

    /// How the thread is scheduled, once it has started (`start()` waits for it; the server logs it).
    package enum Priority: Equatable, Sendable {
        /// SCHED_FIFO 1.
        case realtime
        /// 100 µs EEVDF slices (`fifoRefused`: the errno of the real-time request).
        case shortSlices(fifoRefused: Int32)
        /// Neither: this kernel takes no custom slices (before 6.12), or refused them (`sliceAnswer`: -1 or an errno).
        case ordinary(fifoRefused: Int32, sliceAnswer: Int32)
    }

    private struct Entry {
        var deadline: UInt64
        var order: UInt64
        var timer: ThreadTimer

        func precedes(_ other: Entry) -> Bool { (deadline, order) < (other.deadline, other.order) }
    }

    /// A timer's deadline and the one it waits in the heap under. A re-arm to a later deadline pushes nothing: when
    /// the entry comes up the timer goes back in at its deadline; only an earlier one pushes an entry, and the one it
    /// replaces is skipped when it comes up. So the heap holds at most a few entries per timer, however often
    /// timers are re-armed (a claim's lease renewed every few seconds, say).
    private struct Pending {
        var armed: UInt64?
        var queuedAt: UInt64?
    }

    private struct State {
        var heap: [Entry] = []
        var order: UInt64 = 0
        var pending: [ObjectIdentifier: Pending] = [:]
        /// The deadline the thread sleeps until (`.max`: none): an earlier one wakes it.
        var sleepingUntil: UInt64 = .max
        var started = false
        let startedSignal = DispatchSemaphore(value: 0)
        var priority = Priority.ordinary(fifoRefused: 0, sliceAnswer: 0)

        mutating func push(_ timer: ThreadTimer, at deadline: UInt64) {
            order &+= 1
            heap.append(Entry(deadline: deadline, order: order, timer: timer))
            var child = heap.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard heap[child].precedes(heap[parent]) else { break }
                heap.swapAt(child, parent)
                child = parent
            }
        }

        mutating func pop() -> Entry {
            let top = heap[0]
            let last = heap.removeLast()
            guard !heap.isEmpty else { return top }
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var first = parent
                if left < heap.count, heap[left].precedes(heap[first]) { first = left }
                if right < heap.count, heap[right].precedes(heap[first]) { first = right }
                guard first != parent else { return top }
                heap.swapAt(parent, first)
                parent = first
            }
        }

        /// The timers due at `now`, taken out (each once); timers re-armed later go back in at their deadline.
        mutating func takeDue(now: UInt64, into due: inout [ThreadTimer]) {
            while let top = heap.first, top.deadline <= now {
                let entry = pop()
                let id = ObjectIdentifier(entry.timer)
                guard var p = pending[id], p.queuedAt == entry.deadline else { continue }  // replaced by an earlier entry
                p.queuedAt = nil
                if let armed = p.armed, armed > now {
                    push(entry.timer, at: armed)
                    p.queuedAt = armed
                    pending[id] = p
                } else {
                    pending[id] = nil
                    if p.armed != nil { due.append(entry.timer) }
                }
            }
        }
    }

    private let state = Mutex(State())
    /// An eventfd the thread sleeps on beside its deadline: written when an earlier deadline arrives.
    private let wakeFD: Int32
    /// The timerfd that times its sleep (no slack, unlike poll's own timeout).
    private let timerFD: Int32

    private init() {
        wakeFD = lc_wake_fd()
        timerFD = lc_timer_fd()
        precondition(wakeFD >= 0 && timerFD >= 0, "TimerThreadScheduler: eventfd or timerfd failed, errno \(errno)")
    }

    package func now() -> Instant { Instant(nanoseconds: DispatchTime.now().uptimeNanoseconds) }

    package func makeTimer(on queue: DispatchQueue, _ handler: @escaping @Sendable () -> Void) -> any RoomTimer {
        makeTimer(on: queue, inline: nil, handler)
    }

    package func makeTimer(on queue: DispatchQueue, inline: (@Sendable (_ work: () -> Void) -> Bool)?,
                           _ handler: @escaping @Sendable () -> Void) -> any RoomTimer {
        _ = launch()
        return ThreadTimer(scheduler: self, queue: queue, inline: inline, handler: handler)
    }

    /// Entries in the heap (tests: it stays bounded however often timers are re-armed).
    var heapCount: Int { state.withLock { $0.heap.count } }

    /// Arms `timer` at `deadline` (nil parks it).
    fileprivate func arm(_ timer: ThreadTimer, at deadline: UInt64?) {
        let wake = state.withLock { s -> Bool in
            let id = ObjectIdentifier(timer)
            var p = s.pending[id] ?? Pending()
            p.armed = deadline
            var wake = false
            if let deadline, p.queuedAt.map({ deadline < $0 }) ?? true {
                s.push(timer, at: deadline)
                p.queuedAt = deadline
                if deadline < s.sleepingUntil {
                    s.sleepingUntil = deadline
                    wake = true
                }
            }
            s.pending[id] = p.armed == nil && p.queuedAt == nil ? nil : p
            return wake
        }
        if wake { lc_wake(wakeFD) }
    }

    /// Starts the thread (once) and says how it is scheduled (waits for the thread to have asked).
    @discardableResult
    package func start() -> Priority {
        let started = launch()
        started.wait()
        started.signal()  // a latch: every later caller passes too
        return state.withLock { $0.priority }
    }

    /// Starts the thread unless it runs; the semaphore it signals once it has its priority.
    private func launch() -> DispatchSemaphore {
        let (first, started) = state.withLock { s -> (Bool, DispatchSemaphore) in
            defer { s.started = true }
            return (!s.started, s.startedSignal)
        }
        if first {
            Thread { [self] in
                Thread.current.name = "lc-timers"  // set from the thread itself, so the kernel has it (top, perf, ps -L)
                let priority = Self.raisePriority()
                state.withLock { $0.priority = priority }
                started.signal()
                run()
            }.start()
        }
        return started
    }

    /// On the timer thread: real-time priority where allowed, else short slices.
    private static func raisePriority() -> Priority {
        let fifo = lc_request_fifo(1)
        guard fifo != 0 else { return .realtime }
        let slice = lc_request_slice(Self.slice)
        return slice == 0 ? .shortSlices(fifoRefused: fifo) : .ordinary(fifoRefused: fifo, sliceAnswer: slice)
    }

    private func run() {
        var due: [ThreadTimer] = []
        while true {
            let next = state.withLock { s -> UInt64 in
                s.takeDue(now: DispatchTime.now().uptimeNanoseconds, into: &due)
                s.sleepingUntil = due.isEmpty ? (s.heap.first?.deadline ?? .max) : 0
                return s.sleepingUntil
            }
            if !due.isEmpty {
                for (i, timer) in due.enumerated() { timer.fire(mayRunInline: i == due.count - 1) }
                due.removeAll(keepingCapacity: true)
                continue  // the handlers took time: look again before sleeping
            }
            sleep(until: next)
        }
    }

    /// Sleeps until `deadline` (uptime nanoseconds; `.max`: no deadline) or a wake.
    private func sleep(until deadline: UInt64) {
        guard deadline != .max else {
            _ = lc_wait(wakeFD, timerFD, -1)
            return
        }
        let now = DispatchTime.now().uptimeNanoseconds
        guard deadline > now else { return }
        _ = lc_wait(wakeFD, timerFD, Int64(clamping: deadline - now))
    }
}

/// One timer of the timer thread; its deadline lives in the scheduler's state. A firing that races a re-arm is harmless,
/// as with Dispatch's timers (the engine acts only on what is due at `now`).
private final class ThreadTimer: RoomTimer, Sendable {
    let scheduler: TimerThreadScheduler
    let queue: DispatchQueue
    let inline: (@Sendable (_ work: () -> Void) -> Bool)?
    let handler: @Sendable () -> Void
    let cancelled = Atomic<Bool>(false)

    init(scheduler: TimerThreadScheduler, queue: DispatchQueue, inline: (@Sendable (_ work: () -> Void) -> Bool)?,
         handler: @escaping @Sendable () -> Void) {
        self.scheduler = scheduler
        self.queue = queue
        self.inline = inline
        self.handler = handler
    }

    func schedule(at deadline: Instant?) {
        guard !cancelled.load(ordering: .acquiring) else { return }
        scheduler.arm(self, at: deadline?.nanoseconds)
    }

    func cancel() {
        cancelled.store(true, ordering: .releasing)
        scheduler.arm(self, at: nil)
    }

    /// On the timer thread, once the deadline has come. The cancel check runs on the queue, right before the handler:
    /// a `cancel()` the queue has seen (`stop()` cancels there, or syncs with the queue after it) wins.
    func fire(mayRunInline: Bool) {
        let run: @Sendable () -> Void = { [self] in
            guard !cancelled.load(ordering: .acquiring) else { return }
            handler()
        }
        if mayRunInline, let inline, inline(run) { return }
        queue.async(execute: run)
    }
}
