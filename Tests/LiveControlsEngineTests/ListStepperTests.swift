import LiveControlsProtocol
import XCTest

@testable import LiveControlsEngine

// MARK: - Harness shared by the list, wizard, form and pager tests

/// A manual clock for one control: advancing it delivers every wake-up due on the way, in order.
struct SeedControlClock {
    var now: Instant = .milliseconds(0)

    /// Moves to `ms` (absolute), waking `control` at each deadline reached; returns each wake's events.
    @discardableResult
    mutating func advance<C: Control>(to ms: Int, _ control: inout C) -> [ControlEvents] {
        let target = Instant.milliseconds(ms)
        var events: [ControlEvents] = []
        while let deadline = control.wakeDeadline, deadline <= target {
            now = Swift.max(now, deadline)
            events.append(control.wake(at: deadline))
        }
        now = target
        return events
    }
}

enum SeedHarness {
    static let ann = SessionID("ann")
    static let bob = SessionID("bob")
    static let noRoom = RoomView(controls: [:])
    /// The date configs are read on in tests: the engine takes "today" from its caller.
    static let today = CivilDate(year: 2026, month: 2, day: 28)

    /// A config node placed where a template's control `c` would be, so error paths are realistic.
    static func node(_ json: JSONValue) -> ConfigNode {
        ConfigNode(json, file: "test.json", pointer: JSONPointer(["templates", "t", "controls", "c"]))
    }

    @discardableResult
    static func apply<C: Control>(_ control: inout C, _ intent: String, _ args: JSONObject = [:], by session: SessionID = ann,
                                  at now: Instant = .milliseconds(0), room: RoomView = noRoom) throws(IntentError) -> ControlEvents {
        try control.apply(intent, args: IntentArgs(args), by: session, at: now, room: room)
    }

    /// Asserts that the intent is refused with `code` and leaves the rendered state as it was.
    static func refuse<C: Control>(_ code: ErrorCode, _ control: inout C, _ intent: String, _ args: JSONObject = [:],
                                   by session: SessionID = ann, room: RoomView = noRoom,
                                   file: StaticString = #filePath, line: UInt = #line) {
        let before = control.render()
        do {
            _ = try control.apply(intent, args: IntentArgs(args), by: session, at: .milliseconds(0), room: room)
            XCTFail("\(intent) was accepted, expected \(code.rawValue)", file: file, line: line)
        } catch {
            XCTAssertEqual(error.code, code, error.message, file: file, line: line)
        }
        XCTAssertEqual(control.render(), before, "a refused intent changed the state", file: file, line: line)
    }

    /// `control` restored from the JSON text of its stored state, as a room store would.
    static func storedRoundTrip<C: StorableControl>(_ control: C) throws -> C {
        try C(storedState: JSONParser.parse(JSONWriter.string(control.storedState)))
    }

    /// The config error a whole server config with one template control gives, or nil.
    static func configError(_ control: JSONValue) -> ConfigError? {
        let json: JSONValue = ["templates": ["t": ["controls": ["c": control]]]]
        do { _ = try ServerConfig(json: json, file: "test.json", today: today); return nil } catch { return error }
    }

    /// A room made from `controls`, with `ann` and `bob` joined.
    static func room(_ controls: [(String, any Control)]) -> Room {
        var room = Room(name: "r", template: RoomTemplate(name: "t", controls: controls.map { (ControlID($0.0), $0.1) }),
                        epoch: "e", historyLimit: 64)
        _ = room.join(ann, name: "Ann", roles: ["admin"])
        _ = room.join(bob, name: "Bob", roles: ["admin"])
        return room
    }

    /// Applies an intent through the room and checks that its patch turns the old document into the new one.
    @discardableResult
    static func roomApply(_ room: inout Room, _ control: String, _ intent: String, _ args: JSONObject = [:], by session: SessionID = ann,
                          file: StaticString = #filePath, line: UInt = #line) throws(IntentError) -> Patch? {
        let before = room.render()
        let update = try room.apply(control: ControlID(control), intent: intent, args: args, by: session, requestID: nil, at: .milliseconds(0))
        if let patch = update.patch {
            do {
                let after = try before.applying(patch.ops)
                XCTAssertEqual(after, room.render(), file: file, line: line)
            } catch {
                XCTFail("patch does not apply: \(error)", file: file, line: line)
            }
        } else {
            XCTAssertEqual(before, room.render(), file: file, line: line)
        }
        return update.patch
    }
}

// MARK: - list (ArrayStepper)

extension SeedHarness {
    /// The demo's `person` list: two sections, `{name}: {age}` labels.
    static func demoList() throws -> ListStepper {
        try ListStepper(config: node([
            "kind": "list", "label": "Person", "display": "{name}: {age}",
            "sections": [
                ["header": "Siblings", "items": [["name": "Joe", "age": 23], ["name": "Tim", "age": 20]]],
                ["header": "Parents", "items": [["name": "Joe", "age": nil], ["name": "James"]]],
            ],
            "selected": ["name": "Joe", "age": 23],
        ]), id: ControlID("person"))
    }
}

final class ListStepperTests: XCTestCase {
    typealias H = SeedHarness

    func demoSections() throws -> ListStepper { try H.demoList() }

    func testSectionsGetIdsLabelsAndTheConfiguredSelection() throws {
        let list = try demoSections()
        XCTAssertEqual(list.items.map(\.id), ["i1", "i2", "i3", "i4"])
        XCTAssertEqual(list.sections.map(\.id), ["s1", "s2"])
        XCTAssertEqual(list.selected, "i1")
        let state = list.render()
        XCTAssertEqual(state["kind"], "list")
        XCTAssertEqual(state["selectedLabel"], "Joe: 23")
        XCTAssertEqual(state["canPrev"], false)
        XCTAssertEqual(state["canNext"], true)
        XCTAssertEqual(state["holding"], .null)
        let labels = list.items.map { $0.label }
        XCTAssertEqual(labels, ["Joe: 23", "Tim: 20", "Joe: —", "James: —"], "missing and null fields show —")
    }

    func testDuplicateValuesStayDistinctItems() throws {
        var list = try ListStepper(config: H.node(["kind": "list", "values": ["Joe", "Joe", "Tim"], "selected": "Joe"]), id: ControlID("c"))
        XCTAssertEqual(list.selected, "i1", "the first equal value is selected")
        try H.apply(&list, "next")
        XCTAssertEqual(list.selected, "i2")
        XCTAssertEqual(list.render()["selectedLabel"], "Joe")
        try H.apply(&list, "remove", ["id": "i1"])
        XCTAssertEqual(list.items.map(\.id), ["i2", "i3"], "removing one Joe leaves the other")
        try H.apply(&list, "append", ["value": "Joe"])
        XCTAssertEqual(list.items.map(\.id), ["i2", "i3", "i4"], "ids are never reused")
    }

    func testDisplayTemplates() throws {
        let person: JSONValue = ["name": "Ann", "age": 7, "address": ["city": "Oslo"], "tags": ["a"]]
        XCTAssertEqual(try DisplayTemplate("{name} ({age|?}) in {address.city}").render(person), "Ann (7) in Oslo")
        XCTAssertEqual(try DisplayTemplate("{nick|no nickname}, {zip}").render(person), "no nickname, —")
        XCTAssertEqual(try DisplayTemplate("{{{name}}} {tags}").render(person), "{Ann} [\"a\"]")
        XCTAssertEqual(try DisplayTemplate("#{}").render(42), "#42")
        XCTAssertEqual(try DisplayTemplate("{name}: {age}").render("plain"), "plain", "a non-object shows as itself")
        XCTAssertEqual(try DisplayTemplate("{name}: {age}").render(.null), "—")
        XCTAssertEqual(try DisplayTemplate("{name}: {age}").render(["age": 3]), "—: 3")
        XCTAssertEqual(DisplayTemplate.text(of: ["a": 1]), "{\"a\":1}", "no template prints the whole value")
        XCTAssertThrowsError(try DisplayTemplate("{name"))
        XCTAssertThrowsError(try DisplayTemplate("a } b"))
        let error = H.configError(["kind": "list", "values": [1], "display": "{oops"])
        XCTAssertEqual(error?.path, "/templates/t/controls/c/display")
        XCTAssertTrue(error?.message.contains("not closed") ?? false, "\(String(describing: error))")
    }

    func testWalkCrossesSectionsSkipsEmptyOnesAndStopsAtTheEnds() throws {
        var list = try ListStepper(config: H.node([
            "kind": "list",
            "sections": [["id": "a", "items": ["a1", "a2"]], ["id": "empty", "header": "Nobody", "items": []], ["id": "c", "items": ["c1"]]],
        ]), id: ControlID("c"))
        XCTAssertEqual(list.selected, "i1", "no configured selection selects the first item")
        try H.apply(&list, "next")
        try H.apply(&list, "next")
        XCTAssertEqual(list.selected, "i3", "a2 → c1 across the empty section")
        XCTAssertEqual(list.render()["index"], 2)
        XCTAssertFalse(list.canStep(.next))
        H.refuse(.atBound, &list, "next")
        try H.apply(&list, "prev")
        try H.apply(&list, "prev")
        H.refuse(.atBound, &list, "prev")
        XCTAssertEqual(list.render()["sections"]?.arrayValue?[1]["items"], [], "empty sections still render")
    }

    func testWrap() throws {
        var list = ListStepper(label: "L", values: ["a", "b", "c"], selectedIndex: 2, wrap: true)
        XCTAssertTrue(list.canStep(.next))
        try H.apply(&list, "next")
        XCTAssertEqual(list.selected, "i1")
        try H.apply(&list, "prev")
        XCTAssertEqual(list.selected, "i3")
        var single = ListStepper(label: "L", values: ["only"], wrap: true)
        XCTAssertFalse(single.canStep(.next), "one item cannot step even with wrap")
        H.refuse(.atBound, &single, "next")
    }

    func testSelect() throws {
        var list = try demoSections()
        try H.apply(&list, "select", ["id": "i4"])
        XCTAssertEqual(list.render()["selectedLabel"], "James: —")
        XCTAssertEqual(list.render()["canNext"], false)
        H.refuse(.notFound, &list, "select", ["id": "i99"])
        H.refuse(.invalidArgs, &list, "select", ["id": 4])
        H.refuse(.invalidArgs, &list, "select")
        H.refuse(.unknownIntent, &list, "set", ["value": 1])
    }

    func testAppend() throws {
        var list = try demoSections()
        try H.apply(&list, "append", ["value": ["name": "Ann", "age": 30]])
        XCTAssertEqual(list.sections[1].items.last?.id, "i5", "no section: the last one")
        try H.apply(&list, "append", ["value": ["name": "Sue"], "section": "s1"])
        XCTAssertEqual(list.sections[0].items.map(\.id), ["i1", "i2", "i6"])
        XCTAssertEqual(list.selected, "i1", "appending does not move the selection")
        try H.apply(&list, "append", ["value": .null])
        XCTAssertEqual(list.items.last?.value, .null, "any JSON value, null included")
        H.refuse(.notFound, &list, "append", ["value": 1, "section": "nope"])
        H.refuse(.invalidArgs, &list, "append", ["section": "s1"])

        var empty = try ListStepper(config: H.node(["kind": "list", "values": [], "maxItems": 2]), id: ControlID("c"))
        XCTAssertEqual(empty.render()["selected"], .null)
        XCTAssertEqual(empty.render()["value"], .null)
        H.refuse(.atBound, &empty, "next")
        try H.apply(&empty, "append", ["value": "first"])
        XCTAssertEqual(empty.selected, "i1", "the first item of an empty list gets selected")
        try H.apply(&empty, "append", ["value": "second"])
        H.refuse(.outOfRange, &empty, "append", ["value": "third"])
    }

    /// Issue 15: the seed keeps following its selection setting as the values change, so removing the selected item
    /// applies the policy: `fail` refuses it, `first` selects the first item, `append` puts the value back at the end.
    func testRemovingTheSelectedItemFollowsTheSelectionPolicy() throws {
        func list(_ policy: ListStepper.SelectionPolicy) -> ListStepper {
            var l = ListStepper(label: "L", sections: [(id: "a", header: nil, values: ["x", "y"]), (id: "b", header: nil, values: ["z"])], selectedIndex: 1)
            l.selectionPolicy = policy
            return l
        }
        var failing = list(.fail)
        H.refuse(.conflict, &failing, "remove", ["id": "i2"])
        try H.apply(&failing, "remove", ["id": "i3"])
        XCTAssertEqual(failing.selected, "i2", "removing another item keeps the selection")
        var first = list(.first)
        try H.apply(&first, "remove", ["id": "i2"])
        XCTAssertEqual(first.selected, "i1")
        var appending = list(.append)
        try H.apply(&appending, "remove", ["id": "i2"])
        XCTAssertEqual(appending.items.map(\.value), ["x", "z", "y"], "the value comes back at the end of the last section")
        XCTAssertEqual(appending.selected, "i4", "as a new item")
        XCTAssertEqual(appending.render()["selectionPolicy"], "append")
        var single = ListStepper(label: "L", values: ["only"])
        try H.apply(&single, "remove", ["id": "i1"])
        XCTAssertNil(single.selected, "the last item may go under any policy: an empty list selects nothing")
        XCTAssertEqual(single.render()["count"], 0)
        XCTAssertEqual(single.render()["canNext"], false)
        H.refuse(.notFound, &single, "remove", ["id": "i1"])
    }

    func testInsertMoveAndEditKeepIdsAndTheSelection() throws {
        var list = ListStepper(label: "L", sections: [(id: "a", header: nil, values: ["x", "y"]), (id: "b", header: nil, values: ["z"])], selectedIndex: 1)
        try H.apply(&list, "insert", ["value": "w", "index": 2])
        XCTAssertEqual(list.sections.map { $0.items.map(\.id) }, [["i1", "i2"], ["i4", "i3"]], "before the item at index 2, in its section")
        try H.apply(&list, "insert", ["value": "end", "index": 4])
        XCTAssertEqual(list.sections[1].items.last?.id, "i5", "index count appends to the last section")
        try H.apply(&list, "move", ["id": "i1", "index": 3])
        XCTAssertEqual(list.items.map(\.id), ["i2", "i4", "i3", "i1", "i5"])
        XCTAssertEqual(list.sections.map { $0.items.count }, [1, 4], "moved into the section of the item at its new position")
        try H.apply(&list, "edit", ["id": "i2", "value": "Y"])
        XCTAssertEqual(list.selectedItem, ListStepper.Item(id: "i2", value: "Y", display: nil), "an edited selected item stays selected")
        H.refuse(.outOfRange, &list, "insert", ["value": 1, "index": 6])
        H.refuse(.outOfRange, &list, "move", ["id": "i1", "index": 5])
        H.refuse(.notFound, &list, "move", ["id": "i9", "index": 0])
        H.refuse(.notFound, &list, "edit", ["id": "i9", "value": 1])
        H.refuse(.invalidArgs, &list, "insert", ["value": 1])
        H.refuse(.invalidArgs, &list, "edit", ["id": "i1"])
    }

    func testSelectionPolicies() throws {
        let base: JSONObject = ["kind": "list", "values": ["Tim", "Joe"], "selected": "Ann"]
        var failing = base
        failing["selectionPolicy"] = "fail"
        for config in [base, failing] {
            let error = H.configError(.object(config))
            XCTAssertEqual(error?.path, "/templates/t/controls/c/selected")
            XCTAssertTrue(error?.description.contains("\"Ann\" is not among the values") ?? false, "\(String(describing: error))")
        }
        var first = base
        first["selectionPolicy"] = "first"
        XCTAssertEqual(try ListStepper(config: H.node(.object(first)), id: ControlID("c")).render()["selectedLabel"], "Tim")
        var append = base
        append["selectionPolicy"] = "append"
        let appended = try ListStepper(config: H.node(.object(append)), id: ControlID("c"))
        XCTAssertEqual(appended.items.map(\.value), ["Tim", "Joe", "Ann"])
        XCTAssertEqual(appended.selected, "i3")
        XCTAssertEqual(appended.render()["canNext"], false)
        var firstOfNothing: JSONObject = ["kind": "list", "values": [], "selected": "Ann", "selectionPolicy": "first"]
        XCTAssertEqual(try ListStepper(config: H.node(.object(firstOfNothing)), id: ControlID("c")).selected, nil)
        firstOfNothing["selectionPolicy"] = "later"
        XCTAssertEqual(H.configError(.object(firstOfNothing))?.path, "/templates/t/controls/c/selectionPolicy")
    }

    func testConfigErrorsNameTheirPlace() {
        let cases: [(JSONValue, String, String)] = [
            (["kind": "list"], "/templates/t/controls/c/values", "needs values"),
            (["kind": "list", "values": [1], "sections": []], "/templates/t/controls/c/sections", "not both"),
            (["kind": "list", "sections": []], "/templates/t/controls/c/sections", "at least one section"),
            (["kind": "list", "sections": [["header": "A"]]], "/templates/t/controls/c/sections/0/items", "missing"),
            (["kind": "list", "sections": [["id": "x", "items": []], ["id": "x", "items": []]]], "/templates/t/controls/c/sections/1/id", "duplicate"),
            (["kind": "list", "values": [1, 2], "maxItems": 1], "/templates/t/controls/c/values", "maxItems"),
            (["kind": "list", "values": "Tim"], "/templates/t/controls/c/values", "expected an array"),
            (["kind": "list", "values": [], "wrapp": true], "/templates/t/controls/c/wrapp", "unknown key"),
        ]
        for (config, path, words) in cases {
            let error = H.configError(config)
            XCTAssertEqual(error?.path, path, "\(config)")
            XCTAssertTrue(error?.message.contains(words) ?? false, "\(String(describing: error))")
        }
    }

    func testHoldRepeatsEvery250msByDefaultAndEndsAtTheEnd() throws {
        var list = try ListStepper(config: H.node(["kind": "list", "values": ["a", "b", "c", "d", "e"]]), id: ControlID("c"))
        XCTAssertEqual(list.timing.intervalMs, 250)
        var clock = SeedControlClock()
        try H.apply(&list, "press", ["direction": "next"])
        XCTAssertEqual(list.selected, "i2", "a press steps at once")
        XCTAssertEqual(list.render()["holding"], ["session": "ann", "direction": "next"])
        XCTAssertEqual(list.holder, H.ann)
        XCTAssertTrue(clock.advance(to: 499, &list).isEmpty)
        XCTAssertEqual(clock.advance(to: 500, &list).map(\.tick), [1])
        XCTAssertEqual(list.selected, "i3")
        XCTAssertEqual(clock.advance(to: 749, &list).count, 0)
        let events = clock.advance(to: 1000, &list)
        XCTAssertEqual(events.map(\.tick), [2, 3])
        XCTAssertEqual(list.selected, "i5")
        XCTAssertEqual(events.last?.ended, [HoldEnd(session: H.ann, reason: .bound)])
        XCTAssertNil(list.hold)
        XCTAssertNil(list.wakeDeadline)
    }

    func testHoldReleaseAndTakeover() throws {
        var list = ListStepper(label: "L", values: ["a", "b", "c", "d"], selectedIndex: 3, wrap: true)
        try H.apply(&list, "press", ["direction": "prev"])
        H.refuse(.notHolder, &list, "release", by: H.bob)
        let replaced = try H.apply(&list, "press", ["direction": "next"], by: H.bob)
        XCTAssertEqual(replaced.ended, [HoldEnd(session: H.ann, reason: .replaced)])
        XCTAssertEqual(list.selected, "i4", "prev then next")
        var clock = SeedControlClock()
        clock.advance(to: 1000, &list)
        XCTAssertEqual(list.selected, "i3", "wrapping hold: 4 → 1 → 2 → 3 at 500, 750, 1000")
        XCTAssertEqual(try H.apply(&list, "release", by: H.bob).ended, [HoldEnd(session: H.bob, reason: .release)])
        XCTAssertEqual(list.sessionLeft(H.bob, reason: .leave), .none)
    }

    func testRemovingUnderARunningHold() throws {
        var list = ListStepper(label: "L", values: ["a", "b", "c", "d"], selectedIndex: 0)
        list.selectionPolicy = .first
        try H.apply(&list, "press", ["direction": "next"])
        XCTAssertEqual(list.selected, "i2")
        XCTAssertEqual(try H.apply(&list, "remove", ["id": "i2"], by: H.bob), .none, "the moving item may go; the hold goes on")
        XCTAssertEqual(list.selected, "i1", "selectionPolicy first")
        XCTAssertEqual(list.holder, H.ann)
        _ = try H.apply(&list, "remove", ["id": "i3"], by: H.bob)
        let ended = try H.apply(&list, "remove", ["id": "i4"], by: H.bob)
        XCTAssertEqual(ended.ended, [HoldEnd(session: H.ann, reason: .bound)], "the selection is now at the end")
        XCTAssertNil(list.hold)

        // With wrap a hold runs while two items are left; it ends (bound) when one is, so it never outlives the list.
        var draining = ListStepper(label: "L", values: ["a", "b", "c"], selectedIndex: 0, wrap: true)
        try H.apply(&draining, "press", ["direction": "next"])
        XCTAssertEqual(try H.apply(&draining, "remove", ["id": "i1"]), .none)
        XCTAssertNotNil(draining.hold)
        XCTAssertEqual(try H.apply(&draining, "remove", ["id": "i3"]).ended, [HoldEnd(session: H.ann, reason: .bound)])
        XCTAssertEqual(try H.apply(&draining, "remove", ["id": "i2"]), .none)
        XCTAssertNil(draining.selected)
        XCTAssertNil(draining.wakeDeadline)
        H.refuse(.atBound, &draining, "press", ["direction": "next"])
    }

    func testStoredStateRoundTripKeepsStateIdsAndHold() throws {
        var list = try demoSections()
        try H.apply(&list, "remove", ["id": "i4"])
        try H.apply(&list, "press", ["direction": "next"])
        var copy = try H.storedRoundTrip(list)
        XCTAssertEqual(copy.render(), list.render())
        XCTAssertEqual(copy.hold, list.hold)
        XCTAssertEqual(copy.display, list.display)
        try H.apply(&copy, "append", ["value": "x"])
        XCTAssertEqual(copy.items.last?.id, "i5", "the id counter survives")
    }
}
