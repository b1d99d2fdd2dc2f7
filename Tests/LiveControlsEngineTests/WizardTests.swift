import LiveControlsProtocol
import XCTest

@testable import LiveControlsEngine

final class WizardTests: XCTestCase {
    typealias H = SeedHarness

    func wizard(_ config: JSONObject) throws -> Wizard {
        var full = config
        full["kind"] = "wizard"
        if full["steps"] == nil { full["steps"] = [["id": "s1", "title": "One"], ["id": "s2"], ["id": "s3"]] }
        return try Wizard(config: H.node(.object(full)), id: ControlID("w"))
    }

    func phase(_ w: Wizard) -> JSONValue? { w.render()["phase"] }

    func testStartInProgressComplete() throws {
        var w = try wizard([:])
        XCTAssertEqual(w.render()["kind"], "wizard")
        XCTAssertEqual(phase(w), "start")
        XCTAssertEqual(w.render()["step"], "s1")
        XCTAssertEqual(w.render()["title"], "One")
        XCTAssertEqual(w.render()["steps"]?.arrayValue?[1], ["id": "s2", "title": "s2", "guard": nil], "title defaults to the id")
        try H.apply(&w, "next")
        XCTAssertEqual(phase(w), "inProgress")
        try H.apply(&w, "next")
        XCTAssertEqual(w.render()["index"], 2)
        try H.apply(&w, "next")
        XCTAssertEqual(phase(w), "complete", "next on the last step completes")
        XCTAssertEqual(w.render()["index"], 2, "and stays on the last step")
    }

    func testPrevOnTheFirstStepExits() throws {
        var w = try wizard(["index": 1])
        XCTAssertEqual(phase(w), "start")
        try H.apply(&w, "prev")
        XCTAssertEqual(phase(w), "inProgress")
        XCTAssertEqual(w.render()["index"], 0)
        try H.apply(&w, "prev")
        XCTAssertEqual(phase(w), "exit")
        var fresh = try wizard([:])
        try H.apply(&fresh, "prev")
        XCTAssertEqual(phase(fresh), "exit", "prev straight from start on the first step")
    }

    func testCompleteAndExitAreFinalUntilReset() throws {
        var done = try wizard(["index": 2])
        try H.apply(&done, "next")
        XCTAssertEqual(phase(done), "complete")
        H.refuse(.finished, &done, "next")
        H.refuse(.finished, &done, "prev")
        try H.apply(&done, "append", ["step": ["id": "bonus", "title": "Bonus"]])
        XCTAssertEqual(phase(done), "complete", "append works after complete but does not reopen")
        XCTAssertEqual(done.render()["count"], 4)
        try H.apply(&done, "reset")
        XCTAssertEqual(phase(done), "start")
        XCTAssertEqual(done.render()["index"], 2, "reset goes back to the configured initial index")
        XCTAssertEqual(done.render()["count"], 3, "…and the configured steps")

        var exited = try wizard([:])
        try H.apply(&exited, "prev")
        H.refuse(.finished, &exited, "next")
        H.refuse(.finished, &exited, "prev")
        try H.apply(&exited, "reset")
        try H.apply(&exited, "next")
        XCTAssertEqual(phase(exited), "inProgress")
    }

    func testCycleWrapsToTheStartInsteadOfCompleting() throws {
        var w = try wizard(["cycle": true, "index": 2])
        try H.apply(&w, "next")
        XCTAssertEqual(w.render()["index"], 0)
        XCTAssertEqual(phase(w), "inProgress")
        XCTAssertEqual(w.render()["cycle"], true)
        try H.apply(&w, "prev")
        XCTAssertEqual(phase(w), "exit", "cycle wraps forward only; prev on the first step still exits")
    }

    func testSingleStep() throws {
        var w = try wizard(["steps": [["id": "only"]]])
        try H.apply(&w, "next")
        XCTAssertEqual(phase(w), "complete")
        var c = try wizard(["steps": [["id": "only"]], "cycle": true])
        try H.apply(&c, "next")
        XCTAssertEqual(phase(c), "inProgress")
        XCTAssertEqual(c.render()["index"], 0)
    }

    func testAppend() throws {
        var w = try wizard([:])
        try H.apply(&w, "append", ["step": ["id": "s4"]])
        XCTAssertEqual(w.render()["steps"]?.arrayValue?.last, ["id": "s4", "title": "s4", "guard": nil])
        try H.apply(&w, "append", ["step": ["id": "s5", "title": "Five", "form": "f", "element": "e"]])
        XCTAssertEqual(w.steps.last, Wizard.Step(id: "s5", title: "Five", form: "f", element: "e"))
        H.refuse(.invalidArgs, &w, "append", ["step": ["id": "s1"]])
        H.refuse(.invalidArgs, &w, "append", ["step": "s6"])
        H.refuse(.invalidArgs, &w, "append", ["step": ["title": "No id"]])
        H.refuse(.invalidArgs, &w, "append", ["step": ["id": "s6", "element": "e"]])
        H.refuse(.invalidArgs, &w, "append", ["step": ["id": "s6", "color": "red"]])
        H.refuse(.invalidArgs, &w, "append")
        for n in w.steps.count..<Wizard.maxSteps { try H.apply(&w, "append", ["step": ["id": .string("x\(n)")]]) }
        H.refuse(.outOfRange, &w, "append", ["step": ["id": "one-too-many"]])
        H.refuse(.unknownIntent, &w, "jump", ["index": 1])
    }

    // MARK: Guards

    func guardedRoom() throws -> (Wizard, Form, RoomView) {
        let w = try wizard(["steps": [
            ["id": "intro"], ["id": "account", "form": "f", "element": "account"], ["id": "all", "form": "f"], ["id": "end"],
        ]])
        let f = try Form(config: H.node([
            "kind": "form",
            "elements": [
                ["id": "account", "fields": [["id": "email", "type": "text", "required": true]]],
                ["id": "extra", "fields": []],
            ],
        ]), id: ControlID("f"))
        return (w, f, RoomView(controls: [ControlID("w"): w, ControlID("f"): f]))
    }

    func testAGuardedStepWaitsForItsFormElement() throws {
        var (w, f, room) = try guardedRoom()
        try H.apply(&w, "next", room: room)
        H.refuse(.guardFailed, &w, "next", room: room)
        try H.apply(&f, "set", ["element": "account", "field": "email", "value": "ann@example.org"])
        room = RoomView(controls: [ControlID("w"): w, ControlID("f"): f])
        try H.apply(&w, "next", room: room)
        XCTAssertEqual(w.render()["step"], "all")
        H.refuse(.guardFailed, &w, "next", room: room)
        try H.apply(&w, "prev", room: room)
        XCTAssertEqual(w.render()["step"], "account", "prev is never guarded")
        try H.apply(&w, "next", room: room)
        try H.apply(&f, "finish")
        try H.apply(&f, "finish")
        XCTAssertTrue(f.completed)
        try H.apply(&w, "next", room: RoomView(controls: [ControlID("w"): w, ControlID("f"): f]))
        XCTAssertEqual(w.render()["step"], "end", "a guard without element needs the whole form completed")
    }

    func testAGuardNamingAMissingFormOrElementFails() throws {
        var w = try wizard(["steps": [["id": "a", "form": "nope"], ["id": "b"]]])
        do {
            _ = try H.apply(&w, "next")
            XCTFail("expected guard_failed")
        } catch {
            XCTAssertEqual(error.code, .guardFailed)
            XCTAssertTrue(error.message.contains("\"nope\""), error.message)
        }
        let notAForm = RoomView(controls: [ControlID("nope"): Stepper(label: "S", min: 0, max: 1, value: 0)])
        H.refuse(.guardFailed, &w, "next", room: notAForm)
        let (_, f, _) = try guardedRoom()
        var w2 = try wizard(["steps": [["id": "a", "form": "f", "element": "ghost"], ["id": "b"]]])
        H.refuse(.guardFailed, &w2, "next", room: RoomView(controls: [ControlID("f"): f]))
    }

    func testConfigErrors() {
        let cases: [(JSONValue, String, String)] = [
            (["kind": "wizard"], "/templates/t/controls/c/steps", "missing"),
            (["kind": "wizard", "steps": []], "/templates/t/controls/c/steps", "at least one step"),
            (["kind": "wizard", "steps": [["title": "x"]]], "/templates/t/controls/c/steps/0/id", "missing"),
            (["kind": "wizard", "steps": [["id": "a"], ["id": "a"]]], "/templates/t/controls/c/steps/1/id", "duplicate"),
            (["kind": "wizard", "steps": [["id": "a", "element": "e"]]], "/templates/t/controls/c/steps/0/element", "needs form"),
            (["kind": "wizard", "steps": [["id": "a"]], "index": 1], "/templates/t/controls/c/index", "outside 0…0"),
            (["kind": "wizard", "steps": [["id": "a"]], "cycle": "yes"], "/templates/t/controls/c/cycle", "true or false"),
        ]
        for (config, path, words) in cases {
            let error = H.configError(config)
            XCTAssertEqual(error?.path, path, "\(config)")
            XCTAssertTrue(error?.message.contains(words) ?? false, "\(String(describing: error))")
        }
    }

    func testRoomGuardReadsTheLiveForm() throws {
        let (w, f, _) = try guardedRoom()
        var room = H.room([("w", w), ("f", f)])
        try H.roomApply(&room, "w", "next")
        XCTAssertThrowsError(try H.roomApply(&room, "w", "next"))
        try H.roomApply(&room, "f", "set", ["element": "account", "field": "email", "value": "x"], by: H.bob)
        let patch = try H.roomApply(&room, "w", "next")
        XCTAssertEqual(patch?.ops.allSatisfy { op in
            if case .replace(let path, _) = op { return path.tokens.prefix(2) == ["controls", "w"] }
            return false
        }, true, "only the wizard is diffed")
        XCTAssertEqual(room.render()["controls"]?["w"]?["step"], "all")
    }

    /// Issue 15: the wizard says whether `next` would be accepted now, and why not, following its guard's form live:
    /// a form change that opens (or closes) the guard patches the wizard's `canNext` and `blocked` in the same patch.
    func testCanNextFollowsTheGuardAndSaysWhichGuardFailsAndWhy() throws {
        let (w, f, _) = try guardedRoom()
        var room = H.room([("w", w), ("f", f)])
        func wizard() -> JSONValue { room.render()["controls"]!["w"]! }
        XCTAssertEqual(wizard()["canNext"], true)
        XCTAssertEqual(wizard()["blocked"], .null)
        try H.roomApply(&room, "w", "next")
        XCTAssertEqual(wizard()["canNext"], false)
        XCTAssertEqual(wizard()["canPrev"], true)
        XCTAssertEqual(wizard()["blocked"], ["code": "guard_failed", "message": "step account needs f.account to be valid first",
                                             "form": "f", "element": "account"])
        let opened = try XCTUnwrap(try H.roomApply(&room, "f", "set", ["element": "account", "field": "email", "value": "x"], by: H.bob))
        XCTAssertTrue(opened.ops.contains(.replace(path: JSONPointer(["controls", "w", "canNext"]), value: true)), "\(opened.ops)")
        XCTAssertTrue(opened.ops.contains(.replace(path: JSONPointer(["controls", "w", "blocked"]), value: .null)))
        XCTAssertEqual(wizard()["canNext"], true)
        let closed = try XCTUnwrap(try H.roomApply(&room, "f", "set", ["element": "account", "field": "email", "value": ""], by: H.bob))
        XCTAssertTrue(closed.ops.contains(.replace(path: JSONPointer(["controls", "w", "canNext"]), value: false)))
        var state = room.render()
        for (control, intent) in [("w", "prev"), ("w", "prev")] {
            let patch = try XCTUnwrap(try H.roomApply(&room, control, intent))
            state = try state.applying(patch.ops)
        }
        XCTAssertEqual(state, room.render(), "a client applying the patches has the room's state")
        XCTAssertEqual(wizard()["phase"], "exit")
        XCTAssertEqual(wizard()["canNext"], false)
        XCTAssertEqual(wizard()["canPrev"], false)
        XCTAssertEqual(wizard()["blocked"]?["code"], "finished")
    }

    func testStoredStateRoundTripKeepsPhaseAndTheResetPoint() throws {
        var w = try wizard(["index": 1])
        try H.apply(&w, "append", ["step": ["id": "s4", "form": "f"]])
        try H.apply(&w, "next")
        var copy = try H.storedRoundTrip(w)
        XCTAssertEqual(copy.render(), w.render())
        try H.apply(&copy, "reset")
        try H.apply(&w, "reset")
        XCTAssertEqual(copy.render(), w.render())
        XCTAssertEqual(copy.render()["index"], 1)
    }
}
