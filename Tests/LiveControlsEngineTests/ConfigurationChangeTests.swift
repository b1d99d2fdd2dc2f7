import LiveControlsProtocol
import XCTest

@testable import LiveControlsEngine

/// A stored room is restored exactly only when its template configures every control as it did: any setting of any
/// kind that differs names the control (then the room starts a new epoch from the template as it is now); what use
/// changed (values, items, steps gone through, holds) never counts.
final class ConfigurationChangeTests: XCTestCase {
    let day = CivilDate(year: 2026, month: 11, day: 24)
    let base = JSONWriter.string(ServerConfig.builtinJSON)

    func template(replacing old: String = "", with new: String = "") throws -> RoomTemplate {
        let text = old.isEmpty ? base : base.replacingOccurrences(of: old, with: new)
        XCTAssertTrue(old.isEmpty || base.components(separatedBy: old).count == 2, "\(old) occurs once")
        return try XCTUnwrap(try ServerConfig(text: text, file: "t.json", today: day).templates["demo"])
    }

    /// The demo room after some use, as the store keeps it.
    func storedAfterUse(_ template: RoomTemplate) throws -> StoredRoom {
        var room = Room(name: "r", template: template, epoch: "e", historyLimit: 8)
        let ann = SessionID("ann")
        _ = room.join(ann, name: "Ann", roles: ["admin"])
        for (control, intent, args) in [("quantity", "next", JSONObject()), ("person", "append", ["value": ["name": "Zed", "age": 9]] as JSONObject),
                                        ("onboarding", "next", JSONObject()), ("signup", "set", ["element": "account", "field": "name", "value": "Ann"] as JSONObject),
                                        ("month", "next", JSONObject())] {
            _ = try room.apply(control: ControlID(control), intent: intent, args: args, by: ann, requestID: nil, at: .milliseconds(0))
        }
        let write = room.storeReset()
        return StoredRoom(name: write.room, template: write.template, epoch: write.epoch, version: write.version,
                          controls: Dictionary(uniqueKeysWithValues: write.controls.map { ($0.id, $0.state) }),
                          members: write.joined, history: [])
    }

    func testUseIsNoConfigurationChange() throws {
        let template = try template()
        let stored = try storedAfterUse(template)
        XCTAssertEqual(Room.configurationChanges(stored: stored, template: template), [])
        XCTAssertNotNil(Room(restoring: stored, template: template, historyLimit: 8))
    }

    func testEverySettingThatChangedNamesItsControl() throws {
        let stored = try storedAfterUse(try template())
        let changes: [(String, String, String)] = [
            (#""max":99"#, #""max":200"#, "quantity"),
            (#""label":"Quantity""#, #""label":"Qty""#, "quantity"),
            (#""intervalMs":100"#, #""intervalMs":150"#, "quantity"),
            (#""display":"{name}: {age}""#, #""display":"{name}""#, "person"),
            (#""title":"Welcome""#, #""title":"Hello""#, "onboarding"),
            (#""cycle":false"#, #""cycle":true"#, "onboarding"),
            (#""minLength":2"#, #""minLength":3"#, "signup"),
            (#""radius":2"#, #""radius":3"#, "month"),
            (#""header":"Parents""#, #""header":"Grown-ups""#, "person"),
            (#""id":"parents""#, #""id":"elders""#, "person"),
            (#""header":"Siblings","#, "", "person"),
            (#"{"id":"parents","#, #"{"id":"friends","header":"Friends","items":[]},{"id":"parents","#, "person"),
        ]
        for (old, new, control) in changes {
            let changed = try template(replacing: old, with: new)
            XCTAssertEqual(Room.configurationChanges(stored: stored, template: changed), [control], "\(old) → \(new)")
            XCTAssertNil(Room(restoring: stored, template: changed, historyLimit: 8), "\(old) → \(new)")
        }
    }

    func testAControlAddedOrRemovedIsAChange() throws {
        let stored = try storedAfterUse(try template())
        let fewer = try template(replacing: #""month":{"kind":"pager""#, with: #""calendar":{"kind":"pager""#)
        XCTAssertEqual(Room.configurationChanges(stored: stored, template: fewer), ["calendar", "month"])
    }
}
