import LiveControlsEngine
import LiveControlsProtocol
import XCTest

final class UndoTests: XCTestCase {
    let day = CivilDate(year: 2026, month: 11, day: 28)
    let ann = SessionID("ann"), bob = SessionID("bob"), annPhone = SessionID("ann-phone")

    func room(_ controls: JSONValue, undo: JSONValue? = nil, extra: JSONObject = [:]) throws -> Room {
        var template: JSONObject = ["controls": controls]
        if let undo { template["undo"] = undo }
        for (k, v) in extra { template[k] = v }
        let config = try ServerConfig(json: ["templates": ["t": .object(template)]], file: "c.json", today: day)
        var room = Room(name: "r", template: config.templates["t"]!, epoch: "e", historyLimit: 64)
        _ = room.join(ann, name: "Ann", roles: [], user: "u-ann")
        _ = room.join(bob, name: "Bob", roles: [], user: "u-bob")
        _ = room.join(annPhone, name: "Ann", roles: [], user: "u-ann")
        return room
    }

    func at(_ ms: Int) -> Instant { Instant(nanoseconds: UInt64(ms) * 1_000_000) }

    @discardableResult
    func act(_ room: inout Room, _ control: String, _ intent: String, _ args: JSONObject = [:], by session: SessionID, at ms: Int = 0) throws -> RoomUpdate {
        try room.apply(control: ControlID(control), intent: intent, args: args, by: session, requestID: nil, at: at(ms))
    }

    func undo(_ room: inout Room, by session: SessionID, redo: Bool = false, at ms: Int = 0) -> Result<RoomUpdate, IntentError> {
        do throws(IntentError) { return .success(try room.undo(redo: redo, by: session, requestID: nil, at: at(ms))) } catch { return .failure(error) }
    }

    func code(_ result: Result<RoomUpdate, IntentError>) -> ErrorCode? {
        if case let .failure(error) = result { return error.code }
        return nil
    }

    func state(_ room: Room, _ control: String) -> JSONValue { room.render()["controls"]![control]! }

    func testAStepperSetIsUndoneAndRedoneAndTheUsersSessionsShareOneStack() throws {
        var room = try room(["q": ["kind": "stepper", "min": 0, "max": 10, "value": 1]])
        let update = try act(&room, "q", "set", ["value": 5], by: ann)
        XCTAssertEqual(update.undoable, [UndoCounts(user: "u:u-ann", undo: 1, redo: 0)])
        XCTAssertEqual(room.sessions(ofUndoUser: "u:u-ann"), [ann, annPhone])
        let undone = try undo(&room, by: annPhone).get()  // the same user on another device
        XCTAssertEqual(state(room, "q")["value"], 1)
        XCTAssertEqual(undone.patch?.cause["kind"], "undo")
        XCTAssertEqual(undone.patch?.cause["intent"], "set")
        XCTAssertEqual(undone.undoable, [UndoCounts(user: "u:u-ann", undo: 0, redo: 1)])
        _ = try undo(&room, by: ann, redo: true).get()
        XCTAssertEqual(state(room, "q")["value"], 5)
        XCTAssertEqual(room.undoCounts(for: ann), UndoCounts(user: "u:u-ann", undo: 1, redo: 0))
        XCTAssertEqual(undo(&room, by: bob).map { _ in "ok" }, .failure(IntentError(.nothingToUndo, "nothing to undo in room r: you have made no change here that is kept")))
    }

    func testSomeoneElsesChangeOfTheSamePartIsAConflictNamingThem() throws {
        var room = try room(["q": ["kind": "stepper", "min": 0, "max": 10, "value": 1]])
        try act(&room, "q", "set", ["value": 5], by: ann)
        try act(&room, "q", "set", ["value": 7], by: bob)
        guard case let .failure(error) = undo(&room, by: ann) else { return XCTFail("undone over Bob's change") }
        XCTAssertEqual(error.code, .conflict)
        XCTAssertEqual(error.by?["name"], "Bob")
        XCTAssertEqual(error.by?["session"], "bob")
        XCTAssertTrue(error.message.contains("by Bob"), error.message)
        XCTAssertEqual(state(room, "q")["value"], 7, "nothing changed")
        // Bob's own undo goes through; then Ann's does.
        _ = try undo(&room, by: bob).get()
        _ = try undo(&room, by: ann).get()
        XCTAssertEqual(state(room, "q")["value"], 1)
    }

    func testAFormFieldGoesBackAloneWhileAnotherFieldChangedByOthersStays() throws {
        var room = try room(["f": ["kind": "form", "elements": [["id": "e", "title": "E", "fields": [
            ["id": "a", "label": "A", "type": "text"], ["id": "b", "label": "B", "type": "text"]]]]]])
        try act(&room, "f", "set", ["element": "e", "field": "a", "value": "ann's"], by: ann)
        try act(&room, "f", "set", ["element": "e", "field": "b", "value": "bob's"], by: bob)
        _ = try undo(&room, by: ann).get()
        let fields = state(room, "f")["elements"]!.arrayValue![0]["fields"]!.arrayValue!
        XCTAssertEqual(fields[0]["value"], .null)
        XCTAssertEqual(fields[1]["value"], "bob's")
    }

    func testListEditsMatchItemsByIdAroundOthersInserts() throws {
        var room = try room(["l": ["kind": "list", "values": ["a", "b", "c"]]])
        try act(&room, "l", "insert", ["value": "mine", "index": 1], by: ann)
        try act(&room, "l", "insert", ["value": "bob's", "index": 0], by: bob)
        try act(&room, "l", "edit", ["id": "i2", "value": "B"], by: bob)
        _ = try undo(&room, by: ann).get()
        XCTAssertEqual(values(room), ["bob's", "a", "B", "c"])
        _ = try undo(&room, by: ann, redo: true).get()
        XCTAssertEqual(values(room), ["bob's", "a", "mine", "B", "c"], "back after the item before it")
        // A removal comes back where it was; a move goes back only while nobody reordered since.
        try act(&room, "l", "remove", ["id": "i3"], by: ann)
        XCTAssertEqual(values(room), ["bob's", "a", "mine", "B"])
        _ = try undo(&room, by: ann).get()
        XCTAssertEqual(values(room), ["bob's", "a", "mine", "B", "c"])
        try act(&room, "l", "move", ["id": "i1", "index": 4], by: ann)
        try act(&room, "l", "insert", ["value": "late", "index": 0], by: bob)  // an addition is no reorder
        XCTAssertEqual(values(room), ["late", "bob's", "mine", "B", "c", "a"])
        _ = try undo(&room, by: ann).get()
        XCTAssertEqual(values(room), ["late", "bob's", "a", "mine", "B", "c"], "the move taken back, Bob's item kept")
        _ = try undo(&room, by: ann, redo: true).get()
        try act(&room, "l", "move", ["id": "i3", "index": 0], by: bob)  // a reorder
        guard case let .failure(error) = undo(&room, by: ann) else { return XCTFail("a move undone over a reorder") }
        XCTAssertEqual(error.code, .conflict)
        XCTAssertEqual(error.by?["name"], "Bob")
    }

    func values(_ room: Room) -> [JSONValue] {
        state(room, "l")["sections"]!.arrayValue!.flatMap { $0["items"]!.arrayValue!.map { $0["value"]! } }
    }

    func testADragIsOneChangeAndTypingIsTooUntilAPause() throws {
        var room = try room(["v": ["kind": "range", "min": 0, "max": 100, "step": 1, "value": 10, "minIntervalMs": 0],
                             "n": ["kind": "text", "text": "Hello"]])
        for (i, value) in [20, 30, 40].enumerated() { try act(&room, "v", "set", ["value": .int(value)], by: ann, at: 100 * i) }
        XCTAssertEqual(room.undoCounts(for: ann)?.undo, 1)
        XCTAssertEqual(code(undo(&room, by: ann, at: 250)), .conflict, "not while the drag goes on")
        try act(&room, "v", "release", by: ann, at: 300)
        _ = try undo(&room, by: ann, at: 400).get()
        XCTAssertEqual(state(room, "v")["value"], 10)
        try act(&room, "n", "splice", ["at": 5, "insert": ",", "base": 0], by: ann, at: 1_000)
        try act(&room, "n", "splice", ["at": 6, "insert": " world", "base": 1], by: ann, at: 1_500)
        try act(&room, "n", "splice", ["at": 12, "insert": "!", "base": 2], by: ann, at: 3_000)  // after a pause: its own change
        XCTAssertEqual(room.undoCounts(for: ann), UndoCounts(user: "u:u-ann", undo: 2, redo: 0))
        _ = try undo(&room, by: ann, at: 3_100).get()
        XCTAssertEqual(text(room), "Hello, world")
        let update = try undo(&room, by: ann, at: 3_200).get()
        XCTAssertEqual(text(room), "Hello")
        XCTAssertEqual(update.patch?.cause["splices"], [["at": 5, "delete": 7, "insert": ""]], "the undo's splices, for editors")
    }

    func text(_ room: Room) -> String {
        (state(room, "n")["lines"]!.arrayValue!.map { $0.stringValue! }).joined(separator: "\n")
    }

    func testATextUndoKeepsWhatOthersTypedElsewhereAndRefusesOverlaps() throws {
        var room = try room(["n": ["kind": "text", "text": "one two three"]])
        try act(&room, "n", "splice", ["at": 3, "insert": " and a half", "base": 0], by: ann)  // "one and a half two three"
        try act(&room, "n", "splice", ["at": 0, "insert": "Just ", "base": 1], by: bob)
        try act(&room, "n", "splice", ["at": 29, "insert": "!", "base": 2], by: bob)
        _ = try undo(&room, by: ann).get()
        XCTAssertEqual(text(room), "Just one two three!")
        _ = try undo(&room, by: ann, redo: true).get()
        XCTAssertEqual(text(room), "Just one and a half two three!")
        try act(&room, "n", "splice", ["at": 13, "delete": 1, "insert": "A", "base": 5], by: bob)  // inside Ann's words
        guard case let .failure(error) = undo(&room, by: ann) else { return XCTFail("undone over Bob's edit inside it") }
        XCTAssertEqual(error.code, .conflict)
        XCTAssertEqual(error.by?["name"], "Bob")
    }

    func testAHoldFromPressThroughItsTicksToItsEndIsOneChange() throws {
        var room = try room(["q": ["kind": "stepper", "min": 0, "max": 100, "value": 0]])
        try act(&room, "q", "set", ["value": 5], by: ann, at: 0)
        try act(&room, "q", "press", ["direction": "next"], by: bob, at: 10_000)  // 6 at once
        XCTAssertEqual(room.undoCounts(for: bob)?.undo, 1)
        for ms in [10_500, 10_600, 10_700] { _ = room.wake(control: ControlID("q"), at: at(ms)) }  // 7, 8, 9
        try act(&room, "q", "release", by: bob, at: 10_750)
        XCTAssertEqual(state(room, "q")["value"], 9)
        XCTAssertEqual(room.undoCounts(for: bob)?.undo, 1, "the press, its ticks and its release: one change")
        guard case let .failure(error) = undo(&room, by: ann) else { return XCTFail("undone over Bob's hold") }
        XCTAssertEqual(error.by?["name"], "Bob", error.message)
        _ = try undo(&room, by: bob).get()
        XCTAssertEqual(state(room, "q")["value"], 5, "back to before the press")
        _ = try undo(&room, by: ann).get()
        XCTAssertEqual(state(room, "q")["value"], 0)
    }

    func testWhatCannotBeUndone() throws {
        var room = try room(["w": ["kind": "wizard", "steps": [["id": "a", "title": "A"], ["id": "b", "title": "B"]]],
                             "p": ["kind": "poll", "options": ["x", "y"]],
                             "t": ["kind": "timer", "mode": "countdown", "durationMs": 60_000]],
                            extra: ["permissions": ["p": ["close": ["host"]]]])
        try act(&room, "t", "start", by: ann)
        XCTAssertEqual(room.undoCounts(for: ann)?.undo, 0, "a timer is not undoable")
        try act(&room, "w", "next", by: ann)
        XCTAssertEqual(room.undoCounts(for: ann)?.undo, 1)
        let ended = try act(&room, "w", "next", by: ann)  // completes it: its changes leave every stack
        XCTAssertEqual(ended.undoable, [UndoCounts(user: "u:u-ann", undo: 0, redo: 0)])
        XCTAssertEqual(code(undo(&room, by: ann)), .nothingToUndo)
        try act(&room, "p", "vote", ["option": "x"], by: bob)
        _ = try undo(&room, by: bob).get()
        XCTAssertEqual(state(room, "p")["voters"], 0)
    }

    func testDepthBudgetAndOff() throws {
        var room = try room(["q": ["kind": "stepper", "min": 0, "max": 100, "value": 0]], undo: ["depth": 3])
        for v in 1...5 { try act(&room, "q", "set", ["value": .int(v)], by: ann, at: v * 2_000) }
        XCTAssertEqual(room.undoCounts(for: ann)?.undo, 3)
        for _ in 0..<3 { _ = try undo(&room, by: ann).get() }
        XCTAssertEqual(state(room, "q")["value"], 2)
        XCTAssertEqual(code(undo(&room, by: ann)), .nothingToUndo)
        // A room budget of 1 KiB keeps two stepper changes (512 bytes each) in all: the oldest goes, whoever made it.
        var small = try self.room(["q": ["kind": "stepper", "min": 0, "max": 100, "value": 0]], undo: ["maxBytes": 1_024])
        try act(&small, "q", "set", ["value": 1], by: ann)
        try act(&small, "q", "set", ["value": 2], by: bob, at: 2_000)
        let update = try act(&small, "q", "set", ["value": 3], by: bob, at: 4_000)
        XCTAssertEqual(update.undoable, [UndoCounts(user: "u:u-ann", undo: 0, redo: 0), UndoCounts(user: "u:u-bob", undo: 2, redo: 0)])
        var off = try self.room(["q": ["kind": "stepper"]], undo: false)
        XCTAssertEqual(try act(&off, "q", "next", by: ann).undoable, [])
        XCTAssertEqual(code(undo(&off, by: ann)), .nothingToUndo)
        XCTAssertThrowsError(try self.room(["q": ["kind": "stepper"]], undo: ["depth": 0]))
        XCTAssertThrowsError(try self.room(["q": ["kind": "stepper"]], undo: ["keep": 1]))
    }

    func testHookedIntentsAreNotRecorded() throws {
        var room = try room(["q": ["kind": "stepper", "min": 0, "max": 9], "r": ["kind": "stepper", "min": 0, "max": 9]],
                            extra: ["hooks": ["intent": ["url": "http://127.0.0.1:9/h", "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "controls": ["q"]]]])
        try act(&room, "q", "set", ["value": 3], by: ann)
        XCTAssertEqual(room.undoCounts(for: ann)?.undo, 0)
        try act(&room, "r", "set", ["value": 3], by: ann)
        XCTAssertEqual(room.undoCounts(for: ann)?.undo, 1)
    }

    func testStateMergeOfIdentifiedArrays() throws {
        let before: JSONValue = ["items": [["id": "a", "v": 1], ["id": "b", "v": 2]]]
        let after: JSONValue = ["items": [["id": "a", "v": 1], ["id": "b", "v": 3], ["id": "c", "v": 4]]]
        let current: JSONValue = ["items": [["id": "z", "v": 0], ["id": "a", "v": 9], ["id": "b", "v": 3], ["id": "c", "v": 4]]]
        XCTAssertEqual(try StateMerge.revert(before: before, after: after, current: current),
                       ["items": [["id": "z", "v": 0], ["id": "a", "v": 9], ["id": "b", "v": 2]]])
        XCTAssertEqual(StateMerge.changedPaths(before: before, after: after), [["items", "#b", "v"], ["items", "#c"]])
        let edited: JSONValue = ["items": [["id": "a", "v": 1], ["id": "b", "v": 5], ["id": "c", "v": 4]]]
        XCTAssertThrowsError(try StateMerge.revert(before: before, after: after, current: edited)) { error in
            XCTAssertEqual((error as? UndoConflict)?.path, ["items", "#b", "v"])
        }
    }

    func testASessionWithoutAUserTakesItsStackAlongWhenItLeaves() throws {
        var room = try room(["q": ["kind": "stepper", "min": 0, "max": 100, "value": 0]])
        let anon = SessionID("anon")
        _ = room.join(anon, name: nil, roles: [])
        try act(&room, "q", "set", ["value": 4], by: anon)
        XCTAssertEqual(room.undoCounts(for: anon), UndoCounts(user: "s:anon", undo: 1, redo: 0))
        _ = room.leave(anon, reason: .disconnect)
        _ = room.join(anon, name: nil, roles: [])
        XCTAssertEqual(room.undoCounts(for: anon), UndoCounts(user: "s:anon", undo: 0, redo: 0))
        // A user's stack outlives its sessions.
        try act(&room, "q", "set", ["value": 5], by: ann)
        _ = room.leave(ann, reason: .disconnect)
        _ = room.leave(annPhone, reason: .disconnect)
        _ = room.join(ann, name: "Ann", roles: [], user: "u-ann")
        XCTAssertEqual(room.undoCounts(for: ann)?.undo, 1)
    }

    func testADragWhoseSetsTheRoomHeldBackIsUndoneToWhereItStarted() throws {
        var room = try room(["v": ["kind": "range", "min": 0, "max": 100, "step": 1, "value": 10, "minIntervalMs": 100]])
        for (i, value) in [20, 30, 40, 50].enumerated() { try act(&room, "v", "set", ["value": .int(value)], by: ann, at: 1_000 + 10 * i) }
        _ = room.wake(control: ControlID("v"), at: at(1_100))  // the held-back 50 goes out
        try act(&room, "v", "set", ["value": 60], by: ann, at: 1_150)
        try act(&room, "v", "release", by: ann, at: 1_200)
        XCTAssertEqual(state(room, "v")["value"], 60)
        XCTAssertEqual(room.undoCounts(for: ann)?.undo, 1, "one drag")
        _ = try undo(&room, by: ann, at: 2_000).get()
        XCTAssertEqual(state(room, "v")["value"], 10)
    }

    func testTypingAfterARedoIsAChangeOfItsOwn() throws {
        var room = try room(["n": ["kind": "text", "text": "ab"]])
        try act(&room, "n", "splice", ["at": 1, "insert": "b", "base": 0], by: ann, at: 0)  // "abb": the b typed at 1, not 2
        _ = try undo(&room, by: ann, at: 100).get()
        _ = try undo(&room, by: ann, redo: true, at: 200).get()
        try act(&room, "n", "splice", ["at": 3, "insert": "!", "base": 3], by: ann, at: 300)
        XCTAssertEqual(room.undoCounts(for: ann), UndoCounts(user: "u:u-ann", undo: 2, redo: 0))
        try act(&room, "n", "splice", ["at": 1, "insert": "X", "base": 4], by: bob, at: 400)  // "aXbb!"
        _ = try undo(&room, by: ann, at: 500).get()
        XCTAssertEqual(text(room), "aXbb")
        _ = try undo(&room, by: ann, at: 600).get()
        XCTAssertEqual(text(room), "aXb", "the b Ann typed at 1 goes, after Bob's X; not the one that was there")
    }

    func testAnExclusiveClaimABoundAndTheServerHoldAnUndoBack() throws {
        var room = try room(["l": ["kind": "list", "values": ["a", "b"], "maxItems": 3]], extra: ["claims": ["l": ["mode": "exclusive"]]])
        try act(&room, "l", "remove", ["id": "i2"], by: ann)
        try act(&room, "l", "append", ["value": "x"], by: bob)
        try act(&room, "l", "append", ["value": "y"], by: bob)
        XCTAssertEqual(code(undo(&room, by: ann)), .outOfRange, "the list is full: the removed item cannot come back")
        _ = try undo(&room, by: bob).get()
        _ = try room.claim(bob, control: ControlID("l"), target: "i1", requestID: nil, at: at(0))
        XCTAssertEqual(code(undo(&room, by: ann)), .claimed, "Bob edits an item: an undo waits")
        var counter = try self.room(["q": ["kind": "stepper", "min": 0, "max": 100, "value": 0]])
        try act(&counter, "q", "set", ["value": 5], by: ann)
        _ = try counter.applyAsServer([ServerIntent(control: ControlID("q"), intent: "set", args: ["value": 9])], at: at(0))
        guard case let .failure(error) = undo(&counter, by: ann) else { return XCTFail("undone over the server's change") }
        XCTAssertNil(error.by, "the server is nobody to name")
        XCTAssertTrue(error.message.contains("by someone else"), error.message)
    }

    func testAnUndoKeepsAFormsRulesAndAConfirmingToggleRecordsNothing() throws {
        var room = try room(["f": ["kind": "form", "elements": [
            ["id": "a", "title": "A", "fields": [["id": "x", "label": "X", "type": "text", "required": true]]],
            ["id": "b", "title": "B", "fields": [["id": "y", "label": "Y", "type": "text"]]],
        ]], "t": ["kind": "toggle", "confirmHoldMs": 800]])
        try act(&room, "f", "set", ["element": "a", "field": "x", "value": "ann"], by: ann, at: 0)
        try act(&room, "f", "finish", ["element": "a"], by: bob, at: 100)
        XCTAssertEqual(code(undo(&room, by: ann)), .conflict, "element a is collapsed now: its field waits for an expand")
        _ = try undo(&room, by: bob).get()  // a expanded again
        _ = try undo(&room, by: ann).get()  // now Ann's set goes back
        try act(&room, "f", "set", ["element": "a", "field": "x", "value": "ann"], by: ann, at: 300)
        try act(&room, "f", "finish", ["element": "a"], by: ann, at: 400)
        try act(&room, "f", "expand", ["element": "a"], by: ann, at: 500)
        try act(&room, "f", "set", ["element": "a", "field": "x", "value": ""], by: bob, at: 600)  // a not valid now
        XCTAssertEqual(code(undo(&room, by: ann)), .notValid, "undoing the expand would move past an invalid element")
        try act(&room, "t", "press", by: ann, at: 1_000)
        _ = room.wake(control: ControlID("t"), at: at(1_800))
        XCTAssertEqual(state(room, "t")["on"], true)
        XCTAssertEqual(code(undo(&room, by: ann)), .notValid, "the toggle's switch was not recorded: Ann's last change is still the expand")
    }
}
