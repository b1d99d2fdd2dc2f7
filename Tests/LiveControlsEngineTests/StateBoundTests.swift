import LiveControlsEngine
import LiveControlsProtocol
import XCTest

/// A room's state has a size bound (the template's `maxStateBytes`): one editor cannot make it too big for everyone.
final class StateBoundTests: XCTestCase {
    func room(bound: Int) throws -> Room {
        let config = try ServerConfig(json: [
            "templates": ["t": ["controls": ["notes": ["kind": "list", "values": []], "q": ["kind": "stepper"]], "maxStateBytes": .int(bound)]],
        ], file: "t.json", today: CivilDate(year: 2026, month: 11, day: 24))
        var room = Room(name: "r", template: config.templates["t"]!, epoch: "e", historyLimit: 4)
        _ = room.join(SessionID("a"), name: nil, roles: ["editor"])
        return room
    }

    func append(_ room: inout Room, _ text: String) throws -> RoomUpdate {
        try room.apply(control: ControlID("notes"), intent: "append", args: ["value": .string(text)], by: SessionID("a"), requestID: nil, at: .milliseconds(0))
    }

    func testGrowthPastTheBoundIsRefusedAndShrinkingAlwaysPasses() throws {
        var room = try room(bound: 4_096)
        let note = String(repeating: "x", count: 1_000)
        for _ in 0..<2 { _ = try append(&room, note) }
        XCTAssertThrowsError(try append(&room, note + note)) { error in
            XCTAssertEqual((error as? IntentError)?.code, .tooLarge)
            XCTAssertTrue((error as? IntentError)?.message.contains("maxStateBytes") ?? false)
        }
        XCTAssertEqual(room.render()["controls"]?["notes"]?["count"], 2, "nothing changed")
        XCTAssertNotNil(try room.apply(control: ControlID("q"), intent: "next", args: [:], by: SessionID("a"), requestID: nil, at: .milliseconds(0)).patch,
                        "a change that does not grow the state passes")
        _ = try room.apply(control: ControlID("notes"), intent: "remove", args: ["id": "i2"], by: SessionID("a"), requestID: nil, at: .milliseconds(0))
        XCTAssertNotNil(try append(&room, note).patch, "room again after a remove")
        XCTAssertThrowsError(try room.applyAsServer([ServerIntent(control: ControlID("notes"), intent: "append", args: ["value": .string(note + note)])],
                                                    at: .milliseconds(0))) { error in
            XCTAssertEqual((error as? ServerIntentError)?.error.code, .tooLarge, "the server API is bound too")
        }
    }

    func testAnEditCountsItsNewValue() throws {
        var room = try room(bound: 4_096)
        _ = try append(&room, "short")
        XCTAssertThrowsError(try room.apply(control: ControlID("notes"), intent: "edit", args: ["id": "i1", "value": .string(String(repeating: "y", count: 5_000))],
                                            by: SessionID("a"), requestID: nil, at: .milliseconds(0)))
    }

    func testTheBoundIsConfiguredWithinLimits() {
        XCTAssertThrowsError(try self.room(bound: 10)) { XCTAssertEqual(($0 as? ConfigError)?.path, "/templates/t/maxStateBytes") }
    }

    /// A list stored before its selection policy was kept restores under the template's policy, not a default.
    func testAListStoredWithoutItsPolicyTakesTheTemplates() throws {
        let config = try ServerConfig(json: ["templates": ["t": ["controls": ["l": ["kind": "list", "values": ["a", "b"], "selectionPolicy": "first"]]]]],
                                      file: "t.json", today: CivilDate(year: 2026, month: 11, day: 24))
        let template = config.templates["t"]!
        var room = Room(name: "r", template: template, epoch: "e", historyLimit: 4)
        let write = room.storeReset()
        guard case var .object(state) = try JSONParser.parse(write.controls[0].state) else { return XCTFail("not an object") }
        state["selectionPolicy"] = nil
        let stored = StoredRoom(name: "r", template: "t", epoch: "e", version: 0,
                                controls: [ControlID("l"): JSONWriter.string(.object(state))], members: [], history: [])
        XCTAssertEqual(Room.configurationChanges(stored: stored, template: template), [])
        XCTAssertEqual(try XCTUnwrap(Room(restoring: stored, template: template, historyLimit: 4)).render()["controls"]?["l"]?["selectionPolicy"], "first")
    }
}
