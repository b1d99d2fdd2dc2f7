import Dispatch
import Foundation
import Synchronization
import XCTest

@testable import LiveControlsEngine
@testable import LiveControlsRuntime

/// The timer thread on the real clock: each test waits for the firing it expects (with a time-out), never for a
/// guessed time, and checks the instant it ran at against the deadline.
final class TimerThreadSchedulerTests: XCTestCase {
    let scheduler = TimerThreadScheduler.shared
    let queue = DispatchQueue(label: "test.timer")

    /// Where and when each firing ran.
    final class Firings: Sendable {
        struct Firing { var at: Instant; var thread: String?; var onQueue: Bool }
        let list = Mutex<[Firing]>([])
        let fired = DispatchSemaphore(value: 0)
        func record(_ scheduler: TimerThreadScheduler, _ queue: DispatchQueue) {
            let onQueue = DispatchQueue.getSpecific(key: TimerThreadSchedulerTests.queueKey) == queue.label
            let thread = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines)
            list.withLock { $0.append(Firing(at: scheduler.now(), thread: thread, onQueue: onQueue)) }
            fired.signal()
        }
    }
    static let queueKey = DispatchSpecificKey<String>()

    override func setUp() {
        queue.setSpecific(key: Self.queueKey, value: queue.label)
    }

    func timer(_ firings: Firings, inline: Bool?) -> any RoomTimer {
        let scheduler = self.scheduler, queue = self.queue
        let offer: (@Sendable (_ work: () -> Void) -> Bool)? = inline.map { take in { @Sendable work in
            guard take else { return false }
            queue.sync(execute: work)
            return true
        } }
        return scheduler.makeTimer(on: queue, inline: offer) { firings.record(scheduler, queue) }
    }

    func testAHandlerRunsOnItsQueueAtItsDeadlineNotBefore() throws {
        for inline in [true, false, nil] as [Bool?] {
            let firings = Firings()
            let t = timer(firings, inline: inline)
            let deadline = Instant(nanoseconds: scheduler.now().nanoseconds + 20_000_000)
            t.schedule(at: deadline)
            XCTAssertEqual(firings.fired.wait(timeout: .now() + 5), .success)
            let firing = try XCTUnwrap(firings.list.withLock { $0.first })
            XCTAssertGreaterThanOrEqual(firing.at, deadline)
            XCTAssertTrue(firing.onQueue, "on the timer's queue")
            // Inline: on the timer thread itself (queue.sync runs there); otherwise a worker of the queue's pool.
            XCTAssertEqual(firing.thread == "lc-timers", inline == true, "\(String(describing: inline)): \(firing.thread ?? "")")
            t.cancel()
        }
    }

    func testReArmingReplacesTheDeadlineAndNilOrCancelStopsIt() {
        let firings = Firings()
        let t = timer(firings, inline: true)
        let now = scheduler.now().nanoseconds
        t.schedule(at: Instant(nanoseconds: now + 10_000_000))
        t.schedule(at: Instant(nanoseconds: now + 30_000_000))  // replaces the first
        XCTAssertEqual(firings.fired.wait(timeout: .now() + 5), .success)
        XCTAssertGreaterThanOrEqual(firings.list.withLock { $0[0].at.nanoseconds }, now + 30_000_000, "the first deadline was replaced")
        // Parked, then cancelled: neither fires. A third timer's firing after both deadlines shows it.
        t.schedule(at: Instant(nanoseconds: now + 40_000_000))
        t.schedule(at: nil)
        let other = timer(firings, inline: true)
        other.schedule(at: Instant(nanoseconds: now + 50_000_000))
        let cancelled = timer(firings, inline: false)
        cancelled.schedule(at: Instant(nanoseconds: now + 45_000_000))
        cancelled.cancel()
        cancelled.schedule(at: Instant(nanoseconds: now + 46_000_000))  // after cancel: nothing
        XCTAssertEqual(firings.fired.wait(timeout: .now() + 5), .success)
        queue.sync {}  // an async firing of the cancelled timer, had there been one, has run by now
        XCTAssertEqual(firings.list.withLock { $0.count }, 2, "only the re-armed one and the third")
        other.cancel()
    }

    func testAnEarlierDeadlineWakesTheSleepingThread() {
        let far = Firings(), near = Firings()
        let farTimer = timer(far, inline: true), nearTimer = timer(near, inline: true)
        let now = scheduler.now().nanoseconds
        farTimer.schedule(at: Instant(nanoseconds: now + 60_000_000_000))
        let deadline = now + 20_000_000
        nearTimer.schedule(at: Instant(nanoseconds: deadline))
        XCTAssertEqual(near.fired.wait(timeout: .now() + 5), .success, "not kept asleep by the later deadline")
        XCTAssertGreaterThanOrEqual(near.list.withLock { $0[0].at.nanoseconds }, deadline)
        farTimer.cancel()
        nearTimer.cancel()
    }

    func testTimersOfOneDeadlineFireInTheOrderTheyWereArmed() {
        let firings = Firings()
        let order = Mutex<[Int]>([])
        let deadline = Instant(nanoseconds: scheduler.now().nanoseconds + 20_000_000)
        let timers = (0..<5).map { i in
            scheduler.makeTimer(on: queue, inline: nil) {
                order.withLock { $0.append(i) }
                firings.fired.signal()
            }
        }
        for t in timers { t.schedule(at: deadline) }
        for _ in timers { XCTAssertEqual(firings.fired.wait(timeout: .now() + 5), .success) }
        XCTAssertEqual(order.withLock { $0 }, [0, 1, 2, 3, 4])
        for t in timers { t.cancel() }
    }

    /// A timer re-armed again and again (a lease renewed) keeps one entry in the heap, not one per re-arm; re-armed
    /// earlier, it fires at the earlier deadline.
    func testReArmingOftenKeepsTheHeapSmallAndAnEarlierDeadlineWins() {
        let firings = Firings()
        let t = timer(firings, inline: true)
        let before = scheduler.heapCount
        let now = scheduler.now().nanoseconds
        for i in 0..<10_000 { t.schedule(at: Instant(nanoseconds: now + 60_000_000_000 + UInt64(i))) }
        // One entry for this timer (the process's other timers, of servers other tests started, may come and go: a
        // margin for them, far below the 10,000 re-arms).
        XCTAssertLessThanOrEqual(scheduler.heapCount, before + 20)
        let deadline = now + 20_000_000
        t.schedule(at: Instant(nanoseconds: deadline))
        XCTAssertEqual(firings.fired.wait(timeout: .now() + 5), .success)
        XCTAssertGreaterThanOrEqual(firings.list.withLock { $0[0].at.nanoseconds }, deadline)
        t.cancel()
    }

    /// A firing already handed to its queue (busy, so it waits there) does nothing once the timer is cancelled: the
    /// cancel is checked on the queue, right before the handler (cluster shutdown cancels its ticker, then syncs).
    func testACancelWinsOverAFiringWaitingOnItsQueue() {
        let firings = Firings()
        let busy = DispatchSemaphore(value: 0), holding = DispatchSemaphore(value: 0)
        queue.async { holding.signal(); busy.wait() }
        holding.wait()
        let t = timer(firings, inline: false)
        t.schedule(at: Instant(nanoseconds: scheduler.now().nanoseconds + 5_000_000))
        // A probe on another queue, due after t: when it has fired, the timer thread has handed t's firing to t's queue.
        let probed = DispatchSemaphore(value: 0)
        let probe = scheduler.makeTimer(on: DispatchQueue(label: "test.probe"), inline: nil) { probed.signal() }
        probe.schedule(at: Instant(nanoseconds: scheduler.now().nanoseconds + 10_000_000))
        XCTAssertEqual(probed.wait(timeout: .now() + 5), .success)
        t.cancel()
        busy.signal()
        queue.sync {}
        XCTAssertEqual(firings.list.withLock { $0.count }, 0, "the cancelled timer's queued firing did nothing")
        probe.cancel()
    }

    /// An owner that declines (its queue may be busy) gets its firing on the queue after what waits there.
    func testADeclinedInlineFiringRunsOnTheQueueAfterItsWork() {
        let firings = Firings()
        let busy = DispatchSemaphore(value: 0), holding = DispatchSemaphore(value: 0)
        let order = Mutex<[String]>([])
        queue.async { holding.signal(); busy.wait(); order.withLock { $0.append("work") } }
        holding.wait()
        let scheduler = self.scheduler, queue = self.queue
        let t = scheduler.makeTimer(on: queue, inline: { _ in false }) {
            order.withLock { $0.append("tick") }
            firings.record(scheduler, queue)
        }
        t.schedule(at: Instant(nanoseconds: scheduler.now().nanoseconds + 5_000_000))
        busy.signal()
        XCTAssertEqual(firings.fired.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(order.withLock { $0 }, ["work", "tick"])
        XCTAssertEqual(firings.list.withLock { $0[0].thread } == "lc-timers", false, "not on the timer thread")
        t.cancel()
    }
}
