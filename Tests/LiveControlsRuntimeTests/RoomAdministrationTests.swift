@testable import LiveControlsRuntime
import Dispatch
import Foundation
import LiveControlsEngine
import LiveControlsProtocol
import LiveControlsSQLite
import Logging
import Synchronization
import XCTest

/// The server API's requests to rooms (`RoomAdministration` on one node), against the real SQLite store and a
/// manual clock. Replies are waited for with a timeout, never a guessed time.
final class RoomAdministrationTests: XCTestCase {
    var directory = ""
    var store: SQLiteRoomStore!
    var registry: RoomRegistry!
    let clock = ManualScheduler()
    let config = ServerConfig.builtin(today: CivilDate(year: 2026, month: 2, day: 28))

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("admin-\(UUID().uuidString)").path
        store = try SQLiteRoomStore(directory: directory)
        registry = RoomRegistry(config: config, maxRooms: 10, store: store, waker: CountingWaker(), scheduler: clock,
                                logger: Logger(label: "test"))
        try registry.start()
        // The config's room is handed to the store once its queue has run (a listing flushes what is queued).
        try registry.room(named: "demo", template: nil, force: false).queue.sync {}
    }

    override func tearDown() {
        registry.stopAll()
        store = nil
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Calls `call` and waits (at most 5 s) for its one reply.
    func reply<T: Sendable>(_ call: (@escaping @Sendable (T) -> Void) -> Void) throws -> T {
        let box = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        call { value in
            box.withLock { $0 = value }
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success, "no reply within 5 s")
        return try XCTUnwrap(box.withLock { $0 })
    }

    func code<T>(_ result: Result<T, AdminFailure>) -> ErrorCode? {
        if case let .failure(failure) = result { return failure.error.code }
        return nil
    }

    func set(_ control: String, _ value: JSONValue) -> ServerIntent {
        ServerIntent(control: ControlID(control), intent: "set", args: ["value": value])
    }

    func testACreatedRoomStartsWithItsInitialValuesAtVersionZeroAndIsStored() throws {
        let created = try reply { registry.createRoom("r1", template: nil, intents: [set("quantity", 42)], $0) }.get()
        XCTAssertEqual(created.version, 0)
        XCTAssertEqual(created.state["controls"]?["quantity"]?["value"], 42)
        XCTAssertEqual(try store.listRooms().map(\.name), ["demo", "r1"])
        XCTAssertEqual(code(try reply { registry.createRoom("r1", template: nil, intents: [], $0) }), .roomExists)
        XCTAssertEqual(code(try reply { registry.createRoom("demo", template: nil, intents: [], $0) }), .roomExists)
    }

    func testACreationWithARefusedIntentCreatesNothing() throws {
        let result = try reply { registry.createRoom("r2", template: nil, intents: [set("quantity", 5), set("quantity", 500)], $0) }
        guard case let .failure(failure) = result else { return XCTFail("created: \(result)") }
        XCTAssertEqual(failure.error.code, .outOfRange)
        XCTAssertEqual(failure.index, 1)
        XCTAssertEqual(code(try reply { registry.describeRoom("r2", $0) }), .unknownRoom)
        XCTAssertEqual(try store.listRooms().map(\.name), ["demo"])
        XCTAssertEqual(code(try reply { registry.createRoom("r3", template: "nope", intents: [], $0) }), .unknownTemplate)
    }

    func testIntentsAreAppliedAllOrNothingAndMembersSeeOnePatch() throws {
        let runtime = try registry.room(named: "demo", template: nil, force: false)
        let member = RecordingSubscriber("sA")
        runtime.join(member, JoinRequest(room: "demo"))
        let before = try reply { registry.describeRoom("demo", $0) }.get()
        XCTAssertEqual(before.members.map(\.session), [SessionID("sA")])

        let refused = try reply { registry.applyIntents("demo", [set("quantity", 3), ServerIntent(control: ControlID("quantity"), intent: "jump")], $0) }
        XCTAssertEqual(code(refused), .unknownIntent)
        XCTAssertEqual(try reply { registry.describeRoom("demo", $0) }.get().version, before.version, "nothing half-applied")

        let applied = try reply { registry.applyIntents("demo", [set("quantity", 3), ServerIntent(control: ControlID("month"), intent: "next")], $0) }.get()
        XCTAssertEqual(applied.version, before.version + 1)
        let patches = try member.messages.map { try JSONParser.parse($0) }.filter { $0["type"] == "patch" }
        XCTAssertEqual(patches.last?["version"]?.intValue, applied.version)
        XCTAssertEqual(patches.last?["cause"]?["kind"], "server")
        XCTAssertEqual(try store.loadRoom(named: "demo", historyLimit: 8)?.version, applied.version, "replied once durable")

        let history = try reply { registry.history("demo", epoch: nil, after: before.version, $0) }.get()
        XCTAssertEqual(history.patches.map(\.version), [applied.version])
        XCTAssertEqual(code(try reply { registry.history("demo", epoch: "other", after: 0, $0) }), .conflict)
        XCTAssertEqual(code(try reply { registry.history("demo", epoch: nil, after: applied.version + 1, $0) }), .conflict)

        let reset = try reply { registry.resetRoom("demo", $0) }.get()
        XCTAssertEqual(reset.version, applied.version + 1)
        XCTAssertEqual(try reply { registry.describeRoom("demo", $0) }.get().state["controls"]?["quantity"]?["value"], 1)
    }

    func testDeletingARoomTellsItsMembersForgetsItAndAJoinStartsItAnew() throws {
        _ = try reply { registry.createRoom("gone", template: nil, intents: [set("quantity", 7)], $0) }.get()
        let runtime = try registry.room(named: "gone", template: nil, force: false)
        let member = RecordingSubscriber("sB")
        runtime.join(member, JoinRequest(room: "gone"))
        let deleted = try reply { registry.deleteRoom("gone", $0) }.get()
        XCTAssertEqual(deleted.name, "gone")
        runtime.queue.sync {}
        let last = try JSONParser.parse(try XCTUnwrap(member.messages.last))
        XCTAssertEqual(last["code"], "room_deleted")
        XCTAssertEqual(last["room"], "gone")
        XCTAssertNil(last["id"])
        XCTAssertTrue(runtime.isClosed)

        _ = runtime.intent(member, IntentRequest(id: .int(9), room: "gone", control: "quantity", intent: "next"), inline: false)
        runtime.queue.sync {}
        XCTAssertEqual(try JSONParser.parse(try XCTUnwrap(member.messages.last))["code"], "not_joined")

        XCTAssertEqual(try store.listRooms().map(\.name), ["demo"])
        XCTAssertEqual(code(try reply { registry.describeRoom("gone", $0) }), .unknownRoom)
        let again = try registry.room(named: "gone", template: nil, force: false)
        XCTAssertFalse(again === runtime)
        XCTAssertEqual(try reply { registry.describeRoom("gone", $0) }.get().state["controls"]?["quantity"]?["value"], 1, "made anew")
        XCTAssertEqual(code(try reply { registry.deleteRoom("demo", $0) }), .conflict,
                       "the config's rooms are reset, not deleted")
    }

    func testARoomMadeAgainRightAfterItsDeletionIsStoredAfterTheDeletion() throws {
        _ = try reply { registry.createRoom("again", template: nil, intents: [], $0) }.get()
        let old = try registry.room(named: "again", template: nil, force: false)
        let done = DispatchSemaphore(value: 0)
        registry.deleteRoom("again") { _ in done.signal() }
        old.queue.sync {}  // the deletion is queued in the store; the registry may not have forgotten the room yet
        // Made again before the deletion is even durable: its reset write must land after the delete.
        let created = try reply { registry.createRoom("again", template: nil, intents: [set("quantity", 9)], $0) }.get()
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
        let stored = try XCTUnwrap(try store.loadRoom(named: "again", historyLimit: 8))
        XCTAssertEqual(stored.epoch, created.epoch)
    }

    func testTheListShowsLoadedAndStoredRooms() throws {
        _ = try reply { registry.createRoom("idle", template: nil, intents: [], $0) }.get()
        try registry.room(named: "idle", template: nil, force: false).queue.sync {}  // its last store answer handled
        clock.advance(nanoseconds: 700_000_000_000)
        registry.unloadIdleRooms(idleSeconds: 600)
        let list = try reply { registry.listRooms($0) }.get()
        XCTAssertEqual(list.map(\.name), ["demo", "idle"])
        XCTAssertEqual(list.map(\.loaded), [true, false])
    }
}

/// A reply that waits for a store write is answered even when that write fails.
final class RoomAdministrationStoreFailureTests: XCTestCase {
    func testAnAPIRequestWaitingForAFailedWriteIsAnsweredUnavailable() throws {
        let store = StoreFailureTests.FailingStore()
        let registry = RoomRegistry(config: .builtin(today: CivilDate(year: 2026, month: 2, day: 28)), maxRooms: 10, store: store,
                                    waker: CountingWaker(), scheduler: ManualScheduler(), logger: Logger(label: "test"))
        let runtime = try registry.room(named: "r1", template: nil, force: false)
        runtime.queue.sync {}
        store.waitUntilIdle()
        runtime.queue.sync {}
        store.failFrom.store(1, ordering: .relaxed)
        let answered = Mutex<Result<RoomVersion, AdminFailure>?>(nil)
        let done = DispatchSemaphore(value: 0)
        registry.applyIntents("r1", [ServerIntent(control: ControlID("quantity"), intent: "next")]) { result in
            answered.withLock { $0 = result }
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success, "the reply was dropped with the failed write")
        guard case let .failure(failure)? = answered.withLock({ $0 }) else { return XCTFail("applied: \(String(describing: answered.withLock { $0 }))") }
        XCTAssertEqual(failure.error.code, .unavailable)
        XCTAssertTrue(runtime.isClosed)
    }
}
