import LiveControlsProtocol
import XCTest

@testable import LiveControlsEngine

/// Stored states written by the release before the engine stored controls through `JSONValue`: the
/// synthesized `Codable` of each control, encoded by Foundation's `JSONEncoder` (keys in hash order),
/// for the controls `StoredStateFixtures` builds. A data directory holds exactly these texts.
enum LegacyStoredStates {
    static let byName: [String: (kind: String, state: String)] = [
        "stepper": ("stepper", ##"{"label":"Quantity","max":99,"value":7,"wrap":true,"step":3,"min":-5,"timing":{"accelerationMs":10,"delayMs":400,"intervalMs":120,"minIntervalMs":40,"maxHoldMs":20000}}"##),
        "stepperMidHold": ("stepper", ##"{"hold":{"session":{"rawValue":"ann"},"direction":"next","pressedAt":{"nanoseconds":1000000000},"nextTick":{"nanoseconds":1630000000},"repeats":2,"leaseDeadline":{"nanoseconds":21530000000}},"step":3,"label":"Quantity","max":99,"wrap":true,"timing":{"accelerationMs":10,"maxHoldMs":20000,"delayMs":400,"minIntervalMs":40,"intervalMs":120},"value":16,"min":-5}"##),
        "listWithSections": ("list", ##"{"timing":{"accelerationMs":0,"delayMs":300,"intervalMs":200,"minIntervalMs":200,"maxHoldMs":10000},"hold":{"nextTick":{"nanoseconds":5300000000},"pressedAt":{"nanoseconds":5000000000},"direction":"prev","repeats":0,"session":{"rawValue":"bob"},"leaseDeadline":{"nanoseconds":15000000000}},"label":"People & things","maxItems":50,"wrap":true,"display":"{name}: {age|?}","sections":[{"id":"siblings","items":[{"value":"{\"name\":\"Joe\",\"age\":23,\"tags\":[\"a\",\"b\"]}","id":"i1"}],"header":"Siblings"},{"id":"misc","items":[{"value":"{\"z\":1,\"a\":{\"y\":2.5,\"x\":null}}","id":"i3"},{"value":"1.5","id":"i4"},{"value":"-0.25","id":"i5"},{"value":"1e+300","id":"i6"},{"value":"42","id":"i7"},{"value":"true","id":"i8"},{"value":"null","id":"i9"},{"value":"\"text with \\\"quotes\\\", a \\\\ backslash, ünïcode ✓ and a\\nnewline\"","id":"i10"}]},{"id":"empty","items":[{"value":"{\"name\":\"Ann\",\"age\":31}","id":"i11"}],"header":"Nobody yet"}],"selected":"i3","nextItemNumber":12}"##),
        "emptyList": ("list", ##"{"wrap":false,"label":"l","nextItemNumber":2,"timing":{"minIntervalMs":250,"maxHoldMs":30000,"accelerationMs":0,"intervalMs":250,"delayMs":500},"maxItems":1000,"sections":[{"id":"s1","items":[]}]}"##),
        "wizardMidWay": ("wizard", ##"{"cycle":false,"steps":[{"title":"Welcome","id":"welcome"},{"form":"signup","title":"Your account","id":"account","element":"account"},{"title":"done","id":"done"},{"form":"signup","title":"Extra","id":"extra"}],"label":"Onboarding","initialSteps":[{"title":"Welcome","id":"welcome"},{"form":"signup","title":"Your account","id":"account","element":"account"},{"title":"done","id":"done"}],"index":1,"initialIndex":0,"phase":"inProgress"}"##),
        "wizardExited": ("wizard", ##"{"phase":"exit","initialSteps":[{"id":"a","title":"a"},{"id":"b","title":"b"}],"initialIndex":1,"label":"w","steps":[{"id":"a","title":"a"},{"id":"b","title":"b"}],"index":0,"cycle":true}"##),
        "formMidWay": ("form", ##"{"label":"Sign up","elements":[{"fields":[{"pattern":"[^@\\s]+@[^@\\s]+","maxLength":20,"label":"email","id":"email","choices":[],"value":"ann@example.org","required":true,"integer":false,"type":"text"},{"label":"Name","id":"name","minLength":2,"choices":[],"value":"Ann","integer":false,"required":true,"type":"text"}],"id":"account","title":"Account","summary":"{name} <{email}>","cta":"Continue"},{"id":"profile","title":"profile","fields":[{"type":"number","max":120,"label":"age","id":"age","choices":[],"value":9,"required":false,"integer":true,"error":"must be ≥ 13","min":13},{"label":"plan","id":"plan","choices":["free","pro","team"],"value":"team","required":true,"integer":false,"type":"choice"},{"type":"number","max":2.75,"label":"height","id":"height","choices":[],"value":1.75,"required":false,"integer":false,"min":0.5}]},{"fields":[{"label":"I accept","id":"accept","choices":[],"value":false,"required":true,"integer":false,"error":"must be checked","type":"boolean"}],"id":"terms","title":"terms","cta":"Create account"}],"current":1,"initialElements":[{"fields":[{"pattern":"[^@\\s]+@[^@\\s]+","maxLength":20,"label":"email","id":"email","choices":[],"value":null,"required":true,"integer":false,"error":"required","type":"text"},{"label":"Name","id":"name","minLength":2,"choices":[],"value":null,"required":true,"integer":false,"error":"required","type":"text"}],"id":"account","title":"Account","summary":"{name} <{email}>","cta":"Continue"},{"id":"profile","title":"profile","fields":[{"min":13,"label":"age","max":120,"id":"age","choices":[],"value":null,"required":false,"integer":true,"type":"number"},{"label":"plan","id":"plan","choices":["free","pro","team"],"value":"free","required":true,"integer":false,"type":"choice"},{"min":0.5,"label":"height","max":2.75,"id":"height","choices":[],"value":null,"required":false,"integer":false,"type":"number"}]},{"fields":[{"label":"I accept","id":"accept","choices":[],"value":false,"required":true,"integer":false,"error":"must be checked","type":"boolean"}],"id":"terms","title":"terms","cta":"Create account"}]}"##),
        "formCompleted": ("form", ##"{"label":"Sign up","elements":[{"title":"Account","id":"account","cta":"Continue","summary":"{name} <{email}>","fields":[{"id":"email","label":"email","pattern":"[^@\\s]+@[^@\\s]+","required":true,"value":"ann@example.org","choices":[],"maxLength":20,"type":"text","integer":false},{"id":"name","label":"Name","required":true,"value":"Ann","choices":[],"type":"text","integer":false,"minLength":2}]},{"title":"profile","id":"profile","fields":[{"max":120,"id":"age","label":"age","required":false,"value":42,"choices":[],"type":"number","min":13,"integer":true},{"id":"plan","label":"plan","required":true,"value":"team","choices":["free","pro","team"],"type":"choice","integer":false},{"max":2.75,"id":"height","label":"height","required":false,"value":1.75,"choices":[],"type":"number","min":0.5,"integer":false}]},{"title":"terms","id":"terms","cta":"Create account","fields":[{"id":"accept","label":"I accept","required":true,"value":true,"choices":[],"type":"boolean","integer":false}]}],"initialElements":[{"title":"Account","id":"account","cta":"Continue","summary":"{name} <{email}>","fields":[{"id":"email","label":"email","pattern":"[^@\\s]+@[^@\\s]+","required":true,"value":null,"choices":[],"type":"text","maxLength":20,"integer":false,"error":"required"},{"id":"name","label":"Name","required":true,"value":null,"choices":[],"type":"text","integer":false,"minLength":2,"error":"required"}]},{"title":"profile","id":"profile","fields":[{"id":"age","max":120,"label":"age","required":false,"value":null,"choices":[],"type":"number","min":13,"integer":true},{"id":"plan","label":"plan","required":true,"value":"free","choices":["free","pro","team"],"type":"choice","integer":false},{"id":"height","max":2.75,"label":"height","required":false,"value":null,"choices":[],"type":"number","min":0.5,"integer":false}]},{"title":"terms","id":"terms","cta":"Create account","fields":[{"id":"accept","label":"I accept","required":true,"value":false,"choices":[],"type":"boolean","integer":false,"error":"must be checked"}]}]}"##),
        "integerPagerMidHold": ("pager", ##"{"radius":3,"hold":{"nextTick":{"nanoseconds":2350000000},"pressedAt":{"nanoseconds":2000000000},"repeats":1,"direction":"next","session":{"rawValue":"ann"},"leaseDeadline":{"nanoseconds":7000000000}},"label":"Page","step":5,"max":1000,"timing":{"maxHoldMs":5000,"delayMs":250,"intervalMs":100,"minIntervalMs":50,"accelerationMs":20},"position":20,"domain":"integer","min":-10}"##),
        "monthPager": ("pager", ##"{"radius":1,"label":"p","domain":"month","position":24312,"step":1,"min":24240,"timing":{"minIntervalMs":250,"maxHoldMs":30000,"accelerationMs":0,"intervalMs":250,"delayMs":500}}"##),
        "dayPagerMidHold": ("pager", ##"{"radius":2,"hold":{"leaseDeadline":{"nanoseconds":30700000000},"direction":"prev","session":{"rawValue":"bob"},"pressedAt":{"nanoseconds":700000000},"nextTick":{"nanoseconds":1200000000},"repeats":0},"label":"p","step":1,"max":22279,"timing":{"delayMs":500,"maxHoldMs":30000,"accelerationMs":0,"intervalMs":250,"minIntervalMs":250},"position":19782,"domain":"day","min":19723}"##),
    ]
}

final class LegacyStoredStateTests: XCTestCase {
    /// Every legacy text restores to a control that renders, holds and wakes exactly like the original, with the
    /// same complete state (numbers compared with their type: 1 is not 1.0).
    func testLegacyStatesRestoreExactly() throws {
        let fixtures = try StoredStateFixtures.all()
        XCTAssertEqual(Set(fixtures.map(\.name)), Set(LegacyStoredStates.byName.keys))
        for (name, original) in fixtures {
            let legacy = try XCTUnwrap(LegacyStoredStates.byName[name], name)
            XCTAssertEqual(legacy.kind, ControlCoding.kind(of: original), name)
            let restored = try ControlCoding.restore(kind: legacy.kind, state: legacy.state)
            XCTAssertEqual(JSONDiff.diff(from: original.render(), to: restored.render()), [], name)
            XCTAssertEqual(restored.holder, original.holder, name)
            XCTAssertEqual(restored.wakeDeadline, original.wakeDeadline, name)
            let state = try XCTUnwrap(ControlCoding.storedState(of: original))
            XCTAssertEqual(JSONDiff.diff(from: state, to: try XCTUnwrap(ControlCoding.storedState(of: restored))), [], name)
        }
    }

    /// The new stored form is the legacy one — the same members with the same values and number types, in
    /// another key order (legacy keys came in hash order) — except a list item, whose value is now nested
    /// (`json`) instead of JSON text in a string (`value`), and a list's `selectionPolicy`, kept since it applies to
    /// removes too (absent, it reads as `fail`, the default). So stored data needs no migration.
    func testNewStatesHaveTheLegacyShapeWithListValuesNested() throws {
        for (name, original) in try StoredStateFixtures.all() {
            let legacy = Self.nestingListValues(try JSONParser.parse(try XCTUnwrap(LegacyStoredStates.byName[name]).state))
            XCTAssertEqual(JSONDiff.diff(from: legacy, to: try XCTUnwrap(ControlCoding.storedState(of: original))), [], name)
        }
    }

    /// A legacy list state with each item's `value` text turned into the nested `json` of the new shape.
    static func nestingListValues(_ state: JSONValue) -> JSONValue {
        guard var o = state.objectValue, let sections = o["sections"]?.arrayValue else { return state }
        o["sections"] = .array(sections.map { section in
            guard var s = section.objectValue, let items = s["items"]?.arrayValue else { return section }
            s["items"] = .array(items.map { item in
                guard let id = item["id"], let text = item["value"]?.stringValue, let value = try? JSONParser.parse(text) else { return item }
                return ["id": id, "json": value]
            })
            return .object(s)
        })
        if o["selectionPolicy"] == nil { o["selectionPolicy"] = "fail" }
        return .object(o)
    }

    /// A legacy room restores through `Room(restoring:)` as a data directory of the earlier release would.
    func testLegacyRoomRestores() throws {
        let fixtures = try StoredStateFixtures.all()
        let template = RoomTemplate(name: "t", controls: fixtures.map { (ControlID($0.name), $0.control) })
        var original = Room(name: "r", template: template, epoch: "e", historyLimit: 8)
        _ = original.join(SessionID("ann"), name: "Ann", roles: ["admin"])
        let stored = StoredRoom(name: "r", template: "t", epoch: "e", version: original.version,
                                controls: Dictionary(uniqueKeysWithValues: fixtures.map { (ControlID($0.name), LegacyStoredStates.byName[$0.name]!.state) }),
                                members: [StoredMember(session: SessionID("ann"), name: "Ann", roles: ["admin"])], history: [])
        let restored = try XCTUnwrap(Room(restoring: stored, template: template, historyLimit: 8))
        XCTAssertEqual(JSONDiff.diff(from: original.render(), to: restored.render()), [])
        XCTAssertEqual(restored.resumeFloor, stored.version,
                       "stored by a release that rendered rooms another way: a client's state from before the load gets a snapshot")

        // Once: the room's first write stores every old-format control anew, so the next load is no old room.
        var live = restored
        let patch = try XCTUnwrap(live.leave(SessionID("ann"), reason: .restart).patch)
        let write = live.storeWrite(for: patch, keepHistory: 8)
        XCTAssertEqual(Set(write.controls.map(\.id)), Set(fixtures.map { ControlID($0.name) }), "every control written in this format")
        var rewritten = stored
        rewritten.version = live.version
        rewritten.members = []
        for control in write.controls { rewritten.controls[control.id] = control.state }
        let reloaded = try XCTUnwrap(Room(restoring: rewritten, template: template, historyLimit: 8))
        XCTAssertNil(reloaded.resumeFloor, "loaded again: resumes from before this load are honoured")
    }

    func testAUsersSessionsAreCountedAndRoomsWithoutPresenceShowNoUser() throws {
        let template = RoomTemplate(name: "t", controls: [(ControlID("q"), Stepper(label: "Q", min: 0, max: 9, value: 0))])
        var room = Room(name: "r", template: template, epoch: "e", historyLimit: 8)
        XCTAssertEqual(room.join(SessionID("a1"), name: "Ann", roles: [], user: "ann").patch?.cause["userJoined"], true)
        XCTAssertNil(room.join(SessionID("a2"), name: "Ann", roles: [], user: "ann").patch?.cause["userJoined"], "her second device")
        XCTAssertNil(room.leave(SessionID("a1"), reason: .leave).patch?.cause["userLeft"])
        XCTAssertEqual(room.leave(SessionID("a2"), reason: .leave).patch?.cause["userLeft"], true, "her last device")
        XCTAssertEqual(room.join(SessionID("a3"), name: "Ann", roles: [], user: "ann").patch?.cause["userJoined"], true, "back: first again")

        var quiet = Room(name: "r", template: RoomTemplate(name: "t", controls: template.controls, presence: false), epoch: "e", historyLimit: 8)
        _ = quiet.join(SessionID("a1"), name: nil, roles: [], user: "ann")
        _ = try quiet.apply(control: ControlID("q"), intent: "press", args: ["direction": "next"], by: SessionID("a1"), requestID: nil, at: .milliseconds(0))
        let left = try XCTUnwrap(quiet.leave(SessionID("a1"), reason: .leave).patch, "a holder's leave is a patch")
        XCTAssertNil(left.cause["user"], "a room without presence shows nobody's user")
        XCTAssertNil(left.cause["userLeft"])
    }
}
