@testable import LiveControlsRuntime
import Dispatch
import Foundation
import LiveControlsSQLite
import LiveControlsEngine
import LiveControlsProtocol
import Logging
import Synchronization
import XCTest

/// Issue 17: a store write that failed was logged, and the change acknowledged anyway. Now nothing that is not
/// durable is ever shown: the room stops, its members are told, and a join loads it again from the store.
final class StoreFailureTests: XCTestCase {
    /// Asynchronous like SQLite; writes of versions from `failFrom` on fail.
    final class FailingStore: RoomStore, Sendable {
        let queue = DispatchQueue(label: "failing-store")
        let failFrom = Atomic<Int>(.max)
        func write(_ write: StoreWrite, done: @escaping @Sendable ((any Error)?) -> Void) {
            let fails = write.version >= failFrom.load(ordering: .relaxed)
            queue.async { done(fails ? SQLiteLikeError() : nil) }
        }
        var isSynchronous: Bool { false }
        func waitUntilIdle() { queue.sync {} }
    }
    struct SQLiteLikeError: Error {}

    let store = FailingStore()
    let clock = ManualScheduler()

    /// Every write handed to the store has been answered and the room has seen the answers.
    func settle(_ runtime: RoomRuntime) {
        runtime.queue.sync {}
        store.waitUntilIdle()
        runtime.queue.sync {}
    }

    func messages(_ subscriber: RecordingSubscriber) throws -> [JSONValue] {
        try subscriber.messages.map { try JSONParser.parse($0) }
    }

    func testAFailedWriteIsNeverAckedTheRoomStopsAndAJoinLoadsItAgain() throws {
        let registry = RoomRegistry(config: .builtin(today: CivilDate(year: 2026, month: 2, day: 28)), maxRooms: 10, store: store,
                                    waker: CountingWaker(), scheduler: clock, logger: Logger(label: "test"))
        let runtime = try registry.room(named: "r1", template: nil, force: false)
        settle(runtime)
        let member = RecordingSubscriber("s1")
        runtime.join(member, JoinRequest(room: "r1"))
        settle(runtime)
        _ = runtime.intent(member, IntentRequest(id: .int(1), room: "r1", control: "quantity", intent: "set", args: ["value": 5]), inline: false)
        settle(runtime)
        let before = try messages(member)
        XCTAssertEqual(before.last?["type"], "ack")
        let durable = try XCTUnwrap(before.last?["version"]?.intValue)

        store.failFrom.store(durable + 1, ordering: .relaxed)
        _ = runtime.intent(member, IntentRequest(id: .int(2), room: "r1", control: "quantity", intent: "set", args: ["value": 6]), inline: false)
        settle(runtime)
        let after = Array(try messages(member).dropFirst(before.count))
        XCTAssertEqual(after.count, 1, "no patch and no ack for the version that was not stored: \(after)")
        XCTAssertEqual(after.first?["type"], "error")
        XCTAssertEqual(after.first?["code"], "unavailable")
        XCTAssertEqual(after.first?["room"], "r1")
        XCTAssertNil(after.first?["id"], "the room stopped: not a reply to the intent")
        XCTAssertTrue(runtime.isClosed)

        // A leave of the stopped room is already done: `left`, and no second notice for any other leave.
        runtime.leave(member, id: .string("bye"), reason: .leave)
        runtime.leave(member, id: nil, reason: .expired)
        settle(runtime)
        let last = Array(try messages(member).dropFirst(before.count + 1))
        XCTAssertEqual(last.map { $0["type"] }, ["left"])
        XCTAssertEqual(last.first?["id"], "bye")

        // The registry forgets the stopped room (on its housekeeping queue); the next join gets a new one.
        registry.housekeeping.sync {}
        XCTAssertEqual(registry.count, 0)
        let again = try registry.room(named: "r1", template: nil, force: false)
        XCTAssertFalse(again === runtime)
        XCTAssertFalse(again.isClosed)
    }
}

/// The SQLite store's side: after a failed write, the room's later writes are refused (landing them would leave
/// a hole in its chain of versions) until the room is loaded again from what is stored.
final class SQLiteChainTests: XCTestCase {
    func write(_ store: SQLiteRoomStore, _ write: StoreWrite) -> (any Error)? {
        let result = Mutex<(any Error)??>(nil)
        let done = DispatchSemaphore(value: 0)
        store.write(write) { error in
            result.withLock { $0 = .some(error) }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }

    func testAfterAFailedWriteLaterOnesAreRefusedUntilTheRoomIsLoadedAgain() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chain-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteRoomStore(directory: directory)
        let config = ServerConfig.builtin(today: CivilDate(year: 2026, month: 2, day: 28))
        var room = Room(name: "r", template: try config.recipe(forRoom: "r", template: nil), epoch: "e", historyLimit: 8)
        XCTAssertNil(write(store, room.storeReset()))
        let joined = room.join(SessionID("s"), name: nil, roles: ["admin"])
        if let patch = joined.patch { XCTAssertNil(write(store, room.storeWrite(for: patch, keepHistory: 8))) }
        func set(_ value: Int) throws -> StoreWrite {
            let update = try room.apply(control: ControlID("quantity"), intent: "set", args: ["value": .int(value)], by: SessionID("s"),
                                        requestID: nil, at: Instant(nanoseconds: 0))
            return room.storeWrite(for: try XCTUnwrap(update.patch), keepHistory: 8)
        }
        let v1 = try set(5)
        XCTAssertNil(write(store, v1))
        XCTAssertNotNil(write(store, v1), "the same version twice breaks the chain (a UNIQUE constraint)")
        XCTAssertNotNil(write(store, try set(6)), "refused: it builds on a write that failed")
        let loaded = try XCTUnwrap(try store.loadRoom(named: "r", historyLimit: 8))
        XCTAssertEqual(loaded.version, v1.version, "what is stored is the last version that was")
        var reloaded = try XCTUnwrap(Room(restoring: loaded, template: try config.recipe(forRoom: "r", template: nil), historyLimit: 8))
        let next = try reloaded.apply(control: ControlID("quantity"), intent: "set", args: ["value": 7], by: SessionID("s"),
                                      requestID: nil, at: Instant(nanoseconds: 0))
        XCTAssertNil(write(store, reloaded.storeWrite(for: try XCTUnwrap(next.patch), keepHistory: 8)), "loaded again: writes land")
    }
}
