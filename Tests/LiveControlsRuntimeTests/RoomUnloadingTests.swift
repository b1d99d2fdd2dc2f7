@testable import LiveControlsRuntime
import LiveControlsEngine
import LiveControlsProtocol
import LiveControlsSQLite
import Logging
import Synchronization
import Dispatch
import XCTest

/// Idle rooms leave memory at an exact instant (manual clock): not while anyone is in them, never the config's
/// rooms; a join loads an unloaded room back from the store as it was, or starts it anew without one.
final class RoomUnloadingTests: XCTestCase {
    let clock = ManualScheduler()
    let waker = CountingWaker()

    func makeRegistry(store: any RoomStore = MemoryRoomStore(), maxRooms: Int = 10) throws -> RoomRegistry {
        let registry = RoomRegistry(config: .builtin(today: CivilDate(year: 2026, month: 2, day: 28)), maxRooms: maxRooms, store: store, waker: waker,
                                    scheduler: clock, logger: Logger(label: "test"))
        try registry.start()
        return registry
    }

    /// The room, once the work its creation queued has run (the sweep skips a room with queued work).
    func room(_ registry: RoomRegistry, _ name: String) throws -> RoomRuntime {
        let runtime = try registry.room(named: name, template: nil, force: false)
        runtime.queue.sync {}
        return runtime
    }

    /// A subscriber with no transport behind it.
    func connection() -> RecordingSubscriber { RecordingSubscriber() }

    func testAnEmptyRoomIsUnloadedExactlyAfterTheIdleTime() throws {
        let registry = try makeRegistry()
        let runtime = try room(registry, "u1")
        XCTAssertEqual(registry.count, 2, "demo (from the config) and u1")
        clock.advance(nanoseconds: 10_000_000_000 - 1)
        registry.unloadIdleRooms(idleSeconds: 10)
        XCTAssertEqual(registry.count, 2, "one nanosecond short of the idle time")
        clock.advance(nanoseconds: 1)
        registry.unloadIdleRooms(idleSeconds: 10)
        XCTAssertEqual(registry.count, 1, "u1 unloaded; demo is the config's and stays")
        XCTAssertFalse(try room(registry, "u1") === runtime, "a join makes a new room")
        XCTAssertEqual(registry.metrics.exposition(connections: 0, rooms: 0, uptimeSeconds: 0)
            .contains("livecontrols_rooms_unloaded_total 1"), true)
    }

    func testIdleSecondsZeroNeverUnloads() throws {
        let registry = try makeRegistry()
        _ = try room(registry, "u1")
        clock.advance(nanoseconds: 1_000_000_000_000)
        registry.unloadIdleRooms(idleSeconds: 0)
        XCTAssertEqual(registry.count, 2)
    }

    func testARoomWithASubscriberStaysAndItsIdleTimeStartsWhenTheLastOneLeaves() throws {
        let registry = try makeRegistry()
        let runtime = try room(registry, "u1")
        let member = connection()
        runtime.join(member, JoinRequest(room: "u1"))
        clock.advance(nanoseconds: 60_000_000_000)
        registry.unloadIdleRooms(idleSeconds: 10)
        XCTAssertEqual(registry.count, 2, "someone is in it")
        runtime.leave(member, id: nil, reason: .disconnect)
        runtime.queue.sync {}  // the leave has run
        clock.advance(nanoseconds: 9_999_999_999)
        registry.unloadIdleRooms(idleSeconds: 10)
        XCTAssertEqual(registry.count, 2, "empty for less than the idle time")
        clock.advance(nanoseconds: 1)
        registry.unloadIdleRooms(idleSeconds: 10)
        XCTAssertEqual(registry.count, 1)
    }

    func testAJoinAndLeaveStillQueuedWhenTheSweepLooksKeepTheRoom() throws {
        let registry = try makeRegistry()
        let runtime = try room(registry, "u1")
        clock.advance(nanoseconds: 60_000_000_000)  // empty for a minute, as far as the sweep can see
        let member = connection()
        // Hold the room's queue so the join and leave are still queued when the sweep reads `emptySince`; the
        // sweep's check on the queue then waits for them (the gate opens a moment later, from another thread).
        let gate = DispatchSemaphore(value: 0)
        runtime.queue.async { gate.wait() }
        runtime.join(member, JoinRequest(room: "u1"))
        runtime.leave(member, id: nil, reason: .leave)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(200)) { gate.signal() }
        registry.unloadIdleRooms(idleSeconds: 10)
        XCTAssertEqual(registry.count, 2, "someone was there a moment ago (or still is): the idle time starts again")
        runtime.queue.sync {}  // the join and leave have run
        clock.advance(nanoseconds: 10_000_000_000)
        registry.unloadIdleRooms(idleSeconds: 10)
        XCTAssertEqual(registry.count, 1)
    }

    func testARunningTimerKeepsTheRoom() throws {
        let registry = try makeRegistry()
        let runtime = try room(registry, "u1")
        // Armed an hour ahead on the manual clock: it does not fire while the test runs.
        runtime.queue.sync { runtime.arm(ControlID("quantity"), at: Instant(nanoseconds: clock.now().nanoseconds + 3_600_000_000_000)) }
        clock.advance(nanoseconds: 60_000_000_000)
        registry.unloadIdleRooms(idleSeconds: 10)
        XCTAssertEqual(registry.count, 2)
        runtime.queue.sync { runtime.arm(ControlID("quantity"), at: nil) }
        registry.unloadIdleRooms(idleSeconds: 10)
        XCTAssertEqual(registry.count, 1)
    }

    func testTheRoomLimitCountsLoadedRoomsOnly() throws {
        let registry = try makeRegistry(maxRooms: 2)
        _ = try room(registry, "u1")
        XCTAssertThrowsError(try room(registry, "u2")) { error in
            XCTAssertEqual((error as? ProtocolError)?.code, .roomLimit)
        }
        clock.advance(nanoseconds: 10_000_000_000)
        registry.unloadIdleRooms(idleSeconds: 10)
        XCTAssertNoThrow(try room(registry, "u2"))
    }

    func testAStoredRoomComesBackAsItWas() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("unload-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteRoomStore(directory: directory)
        let registry = try makeRegistry(store: store)
        let runtime = try room(registry, "u1")
        let member = connection()
        runtime.join(member, JoinRequest(room: "u1"))
        _ = runtime.intent(member, IntentRequest(id: .int(1), room: "u1", control: "quantity", intent: "set", args: ["value": 42]), inline: false)
        runtime.leave(member, id: nil, reason: .disconnect)
        let (epoch, version) = runtime.queue.sync { (runtime.room.epoch, runtime.room.version) }
        store.waitUntilIdle()  // every write durable, so nothing is held
        runtime.queue.sync {}   // and the room has seen it
        clock.advance(nanoseconds: 10_000_000_000)
        registry.unloadIdleRooms(idleSeconds: 10)
        XCTAssertEqual(registry.count, 1)

        let loaded = try room(registry, "u1")
        XCTAssertFalse(loaded === runtime)
        let state = loaded.queue.sync { (loaded.room.epoch, loaded.room.version, loaded.room.render()) }
        XCTAssertEqual(state.0, epoch, "same epoch: clients resume")
        XCTAssertEqual(state.1, version)
        XCTAssertEqual(state.2["controls"]?["quantity"]?["value"], 42)
        XCTAssertTrue(registry.metrics.exposition(connections: 0, rooms: 0, uptimeSeconds: 0).contains("livecontrols_rooms_loaded_total 1"))
    }

    /// A countdown's deadline is kept in server time: a server that was down over it finishes the timer when it loads the
    /// room — late, once (the next load finds it finished) — and runs its `then` in the same change.
    func testACountdownWhoseDeadlinePassedWhileTheServerWasDownFinishesOnceWhenLoaded() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("timer-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let startedAt = clock.now().nanoseconds
        // Each server in a scope of its own: the store's lock on the directory goes with it.
        do {
            let store = try SQLiteRoomStore(directory: directory)
            let registry = try makeRegistry(store: store)
            let runtime = try room(registry, "u1")
            let member = connection()
            runtime.join(member, JoinRequest(room: "u1"))
            _ = runtime.intent(member, IntentRequest(id: .int(1), room: "u1", control: "timebox", intent: "start", args: [:]), inline: false)
            let endsAt = try runtime.queue.sync { try XCTUnwrap(runtime.room.render()["controls"]?["timebox"]?["endsAt"]?.intValue) }
            XCTAssertEqual(endsAt, ManualScheduler.unixMillisecondsAtZero + Int(clock.now().nanoseconds / 1_000_000) + 300_000)
            store.waitUntilIdle()
            registry.stopAll()
        }

        // The next process starts an hour later, with its monotonic clock elsewhere.
        do {
            let store = try SQLiteRoomStore(directory: directory)
            let later = ManualScheduler(startingAt: startedAt + 3_600_000_000_000)
            let restarted = RoomRegistry(config: .builtin(today: CivilDate(year: 2026, month: 2, day: 28)), maxRooms: 10, store: store,
                                         waker: waker, scheduler: later, logger: Logger(label: "test"))
            try restarted.start()
            let loaded = try restarted.room(named: "u1", template: nil, force: false)
            loaded.queue.sync {}
            later.advance(nanoseconds: 0)  // what is due fires
            let timebox = loaded.queue.sync { loaded.room.render()["controls"]?["timebox"] }
            XCTAssertEqual(timebox?["status"], "finished")
            let finishes = loaded.queue.sync {
                loaded.room.history.changes(after: 0, current: loaded.room.version)?.filter { $0.cause["kind"] == "timer" }.count
            }
            XCTAssertEqual(finishes, 1)
            store.waitUntilIdle()
            restarted.stopAll()
        }

        let third = RoomRegistry(config: .builtin(today: CivilDate(year: 2026, month: 2, day: 28)), maxRooms: 10,
                                 store: try SQLiteRoomStore(directory: directory), waker: waker,
                                 scheduler: ManualScheduler(startingAt: 1_000_000_000), logger: Logger(label: "test"))
        try third.start()
        let again = try third.room(named: "u1", template: nil, force: false)
        let state = again.queue.sync { (again.room.render()["controls"]?["timebox"]?["status"], again.room.wakeDeadline(of: ControlID("timebox"))) }
        XCTAssertEqual(state.0, "finished")
        XCTAssertNil(state.1, "nothing left to fire")
        third.stopAll()
    }

    func testAtTheRoomLimitAStoredRoomIsNotLoaded() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("unload-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteRoomStore(directory: directory)
        let registry = try makeRegistry(store: store, maxRooms: 2)
        let first = try room(registry, "u1")
        store.waitUntilIdle()
        first.queue.sync {}  // its `markDurable`
        clock.advance(nanoseconds: 10_000_000_000)
        registry.unloadIdleRooms(idleSeconds: 10)
        _ = try room(registry, "u2")  // the second place is taken again
        XCTAssertThrowsError(try room(registry, "u1")) { error in
            XCTAssertEqual((error as? ProtocolError)?.code, .roomLimit)
        }
        XCTAssertFalse(registry.metrics.exposition(connections: 0, rooms: 0, uptimeSeconds: 0).contains("livecontrols_rooms_loaded_total 1"),
                       "refused before anything was loaded")
    }
}
