@testable import LiveControlsRuntime
import Dispatch
import Foundation
import LiveControlsEngine
import LiveControlsProtocol
import Logging
import Synchronization
import XCTest

/// Rooms hand the dispatcher only what is durable, in their order (a recording transport stands in for the network).
final class WebhookRoomTests: XCTestCase {
    /// Records each request's event type; answers every one at once with success.
    final class RecordingTransport: WebhookTransport {
        let sent = Mutex<[String]>([])
        let arrived = DispatchSemaphore(value: 0)
        func post(url: String, headers: [(String, String)], body: [UInt8], timeoutMs: Int, done: @escaping @Sendable (String?) -> Void) {
            let type = (try? JSONParser.parse(body))?["type"]?.stringValue ?? "?"
            sent.withLock { $0.append(type) }
            arrived.signal()
            done(nil)
        }
    }

    func config() throws -> ServerConfig {
        var config = ServerConfig.builtin(today: CivilDate(year: 2026, month: 2, day: 28))
        config.webhooks = [WebhookEndpoint(url: "http://receiver.example/hooks", events: ["*"], key: Array(repeating: 1, count: 32))]
        config.webhookChangeIntervalMs = 60_000
        return config
    }

    func testARoomWhoseFirstWriteFailsIsNeverAnnounced() throws {
        let store = StoreFailureTests.FailingStore()
        store.failFrom.store(0, ordering: .relaxed)  // even the new room's reset write
        let transport = RecordingTransport()
        let registry = RoomRegistry(config: try config(), maxRooms: 10, store: store, waker: CountingWaker(), scheduler: ManualScheduler(),
                                    logger: Logger(label: "test"), webhookTransport: transport)
        let runtime = try registry.room(named: "r1", template: nil, force: false)
        runtime.queue.sync {}
        store.waitUntilIdle()
        runtime.queue.sync {}
        registry.webhooks!.queue.sync {}
        XCTAssertEqual(transport.sent.withLock { $0 }, [], "room.created before its write was durable")
        store.failFrom.store(.max, ordering: .relaxed)
        let again = try registry.room(named: "r2", template: nil, force: false)
        again.queue.sync {}
        store.waitUntilIdle()
        again.queue.sync {}
        XCTAssertEqual(transport.arrived.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(transport.sent.withLock { $0 }, ["room.created"])
    }

    /// A store that counts a write as done when it is submitted (as cluster mode's Redis pipeline does) and says later
    /// whether it landed.
    final class PipelinedStore: RoomStore, Sendable {
        let pending = Mutex<[@Sendable ((any Error)?) -> Void]>([])
        var isSynchronous: Bool { true }
        func write(_ write: StoreWrite, done: @escaping @Sendable ((any Error)?) -> Void) { pending.withLock { $0.append(done) } }
        func land(_ error: (any Error)? = nil) { pending.withLock { $0.removeFirst() }(error) }
    }

    struct FencedOut: Error {}

    func testWithAPipelinedStoreEventsWaitUntilTheirWriteLandsAndAreDroppedWhenItDoesNot() throws {
        let store = PipelinedStore()
        let transport = RecordingTransport()
        let registry = RoomRegistry(config: try config(), maxRooms: 10, store: store, waker: CountingWaker(), scheduler: ManualScheduler(),
                                    logger: Logger(label: "test"), webhookTransport: transport)
        let runtime = try registry.room(named: "r1", template: nil, force: false)
        let applied = DispatchSemaphore(value: 0)
        registry.applyIntents("r1", [ServerIntent(control: ControlID("quantity"), intent: "press", args: ["direction": "next"])]) { _ in applied.signal() }
        registry.applyIntents("r1", [ServerIntent(control: ControlID("quantity"), intent: "release")]) { _ in applied.signal() }
        for _ in 0..<2 { XCTAssertEqual(applied.wait(timeout: .now() + 5), .success) }
        runtime.queue.sync {}
        XCTAssertEqual(store.pending.withLock { $0.count }, 3, "the reset and two patches are in the pipeline")
        registry.webhooks!.queue.sync {}
        XCTAssertEqual(transport.sent.withLock { $0 }, [], "nothing before its write landed")
        store.land()
        XCTAssertEqual(transport.arrived.wait(timeout: .now() + 5), .success)
        store.land()
        store.land(FencedOut())  // the release's write (with hold.ended) never landed
        runtime.queue.sync {}
        runtime.queue.sync {}
        registry.webhooks!.queue.sync {}
        XCTAssertEqual(transport.sent.withLock { $0 }, ["room.created"], "no event for a change that was not written")
    }
}
