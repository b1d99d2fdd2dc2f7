import LiveControlsProtocol
import XCTest

@testable import LiveControlsEngine

final class StoredStateTests: XCTestCase {
    typealias H = SeedHarness

    /// Same case and, for doubles, the same bits: stricter than `==`, which takes `1 == 1.0`.
    func assertIdentical(_ a: JSONValue?, _ b: JSONValue?, _ message: String = "", file: StaticString = #filePath, line: UInt = #line) {
        switch (a, b) {
        case let (.int(x)?, .int(y)?): XCTAssertEqual(x, y, message, file: file, line: line)
        case let (.double(x)?, .double(y)?): XCTAssertEqual(x.bitPattern, y.bitPattern, "\(x) vs \(y) \(message)", file: file, line: line)
        case let (.array(x)?, .array(y)?):
            XCTAssertEqual(x.count, y.count, message, file: file, line: line)
            for (u, v) in zip(x, y) { assertIdentical(u, v, message, file: file, line: line) }
        case let (.object(x)?, .object(y)?):
            XCTAssertEqual(x.keys, y.keys, message, file: file, line: line)
            for key in x.keys { assertIdentical(x[key], y[key], "\(key) \(message)", file: file, line: line) }
        case (.int?, .double?), (.double?, .int?):
            XCTFail("\(String(describing: a)) vs \(String(describing: b)): an integer and a double \(message)", file: file, line: line)
        default: XCTAssertEqual(a, b, message, file: file, line: line)
        }
    }

    /// Stored as text and read back, as a room store does.
    func roundTrip(_ control: any Control) throws -> any Control {
        let text = try XCTUnwrap(ControlCoding.encode(control))
        return try ControlCoding.restore(kind: ControlCoding.kind(of: control), state: text)
    }

    func testEveryKindRoundTripsExactly() throws {
        for (name, original) in try StoredStateFixtures.all() {
            let restored = try roundTrip(original)
            assertIdentical(restored.render(), original.render(), name)
            assertIdentical(ControlCoding.storedState(of: restored), ControlCoding.storedState(of: original), name)
            XCTAssertEqual(restored.holder, original.holder, name)
            XCTAssertEqual(restored.wakeDeadline, original.wakeDeadline, name)
            XCTAssertEqual(ControlCoding.encode(restored), ControlCoding.encode(original), "\(name): the same text again")
        }
    }

    func testListValuesKeepOneApartFromOnePointZero() throws {
        let values: [JSONValue] = [1, 1.0, 2.5, -0.0, 0, ["n": 1.0, "m": 1, "deep": [[2.0]]], 1e300, 0x1p53]
        let list = ListStepper(label: "n", values: values)
        let restored = try XCTUnwrap(try roundTrip(list) as? ListStepper)
        XCTAssertEqual(restored.items.count, values.count)
        for (item, value) in zip(restored.items, values) { assertIdentical(item.value, value, item.id) }
        assertIdentical(restored.render(), list.render())
        XCTAssertEqual(restored.render()["sections"]?.arrayValue?[0]["items"]?.arrayValue?[1]["label"], "1.0",
                       "a double shows as a double")
    }

    func testListValuesAreNestedNotJSONTextAndMayNestAsDeepAsAMessage() throws {
        var deep: JSONValue = 1.0
        for _ in 0..<(JSONParser.defaultMaxDepth - 3) { deep = ["d": deep] }  // as deep as an `append` may carry
        let list = ListStepper(label: "n", values: [deep, "plain \"text\"", .null])
        let text = try XCTUnwrap(ControlCoding.encode(list))
        let state = try JSONParser.parse(text, maxDepth: ControlCoding.storedStateMaxDepth)
        let items = try XCTUnwrap(state["sections"]?.arrayValue?[0]["items"]?.arrayValue)
        XCTAssertEqual(items[1]["json"], "plain \"text\"", "the value itself, not JSON text in a string")
        XCTAssertNil(items[1]["value"])
        XCTAssertEqual(items[2].objectValue?["json"], .null)
        let restored = try XCTUnwrap(try ControlCoding.restore(kind: "list", state: text) as? ListStepper)
        for (item, value) in zip(restored.items, [deep, "plain \"text\"", .null] as [JSONValue]) { assertIdentical(item.value, value, item.id) }
    }

    func testFormNumbersKeepTheirType() throws {
        var form = try Form(config: H.node([
            "kind": "form",
            "elements": [["id": "e", "fields": [
                ["id": "whole", "type": "number", "min": 1.0, "max": 3],
                ["id": "int", "type": "number", "value": 2],
                ["id": "frac", "type": "number", "value": 0.1],
            ]]],
        ]), id: ControlID("f"))
        try H.apply(&form, "set", ["element": "e", "field": "whole", "value": 2.0])
        let restored = try XCTUnwrap(try roundTrip(form) as? Form)
        let fields = restored.elements[0].fields
        assertIdentical(fields[0].value, .double(2.0))
        assertIdentical(fields[0].min, .double(1.0))
        assertIdentical(fields[0].max, .int(3))
        assertIdentical(fields[1].value, .int(2))
        assertIdentical(fields[2].value, .double(0.1))
        assertIdentical(restored.render(), form.render())
        XCTAssertTrue(try XCTUnwrap(ControlCoding.encode(form)).contains(#""value":2.0"#))
    }

    func testRoomRestoresFromItsResetWrite() throws {
        let fixtures = try StoredStateFixtures.all()
        let template = RoomTemplate(name: "t", controls: fixtures.map { (ControlID($0.name), $0.control) })
        var room = Room(name: "r", template: template, epoch: "e", historyLimit: 8)
        _ = room.join(SessionID("ann"), name: "Ann", roles: ["admin"])
        let write = room.storeReset()
        let stored = StoredRoom(name: write.room, template: write.template, epoch: write.epoch, version: write.version,
                                controls: Dictionary(uniqueKeysWithValues: write.controls.map { ($0.id, $0.state) }),
                                members: write.joined, history: [])
        XCTAssertEqual(write.controls.map(\.kind), fixtures.map { ControlCoding.kind(of: $0.control) })
        let restored = try XCTUnwrap(Room(restoring: stored, template: template, historyLimit: 8))
        assertIdentical(restored.render(), room.render())
    }

    func testBrokenStatesAreRefusedWithTheirPlace() throws {
        let cases: [(kind: String, state: String, path: String, words: String)] = [
            ("stepper", #"{"label":"q","min":0,"max":5,"step":1,"wrap":false,"value":9,"timing":{}}"#, "", "outside 0…5"),
            ("stepper", #"{"label":"q","min":0,"max":5,"step":1,"wrap":false,"value":1.0}"#, "/value", "expected an integer"),
            ("list", #"{"label":"l","wrap":false,"maxItems":9,"nextItemNumber":2,"sections":[{"id":"s1","items":[{"id":"i1","value":"[1,"}]}]}"#,
             "/sections/0/items/0/value", "not JSON"),
            ("list", #"{"label":"l","wrap":false,"maxItems":9,"nextItemNumber":2,"selected":"i7","sections":[{"id":"s1","items":[{"id":"i1","value":"1"}]}],"timing":{}}"#,
             "", "i7"),
            ("wizard", #"{"label":"w","steps":[{"id":"a","title":"a"}],"index":0,"initialSteps":[{"id":"a","title":"a"}],"initialIndex":0,"phase":"sideways"}"#, "/phase", "sideways"),
            ("pager", #"{"label":"p","domain":"integer","position":5,"max":4,"step":1,"radius":2}"#, "", "outside"),
            ("form", #"{"label":"f","elements":[{"id":"e","title":"e","fields":[{"id":"x","label":"x","type":"number","required":false,"min":"low","integer":false,"choices":[],"value":null}]}]}"#,
             "/elements/0/fields/0/min", "expected a number"),
            ("dial", "{}", "", "not stored"),
            ("stepper", "{", "", "not JSON"),
        ]
        for c in cases {
            XCTAssertThrowsError(try ControlCoding.restore(kind: c.kind, state: c.state), c.state) { error in
                let e = error as? StoredStateError
                XCTAssertEqual(e?.path, c.path, "\(c.state): \(String(describing: e))")
                XCTAssertTrue(e?.message.contains(c.words) ?? false, "\(c.state): \(String(describing: e))")
            }
        }
    }
}
