import Foundation
import LiveControlsKit
import XCTest

/// `Room.undo`, `Room.redo`, `canUndo`/`canRedo` and a conflict's `by` against the real server binary, over real sockets.
@MainActor
final class UndoTests: XCTestCase {
    func testUndoRedoAndAConflictThatNamesWhoChangedItSince() async throws {
        let server = try ServerProcess([], port: 0)
        defer { server.stop() }
        let ann = LiveControlsClient(url: server.wsURL, name: "Ann", transport: NIOWebSocketTransport())
        let bob = LiveControlsClient(url: server.wsURL, name: "Bob", transport: NIOWebSocketTransport())
        let annRoom = try await ann.join("demo")
        let bobRoom = try await bob.join("demo")
        let start = try XCTUnwrap(annRoom.stepper("quantity")?.value)
        try await XCTUnwrap(annRoom.stepper("quantity")).set(start + 10)
        try await eventually("Ann can undo one change") { annRoom.canUndo == 1 && annRoom.canRedo == 0 }
        XCTAssertEqual(bobRoom.canUndo, 0, "stacks are per user (here: per session)")

        let version = try await annRoom.undo()
        XCTAssertEqual(annRoom.version, version)
        XCTAssertEqual(annRoom.stepper("quantity")?.value, start)
        try await eventually("Ann can redo") { annRoom.canUndo == 0 && annRoom.canRedo == 1 }
        try await annRoom.redo()
        try await XCTUnwrap(bobRoom.stepper("quantity")).set(start + 20)
        do {
            try await annRoom.undo()
            XCTFail("undone over Bob's change")
        } catch let LiveControlsError.refused(refusal) {
            XCTAssertEqual(refusal.code, .conflict)
            XCTAssertEqual(refusal.by?["name"], "Bob")
            XCTAssertEqual(refusal.by?["session"], .string(bob.session ?? ""))
        }
        do {
            try await bobRoom.redo()
            XCTFail("Bob has nothing to redo")
        } catch let error as LiveControlsError {
            XCTAssertEqual(error.code, .nothingToUndo)
        }
        await ann.close()
        await bob.close()
    }
}
