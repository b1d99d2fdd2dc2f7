import LiveControlsEngine
import LiveControlsProtocol
import XCTest

/// What a cluster takeover does to a room: holds end with `failover`, members stay; and what the store sees.
final class FailoverTests: XCTestCase {
    func testEndHoldsEndsEveryHoldInOnePatchAndKeepsTheHolders() throws {
        var h = TickHarness(stepper: Stepper(label: "Q", min: 0, max: 99, value: 10))
        try h.intent("press", ["direction": "next"], by: "b")
        h.advance(toMilliseconds: 600)
        XCTAssertEqual(h.value, 13)
        let update = h.room.endHolds(reason: .failover)
        h.record(update)
        let patch = try XCTUnwrap(h.patches.last)
        XCTAssertEqual(patch.cause["kind"], "failover")
        XCTAssertEqual(patch.cause["ended"], [["control": "q", "session": "b", "reason": "failover"]])
        XCTAssertNil(h.stepper.hold)
        XCTAssertEqual(h.room.sessions, [SessionID("a"), SessionID("b")], "holders stay members")
        XCTAssertEqual(h.document["presence"]?["b"]?["holding"], [])
        // No timer is left to tick: advancing changes nothing.
        let version = h.room.version
        h.advance(toMilliseconds: 2_000)
        XCTAssertEqual(h.room.version, version)
        XCTAssertEqual(h.value, 13)
    }

    func testEndHoldsWithoutHoldsChangesNothing() {
        var h = TickHarness(stepper: Stepper(label: "Q", min: 0, max: 99, value: 10))
        let version = h.room.version
        XCTAssertNil(h.room.endHolds(reason: .failover).patch)
        XCTAssertEqual(h.room.version, version)
    }

    func testStoreWritesRecordMembersOfRoomsWithoutPresence() throws {
        var template = RoomTemplate(name: "t", controls: [(ControlID("q"), Stepper(label: "Q", min: 0, max: 9, value: 0))])
        template.presence = false
        var room = Room(name: "r", template: template, epoch: "e", historyLimit: 8)
        XCTAssertNil(room.join(SessionID("a"), name: "Ann", roles: ["admin"]).patch, "no presence: a join shows nothing")
        let update = try room.apply(control: ControlID("q"), intent: "next", args: [:], by: SessionID("a"), requestID: nil, at: Instant(nanoseconds: 0))
        let write = room.storeWrite(for: try XCTUnwrap(update.patch), keepHistory: 8)
        XCTAssertEqual(write.controls.map(\.id), [ControlID("q")])
        XCTAssertTrue(write.joined.isEmpty && write.left.isEmpty)
        XCTAssertEqual(room.storeReset().joined.map(\.session), [SessionID("a")], "a reset carries every member")

        var withPresence = Room(name: "r", template: RoomTemplate(name: "t", controls: template.controls), epoch: "e", historyLimit: 8)
        let joined = try XCTUnwrap(withPresence.join(SessionID("b"), name: "Bo", roles: ["admin"]).patch)
        let joinWrite = withPresence.storeWrite(for: joined, keepHistory: 8)
        XCTAssertEqual(joinWrite.joined.map(\.session), [SessionID("b")])
        XCTAssertEqual(joinWrite.joined.map(\.name), ["Bo"])
        let left = try XCTUnwrap(withPresence.leave(SessionID("b"), reason: .disconnect).patch)
        XCTAssertEqual(withPresence.storeWrite(for: left, keepHistory: 8).left, [SessionID("b")])
    }
}
