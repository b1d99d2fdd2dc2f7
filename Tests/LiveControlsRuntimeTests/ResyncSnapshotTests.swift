@testable import LiveControlsRuntime
import LiveControlsEngine
import LiveControlsProtocol
import Logging
import Synchronization
import XCTest

/// Resyncs after an overflow: when a burst overflows many subscribers at once, they all get the same snapshot frame,
/// encoded once per room version; subscribers that are gone get none; a leave during a shutdown sends no patch.
final class ResyncSnapshotTests: XCTestCase {
    final class Member: RoomSubscriber, @unchecked Sendable {
        let session: SessionID
        let resyncs = Mutex<[Frame]>([])
        let frames = Mutex<[Frame]>([])
        let gone = Atomic<Bool>(false)
        init(_ session: String) { self.session = SessionID(session) }
        func deliver(_ frame: Frame) -> Bool {
            frames.withLock { $0.append(frame) }
            return true
        }
        func deliverResync(_ frame: Frame, room: String) -> Bool {
            resyncs.withLock { $0.append(frame) }
            return true
        }
        var isGone: Bool { gone.load(ordering: .relaxed) }
    }

    func makeRoom() throws -> (RoomRegistry, RoomRuntime) {
        let registry = RoomRegistry(config: .builtin(today: CivilDate(year: 2026, month: 2, day: 28)), maxRooms: 10, store: MemoryRoomStore(),
                                    waker: CountingWaker(), scheduler: ManualScheduler(), logger: Logger(label: "test"), roomQueueIntents: 100)
        try registry.start()
        let runtime = try registry.room(named: "demo", template: nil, force: false)
        runtime.queue.sync {}
        return (registry, runtime)
    }

    func testSubscribersResyncedAtOneVersionShareOneFrameAndALaterVersionGetsANewOne() throws {
        let (_, runtime) = try makeRoom()
        let members = (0..<3).map { Member("m\($0)") }
        for m in members { runtime.join(m, JoinRequest(room: "demo")) }
        runtime.queue.sync {}
        runtime.resyncAfterOverflow(members[0])
        runtime.resyncAfterOverflow(members[1])
        runtime.queue.sync {}
        let first = try XCTUnwrap(members[0].resyncs.withLock { $0.first })
        let second = try XCTUnwrap(members[1].resyncs.withLock { $0.first })
        XCTAssertTrue(first === second, "one encoding for both")
        _ = runtime.intent(members[2], IntentRequest(id: .int(1), room: "demo", control: "quantity", intent: "next"), inline: false)
        runtime.resyncAfterOverflow(members[2])
        runtime.queue.sync {}
        let third = try XCTUnwrap(members[2].resyncs.withLock { $0.first })
        XCTAssertFalse(third === first, "the room changed: a fresh snapshot")
        XCTAssertNotEqual(third.text, first.text)
    }

    func testASubscriberThatIsGoneGetsNoSnapshot() throws {
        let (_, runtime) = try makeRoom()
        let ann = Member("ann")
        runtime.join(ann, JoinRequest(room: "demo"))
        runtime.queue.sync {}
        ann.gone.store(true, ordering: .relaxed)
        runtime.resyncAfterOverflow(ann)
        runtime.queue.sync {}
        XCTAssertTrue(ann.resyncs.withLock { $0.isEmpty })
    }

    func testDuringAShutdownALeaveSendsNoPatchToTheOthers() throws {
        let (registry, runtime) = try makeRoom()
        let ann = Member("ann"), bob = Member("bob")
        runtime.join(ann, JoinRequest(room: "demo"))
        runtime.join(bob, JoinRequest(room: "demo"))
        runtime.queue.sync {}
        let before = ann.frames.withLock { $0.count }
        registry.beginShutdown()
        runtime.leave(bob, id: nil, reason: .disconnect)
        runtime.queue.sync {}
        XCTAssertEqual(ann.frames.withLock { $0.count }, before, "no presence patch for a leave while shutting down")
        XCTAssertNil(runtime.subscribers[bob.session], "the member is out all the same")
    }
}
