@testable import LiveControlsRuntime
import LiveControlsEngine
import LiveControlsProtocol
import Logging
import Synchronization
import Dispatch
import XCTest

/// A room's hold timers on the manual scheduler: ticks at exact instants, through the real runtime (queue,
/// durability, fan-out), with no sleeping and no real timer.
final class RoomTimerTests: XCTestCase {
    let clock = ManualScheduler(startingAt: 1_000_000_000)
    let waker = CountingWaker()

    func makeDemo() throws -> (RoomRegistry, RoomRuntime) {
        let registry = RoomRegistry(config: .builtin(today: CivilDate(year: 2026, month: 2, day: 28)), maxRooms: 10, store: MemoryRoomStore(), waker: waker,
                                    scheduler: clock, logger: Logger(label: "test"))
        try registry.start()
        let runtime = try registry.room(named: "demo", template: nil, force: false)
        runtime.queue.sync {}
        return (registry, runtime)
    }

    /// The values of `quantity` in the patches the subscriber got, and the tick number of each.
    func quantityPatches(_ subscriber: RecordingSubscriber) throws -> [(value: JSONValue, tick: JSONValue?)] {
        try subscriber.messages.map { try JSONParser.parse($0) }.compactMap { message in
            guard message["type"] == "patch",
                  let op = message["ops"]?.arrayValue?.first(where: { $0["path"] == "/controls/quantity/value" }),
                  let value = op["value"] else { return nil }
            return (value, message["cause"]?["tick"])
        }
    }

    func testHoldTicksFireAtTheirExactDeadlinesAndStopOnRelease() throws {
        let (registry, runtime) = try makeDemo()
        let member = RecordingSubscriber("s1")
        runtime.join(member, JoinRequest(room: "demo"))
        _ = runtime.intent(member, IntentRequest(id: .int(1), room: "demo", control: "quantity", intent: "press",
                                                 args: ["direction": "next"]), inline: false)
        runtime.queue.sync {}
        XCTAssertEqual(try quantityPatches(member).map(\.value), [2], "the press steps at once")
        XCTAssertEqual(clock.armed, [Instant(nanoseconds: 1_500_000_000)], "first tick 500 ms after the press")

        clock.advance(nanoseconds: 499_999_999)
        XCTAssertEqual(try quantityPatches(member).count, 1, "nothing before the delay")
        clock.advance(nanoseconds: 1)
        XCTAssertEqual(try quantityPatches(member).map(\.value), [2, 3])
        clock.advance(nanoseconds: 400_000_000)
        let patches = try quantityPatches(member)
        XCTAssertEqual(patches.map(\.value), [2, 3, 4, 5, 6, 7])
        XCTAssertEqual(patches.map(\.tick), [nil, 1, 2, 3, 4, 5])
        XCTAssertTrue(registry.metrics.exposition(connections: 0, rooms: 0, uptimeSeconds: 0)
            .contains("livecontrols_hold_ticks_total 5"))

        _ = runtime.intent(member, IntentRequest(id: .int(2), room: "demo", control: "quantity", intent: "release"), inline: false)
        runtime.queue.sync {}
        XCTAssertEqual(clock.armed, [], "the release parks the timer")
        clock.advance(nanoseconds: 5_000_000_000)
        XCTAssertEqual(try quantityPatches(member).count, 6, "no tick after the release")
    }

    func testAHoldEndsWhenTheHolderLeavesAndTheTimerIsParked() throws {
        let (_, runtime) = try makeDemo()
        let holder = RecordingSubscriber("s1")
        let watcher = RecordingSubscriber("s2")
        runtime.join(holder, JoinRequest(room: "demo"))
        runtime.join(watcher, JoinRequest(room: "demo"))
        _ = runtime.intent(holder, IntentRequest(id: .int(1), room: "demo", control: "quantity", intent: "press",
                                                 args: ["direction": "next"]), inline: false)
        runtime.queue.sync {}  // the press has run and armed the timer
        clock.advance(nanoseconds: 600_000_000)
        runtime.leave(holder, id: nil, reason: .disconnect)
        runtime.queue.sync {}
        XCTAssertEqual(clock.armed, [])
        clock.advance(nanoseconds: 5_000_000_000)
        XCTAssertEqual(try quantityPatches(watcher).map(\.value), [2, 3, 4], "press, ticks at 500 and 600 ms, nothing after")
        XCTAssertGreaterThan(waker.wakes, 0)
    }

    /// A one-shot delay (the cluster's resync retry) through the scheduler: at its instant, once, then gone.
    func testOnceRunsAtItsInstantOnceAndLeavesNoTimer() {
        let queue = DispatchQueue(label: "once")
        let runs = Mutex(0)
        clock.once(at: Instant(nanoseconds: clock.now().nanoseconds + 250_000_000), on: queue) { runs.withLock { $0 += 1 } }
        clock.advance(nanoseconds: 249_999_999)
        XCTAssertEqual(runs.withLock { $0 }, 0)
        clock.advance(nanoseconds: 1)
        XCTAssertEqual(runs.withLock { $0 }, 1)
        clock.advance(nanoseconds: 10_000_000_000)
        XCTAssertEqual(runs.withLock { $0 }, 1)
        XCTAssertEqual(clock.armed, [])
        XCTAssertEqual(clock.live, 0, "the timer was cancelled once it fired")
    }
}
