@testable import LiveControlsRuntime
import LiveControlsEngine
import LiveControlsProtocol
import XCTest

/// One endpoint's deliveries at exact instants: order per room, rooms side by side, backoff, giving up.
final class WebhookQueueTests: XCTestCase {
    let endpoint = WebhookEndpoint(url: "http://h.example", events: ["*"], key: [1, 2, 3], maxAttempts: 3, retryMs: 100, maxRetryMs: 300)

    func event(_ id: String, room: String) -> WebhookEvent {
        WebhookEvent(id: id, type: "room.changed", room: room, timestamp: 0, data: [:])
    }

    func ms(_ value: Int) -> Instant { .milliseconds(value) }

    func testARoomsEventsGoOneAfterAnotherWhileOtherRoomsGoAlongside() {
        var queue = WebhookQueue(endpoint: endpoint)
        for (id, room) in [("a1", "a"), ("a2", "a"), ("b1", "b")] { XCTAssertTrue(queue.add(event(id, room: room), now: ms(0))) }
        XCTAssertEqual(queue.start(now: ms(0)).map(\.event.id), ["a1", "b1"], "one per room at a time")
        XCTAssertEqual(queue.start(now: ms(0)), [], "a2 waits for a1")
        XCTAssertEqual(queue.delivered(room: "a")?.event.id, "a1")
        XCTAssertEqual(queue.start(now: ms(1)).map(\.event.id), ["a2"])
        XCTAssertEqual(queue.count, 2)
    }

    func testFailuresRetryLaterEachTimeThenGiveUpAndTheRoomGoesOn() {
        var queue = WebhookQueue(endpoint: endpoint)
        _ = queue.add(event("a1", room: "a"), now: ms(0))
        _ = queue.add(event("a2", room: "a"), now: ms(0))
        _ = queue.start(now: ms(0))
        XCTAssertEqual(queue.failed(room: "a", now: ms(10), jitter: 1), .retry(at: ms(110)))
        XCTAssertEqual(queue.nextDue, ms(110))
        XCTAssertEqual(queue.start(now: ms(109)), [], "not before it is due")
        XCTAssertEqual(queue.start(now: ms(110)).first?.attempts, 2)
        XCTAssertEqual(queue.failed(room: "a", now: ms(120), jitter: 0), .retry(at: ms(220)), "200 ms, jitter takes up to half")
        _ = queue.start(now: ms(220))
        guard case let .gaveUp(delivery)? = queue.failed(room: "a", now: ms(230), jitter: 0.5) else { return XCTFail("kept retrying") }
        XCTAssertEqual(delivery.event.id, "a1")
        XCTAssertEqual(delivery.attempts, 3)
        XCTAssertEqual(queue.start(now: ms(230)).map(\.event.id), ["a2"], "the next event of the room is not held up for ever")
    }

    func testDroppingARoomKeepsOnlyItsAttemptUnderWayAndLeavesOtherRoomsAlone() {
        var queue = WebhookQueue(endpoint: endpoint)
        for (id, room) in [("a1", "a"), ("a2", "a"), ("a3", "a"), ("b1", "b"), ("c1", "c")] { _ = queue.add(event(id, room: room), now: ms(0)) }
        XCTAssertEqual(queue.start(now: ms(0)).map(\.event.id), ["a1", "b1", "c1"])
        queue.drop(room: "a")
        XCTAssertEqual(queue.count, 3, "a2 and a3 gone; a1 is still being attempted")
        XCTAssertEqual(queue.delivered(room: "a")?.event.id, "a1", "the attempt under way still ends")
        XCTAssertEqual(queue.start(now: ms(1)), [], "nothing of room a is left")
        XCTAssertTrue(queue.add(event("a2", room: "a"), now: ms(2)), "a dropped event may come back (from Redis, to its next owner)")
        queue.drop(room: "c")
        XCTAssertNotNil(queue.delivered(room: "c"))
        XCTAssertEqual(queue.waiting.map(\.event.id), ["b1", "a2"])
        XCTAssertEqual(queue.count, 2)
    }

    func testTheBackoffDoublesUpToItsCapWithJitterInItsUpperHalf() {
        XCTAssertEqual((1...5).map { WebhookQueue.backoff(attempt: $0, endpoint: endpoint, jitter: 1) }, [100, 200, 300, 300, 300])
        XCTAssertEqual(WebhookQueue.backoff(attempt: 2, endpoint: endpoint, jitter: 0), 100)
        XCTAssertEqual(WebhookQueue.backoff(attempt: 80, endpoint: endpoint, jitter: 1), 300, "no overflow")
    }

    func testAFullQueueTakesNothingAndAtMostSoManyRunAtOnce() {
        var queue = WebhookQueue(endpoint: endpoint, maxInFlight: 2, capacity: 3)
        XCTAssertTrue(queue.add(event("a", room: "a"), now: ms(0)))
        XCTAssertTrue(queue.add(event("b", room: "b"), now: ms(0)))
        XCTAssertTrue(queue.add(event("c", room: "c"), now: ms(0)))
        XCTAssertFalse(queue.add(event("d", room: "d"), now: ms(0)))
        XCTAssertEqual(queue.start(now: ms(0)).count, 2)
        XCTAssertNil(queue.nextDue, "every slot is busy")
        _ = queue.delivered(room: "a")
        XCTAssertEqual(queue.nextDue, ms(0))
        XCTAssertEqual(queue.start(now: ms(0)).map(\.event.id), ["c"])
    }
}
