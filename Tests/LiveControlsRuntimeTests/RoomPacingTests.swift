@testable import LiveControlsRuntime
import Dispatch
import LiveControlsEngine
import LiveControlsProtocol
import Logging
import Synchronization
import XCTest

/// Backpressure between a room and its transport: a sender whose room's queue is full is told when it has drained to
/// half (`whenQueueDrains`), and a large room pauses its queue while the transport is behind on writing.
final class RoomPacingTests: XCTestCase {
    final class BehindWaker: SubscriberWaker {
        let behind = Atomic<Bool>(false)
        func wake(_ subscribers: [any RoomSubscriber]) {}
        func wake(_ subscriber: any RoomSubscriber) {}
        var isBehind: Bool { behind.load(ordering: .relaxed) }
    }

    typealias Member = IntentBackpressureTests.Member

    func makeRoom(queue limit: Int, waker: any SubscriberWaker = CountingWaker()) throws -> RoomRuntime {
        let registry = RoomRegistry(config: .builtin(today: CivilDate(year: 2026, month: 2, day: 28)), maxRooms: 10, store: MemoryRoomStore(),
                                    waker: waker, scheduler: ManualScheduler(), logger: Logger(label: "test"), roomQueueIntents: limit)
        try registry.start()
        let runtime = try registry.room(named: "demo", template: nil, force: false)
        runtime.queue.sync {}
        return runtime
    }

    func next(_ id: Int) -> IntentRequest { IntentRequest(id: .int(id), room: "demo", control: "quantity", intent: "next") }

    func testASenderToAFullQueueIsToldOnceItHasDrainedToHalf() throws {
        let runtime = try makeRoom(queue: 4)
        let ann = Member("ann")
        runtime.join(ann, JoinRequest(room: "demo"))
        runtime.queue.sync {}
        XCTAssertFalse(runtime.whenQueueDrains { XCTFail("not full: no wait") }, "an empty queue asks nobody to wait")

        let release = DispatchSemaphore(value: 0), started = DispatchSemaphore(value: 0)
        runtime.submit { started.signal(); release.wait() }
        started.wait()
        // Each intent, as it starts, notes how many were still queued; `resumed` notes how many when it was called.
        for id in 1...4 { _ = runtime.intent(ann, next(id), inline: false) }
        let resumedWith = Mutex<[Int]>([])
        XCTAssertTrue(runtime.whenQueueDrains { resumedWith.withLock { $0.append(runtime.queuedIntents.load(ordering: .relaxed)) } })
        XCTAssertEqual(resumedWith.withLock { $0 }, [], "full: the sender waits")
        release.signal()
        runtime.queue.sync {}
        XCTAssertEqual(resumedWith.withLock { $0 }, [2], "told once, when half of the queue (2 of 4) was left")
        XCTAssertEqual(ann.of("ack").count, 4, "and nothing it had queued was refused")
    }

    func testALargeRoomPausesWhileTheTransportIsBehindAndASmallOneNever() throws {
        let waker = BehindWaker()
        let runtime = try makeRoom(queue: 1024, waker: waker)
        for i in 0..<inlineSubscriberLimit { runtime.join(Member("m\(i)"), JoinRequest(room: "demo")) }
        runtime.queue.sync {}
        waker.behind.store(true, ordering: .relaxed)
        // At the limit the room is small: it never pauses.
        runtime.submit {}
        runtime.queue.sync {}
        XCTAssertFalse(runtime.pacing.load(ordering: .relaxed))

        runtime.join(Member("one more"), JoinRequest(room: "demo"))  // past the limit, and the transport is behind
        let ran = Atomic<Bool>(false)
        runtime.submit { ran.store(true, ordering: .relaxed) }
        // The join's block paused the queue (counted below); with the transport still behind, the pause ends at its
        // cap (100 ms) and the next block runs: `sync` waits for that, no clock guessed.
        runtime.queue.sync {}
        XCTAssertTrue(ran.load(ordering: .relaxed))
        waker.behind.store(false, ordering: .relaxed)
        runtime.submit {}
        runtime.queue.sync {}  // a block that paused again resumes within a check (2 ms) of the catch-up
        XCTAssertFalse(runtime.pacing.load(ordering: .relaxed))
        let text = runtime.metrics.exposition(connections: 0, rooms: 1, uptimeSeconds: 0)
        let pauses = text.split(separator: "\n").first { $0.hasPrefix("livecontrols_room_pauses_total ") }
        XCTAssertGreaterThanOrEqual(pauses.flatMap { Int($0.split(separator: " ")[1]) } ?? 0, 1, "the pause is counted")
    }
}
