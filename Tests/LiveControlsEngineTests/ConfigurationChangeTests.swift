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

/// Every key the config gives each kind, changed one at a time on a stored room that was used: each is a setting
/// (the control is named and the room starts anew) except the start values of the controls whose `reset` does not go
/// back to them (a stepper's `value`, a list's `values` and `selected`, a pager's `start`: where use begins).
final class EverySettingChangeTests: XCTestCase {
    let day = CivilDate(year: 2026, month: 11, day: 24)

    /// A template of one control `c` (and a form `f` for the wizard's guards) read on `today`.
    func template(_ control: JSONObject, today: CivilDate? = nil) throws -> RoomTemplate {
        let form: JSONValue = ["kind": "form", "elements": [["id": "a", "fields": [["id": "x", "type": "text"]]]]]
        let controls: JSONObject = ["c": .object(control), "f": form]
        let config: JSONValue = ["templates": ["t": ["controls": .object(controls)]]]
        return try XCTUnwrap(try ServerConfig(text: JSONWriter.string(config), file: "t.json", today: today ?? day).templates["t"])
    }

    func stored(_ template: RoomTemplate, using intents: [(String, JSONObject)]) throws -> StoredRoom {
        var room = Room(name: "r", template: template, epoch: "e", historyLimit: 8)
        let ann = SessionID("ann")
        _ = room.join(ann, name: "Ann", roles: ["admin"])
        for (intent, args) in intents {
            _ = try room.apply(control: ControlID("c"), intent: intent, args: args, by: ann, requestID: nil, at: .milliseconds(0))
        }
        let write = room.storeReset()
        return StoredRoom(name: write.room, template: write.template, epoch: write.epoch, version: write.version,
                          controls: Dictionary(uniqueKeysWithValues: write.controls.map { ($0.id, $0.state) }),
                          members: write.joined, history: [])
    }

    /// `base` used by `intents`, then each (path, new value) applied to the config alone: named as a change, or not.
    func check(_ base: JSONObject, using intents: [(String, JSONObject)] = [], settings: [(String, JSONValue)],
               startValues: [(String, JSONValue)] = [], file: StaticString = #filePath, line: UInt = #line) throws {
        let room = try stored(try template(base), using: intents)
        XCTAssertEqual(Room.configurationChanges(stored: room, template: try template(base)), [], "unchanged", file: file, line: line)
        for (path, value) in settings {
            let changed = try template(Self.setting(base, path, to: value))
            XCTAssertEqual(Room.configurationChanges(stored: room, template: changed), ["c"], "\(path) → \(value)", file: file, line: line)
            XCTAssertNil(Room(restoring: room, template: changed, historyLimit: 8), "\(path)", file: file, line: line)
        }
        for (path, value) in startValues {
            let changed = try template(Self.setting(base, path, to: value))
            XCTAssertEqual(Room.configurationChanges(stored: room, template: changed), [], "\(path) is where use starts", file: file, line: line)
        }
    }

    /// `object` with the value at a slash-separated path (array indices as numbers) replaced.
    static func setting(_ object: JSONObject, _ path: String, to value: JSONValue) -> JSONObject {
        func set(_ node: JSONValue, _ keys: ArraySlice<Substring>) -> JSONValue {
            guard let key = keys.first else { return value }
            if case var .array(a) = node, let i = Int(key) {
                a[i] = set(a[i], keys.dropFirst())
                return .array(a)
            }
            var o = node.objectValue ?? [:]
            o[String(key)] = set(o[String(key)] ?? .null, keys.dropFirst())
            return .object(o)
        }
        return set(.object(object), path.split(separator: "/")[...]).objectValue!
    }

    let hold: JSONObject = ["delayMs": 400, "intervalMs": 100, "minIntervalMs": 50, "accelerationMs": 1000, "maxHoldMs": 20_000]
    var holdSettings: [(String, JSONValue)] {
        [("hold/delayMs", 300), ("hold/intervalMs", 90), ("hold/minIntervalMs", 40), ("hold/accelerationMs", 900), ("hold/maxHoldMs", 10_000)]
    }

    func testStepper() throws {
        try check(["kind": "stepper", "label": "S", "min": 0, "max": 10, "step": 1, "value": 2, "wrap": false, "hold": .object(hold)],
                  using: [("next", [:])],
                  settings: [("label", "T"), ("min", -1), ("max", 11), ("step", 2), ("wrap", true)] + holdSettings,
                  startValues: [("value", 5)])
    }

    func testList() throws {
        try check(["kind": "list", "label": "L", "sections": [["id": "a", "header": "A", "items": [1, 2]], ["id": "b", "items": [3]]],
                   "selected": 2, "selectionPolicy": "fail", "display": "#{}", "wrap": false, "maxItems": 50, "hold": .object(hold)],
                  using: [("append", ["value": 4]), ("next", [:])],
                  settings: [("label", "M"), ("selectionPolicy", "first"), ("display", "{}"), ("wrap", true), ("maxItems", 60),
                             ("sections/0/id", "z"), ("sections/0/header", "Z"), ("sections/1/header", "B")] + holdSettings,
                  startValues: [("sections/0/items", [1, 2, 9]), ("selected", 1)])
    }

    func testWizard() throws {
        try check(["kind": "wizard", "label": "W", "steps": [["id": "one", "title": "One"], ["id": "two", "title": "Two", "form": "f", "element": "a"],
                                                              ["id": "three"]], "index": 0, "cycle": false],
                  using: [("next", [:])],
                  settings: [("label", "V"), ("cycle", true), ("index", 2), ("steps/0/id", "uno"), ("steps/0/title", "Uno"),
                             ("steps/1/element", .null), ("steps/2/form", "f")])
    }

    func testForm() throws {
        let fields: [JSONValue] = [
            ["id": "name", "label": "Name", "type": "text", "required": true, "minLength": 1, "maxLength": 20, "pattern": "^[a-z]+$"],
            ["id": "age", "label": "Age", "type": "number", "min": 0, "max": 120, "integer": true],
            ["id": "colour", "type": "choice", "choices": ["red", "blue"]],
            ["id": "ok", "type": "boolean"],
        ]
        try check(["kind": "form", "label": "F", "elements": [["id": "a", "title": "A", "cta": "Go", "summary": "{name}", "fields": .array(fields)],
                                                            ["id": "b", "fields": []]]],
                  using: [("set", ["element": "a", "field": "name", "value": "ann"])],
                  settings: [("label", "G"), ("elements/0/id", "z"), ("elements/0/title", "Z"), ("elements/0/cta", "Next"),
                             ("elements/0/summary", "{age}"), ("elements/0/fields/0/label", "Full name"), ("elements/0/fields/0/required", false),
                             ("elements/0/fields/0/value", "x"), ("elements/0/fields/0/minLength", 2), ("elements/0/fields/0/maxLength", 30),
                             ("elements/0/fields/0/pattern", "^[a-z]*$"), ("elements/0/fields/0/id", "nick"), ("elements/0/fields/3/type", "text"),
                             ("elements/0/fields/1/min", 1), ("elements/0/fields/1/max", 99), ("elements/0/fields/1/integer", false),
                             ("elements/0/fields/2/choices", ["red"]), ("elements/0/fields/3/label", "Okay"), ("elements/1/fields", [["id": "y", "type": "boolean"]])])
    }

    func testPager() throws {
        try check(["kind": "pager", "label": "P", "domain": "integer", "start": 3, "min": -10, "max": 10, "step": 1, "radius": 2, "hold": .object(hold)],
                  using: [("next", [:])],
                  settings: [("label", "Q"), ("min", -11), ("max", 11), ("step", 2), ("radius", 3)] + holdSettings,
                  startValues: [("start", 0)])
        try check(["kind": "pager"], using: [("next", [:])], settings: [("domain", "month")])
    }

    /// A bound given as `"current"` stands for the day the config was read; a room stored on one day and restored on a
    /// later one (the same config) is unchanged, and keeps the bound it was made with. A bound that stops or starts
    /// being `"current"` is a change.
    func testACurrentBoundIsTheSettingNotTheDay() throws {
        let pager: JSONObject = ["kind": "pager", "domain": "day", "min": "current", "radius": 1]
        let room = try stored(try template(pager), using: [("next", [:])])
        let later = try template(pager, today: CivilDate(year: 2027, month: 2, day: 3))
        XCTAssertEqual(Room.configurationChanges(stored: room, template: later), [])
        let restored = try XCTUnwrap(Room(restoring: room, template: later, historyLimit: 8))
        XCTAssertEqual((restored.controls[ControlID("c")] as? Pager)?.min, PagerPosition.ordinal(of: day, in: .day))
        let fixed = try template(Self.setting(pager, "min", to: "2026-11-24"))
        XCTAssertEqual(Room.configurationChanges(stored: room, template: fixed), ["c"])
        XCTAssertEqual(Room.configurationChangeDetails(stored: room, template: fixed, templateName: "t"), "c (currentBounds, min)")
    }

    /// A pager stored before `currentBounds` was kept restores the same day (its bound still is today's); on a later
    /// day it starts anew, as it did then.
    func testAPagerStoredBeforeCurrentBoundsWereKept() throws {
        let pager: JSONObject = ["kind": "pager", "domain": "day", "min": "current", "radius": 1]
        var room = try stored(try template(pager), using: [("next", [:])])
        let state = try XCTUnwrap(room.controls[ControlID("c")])
        XCTAssertTrue(state.contains("currentBounds"))
        room.controls[ControlID("c")] = state.replacingOccurrences(of: #","currentBounds":["min"]"#, with: "")
        XCTAssertFalse(room.controls[ControlID("c")]!.contains("currentBounds"))
        XCTAssertEqual(Room.configurationChanges(stored: room, template: try template(pager)), [])
        XCTAssertEqual(Room.configurationChanges(stored: room, template: try template(pager, today: CivilDate(year: 2026, month: 11, day: 25))), ["c"])
    }

    func testTheLogNamesWhatChanged() throws {
        let base: JSONObject = ["kind": "stepper", "label": "S", "max": 10]
        let room = try stored(try template(base), using: [])
        var changed = Self.setting(base, "max", to: 20)
        changed["label"] = "T"
        XCTAssertEqual(Room.configurationChangeDetails(stored: room, template: try template(changed), templateName: "t"), "c (label, max)")
        XCTAssertEqual(Room.configurationChangeDetails(stored: room, template: try template(base), templateName: "u"), "template t → u")
    }
}
