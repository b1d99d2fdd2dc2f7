import Foundation
import LiveControlsKit
import XCTest

/// `Room.broadcast` and `RoomEvent.broadcast` against the real server binary, over real sockets.
@MainActor
final class BroadcastTests: XCTestCase {
    func testABroadcastReachesTheOthersAsIsAndChangesNoVersion() async throws {
        let server = try ServerProcess([], port: 0)
        defer { server.stop() }
        let ann = LiveControlsClient(url: server.wsURL, name: "Ann", transport: NIOWebSocketTransport())
        let bob = LiveControlsClient(url: server.wsURL, name: "Bob", transport: NIOWebSocketTransport())
        let annRoom = try await ann.join("demo")
        let bobRoom = try await bob.join("demo")
        var received: [(from: String, name: String?, event: JSONValue)] = []
        let listening = Task { @MainActor in
            for await event in bobRoom.events() {
                if let broadcast = event.broadcast { received.append(broadcast) }
            }
        }
        let version = annRoom.version
        try await annRoom.broadcast(["reaction": "👍", "at": [0.25, 0.5]])
        try await eventually("Bob got Ann's reaction") { !received.isEmpty }
        XCTAssertEqual(received.first?.from, ann.session)
        XCTAssertEqual(received.first?.name, "Ann")
        XCTAssertEqual(received.first?.event, ["reaction": "👍", "at": [0.25, 0.5]])
        XCTAssertEqual(annRoom.version, version, "a broadcast is not state")

        do {
            try await annRoom.broadcast(.string(String(repeating: "x", count: 3_000)))
            XCTFail("a broadcast past 2,048 bytes is refused")
        } catch let error as LiveControlsError {
            XCTAssertEqual(error.code, .tooLarge)
        }
        listening.cancel()
        await ann.close()
        await bob.close()
    }
}
