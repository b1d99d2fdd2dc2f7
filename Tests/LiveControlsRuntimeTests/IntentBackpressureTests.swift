@testable import LiveControlsRuntime
import Dispatch
import LiveControlsEngine
import LiveControlsProtocol
import Logging
import Synchronization
import XCTest

/// Backpressure on intents: a room takes at most `roomQueueIntents` waiting intents, refuses more at once with
/// `overloaded`, and drops the queued intents of connections that closed.
final class IntentBackpressureTests: XCTestCase {
    final class Member: RoomSubscriber, @unchecked Sendable {
        let session: SessionID
        let received = Mutex<[JSONValue]>([])
        let gone = Atomic<Bool>(false)
        init(_ session: String) { self.session = SessionID(session) }
        func deliver(_ frame: Frame) -> Bool {
            received.withLock { $0.append(try! JSONParser.parse(frame.text)) }
            return true
        }
        var isGone: Bool { gone.load(ordering: .relaxed) }
        func of(_ type: String) -> [JSONValue] { received.withLock { $0.filter { $0["type"] == .string(type) } } }
    }

    func makeRoom(queue limit: Int) throws -> (RoomRegistry, RoomRuntime) {
        let registry = RoomRegistry(config: .builtin(today: CivilDate(year: 2026, month: 2, day: 28)), maxRooms: 10, store: MemoryRoomStore(),
                                    waker: CountingWaker(), scheduler: ManualScheduler(), logger: Logger(label: "test"), roomQueueIntents: limit)
        try registry.start()
        let runtime = try registry.room(named: "demo", template: nil, force: false)
        runtime.queue.sync {}
        return (registry, runtime)
    }

    func next(_ id: Int) -> IntentRequest { IntentRequest(id: .int(id), room: "demo", control: "quantity", intent: "next") }

    /// Holds the room's queue until the returned semaphore is signalled.
    func block(_ runtime: RoomRuntime) -> DispatchSemaphore {
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        runtime.submit { started.signal(); release.wait() }  // counted: intents now queue behind it
        started.wait()
        return release
    }

    func testIntentsPastTheRoomsQueueAreRefusedAtOnceAndTheRestApplyInOrder() throws {
        let (_, runtime) = try makeRoom(queue: 3)
        let ann = Member("ann")
        runtime.join(ann, JoinRequest(room: "demo"))
        runtime.queue.sync {}
        let release = block(runtime)
        for id in 1...5 { XCTAssertNil(runtime.intent(ann, next(id), inline: false)) }
        let refused = ann.of("error")
        XCTAssertEqual(refused.map { $0["id"] }, [.int(4), .int(5)], "refused at once, while the room is still busy")
        XCTAssertEqual(refused.first?["code"], "overloaded")
        XCTAssertEqual(refused.first?["room"], "demo")
        release.signal()
        runtime.queue.sync {}
        XCTAssertEqual(ann.of("ack").map { $0["id"] }, [.int(1), .int(2), .int(3)])
        XCTAssertEqual(ann.of("ack").last?["version"], .int(4), "the join and three intents")
        _ = runtime.intent(ann, next(6), inline: false)
        runtime.queue.sync {}
        XCTAssertEqual(ann.of("ack").last?["id"], .int(6), "the queue has room again")
    }

    func testTheQueuedIntentsOfAConnectionThatClosedAreDropped() throws {
        let (_, runtime) = try makeRoom(queue: 100)
        let ann = Member("ann")
        let bob = Member("bob")
        for member in [ann, bob] { runtime.join(member, JoinRequest(room: "demo")) }
        runtime.queue.sync {}
        let before = runtime.queue.sync { runtime.room.version }
        let release = block(runtime)
        for id in 1...10 { _ = runtime.intent(ann, next(id), inline: false) }
        _ = runtime.intent(bob, next(11), inline: false)
        ann.gone.store(true, ordering: .relaxed)
        runtime.leave(ann, id: nil, reason: .disconnect)
        release.signal()
        runtime.queue.sync {}
        XCTAssertEqual(ann.of("ack"), [], "none of the closed connection's intents was applied")
        XCTAssertEqual(bob.of("ack").map { $0["version"] }, [.int(before + 1)], "the other member's intent was")
        XCTAssertEqual(runtime.queue.sync { runtime.room.version }, before + 2, "bob's intent and ann's leave")
    }
}
