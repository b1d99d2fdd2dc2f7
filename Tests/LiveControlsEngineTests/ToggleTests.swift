import LiveControlsProtocol
import XCTest

@testable import LiveControlsEngine

/// The `toggle` kind: set/flip, and the confirming hold timed by the server (manual clock, exact instants).
final class ToggleTests: XCTestCase {
    func code(_ body: () throws -> Void) -> ErrorCode? {
        do { try body() } catch { return (error as? IntentError)?.code }
        return nil
    }

    func harness(_ toggle: Toggle) -> TickHarness {
        var h = TickHarness(template: RoomTemplate(name: "t", controls: [(ControlID("q"), toggle)]))
        h.room.adopt(clock: .fixed(unixMillisecondsAtZero: 1_764_331_200_000))
        return h
    }

    func state(_ h: TickHarness) -> JSONValue { h.room.render()["controls"]!["q"]! }

    func testSetAndFlipSwitchAtOnceAndCheckTheirArgs() throws {
        var h = harness(Toggle(label: "Mute"))
        XCTAssertEqual(state(h)["on"], false)
        try h.intent("flip")
        XCTAssertEqual(state(h)["on"], true)
        try h.intent("set", ["on": false])
        XCTAssertEqual(state(h)["on"], false)
        XCTAssertNil(try h.intent("set", ["on": false]).patch, "setting what it is changes nothing")
        XCTAssertEqual(code { try h.intent("set") }, .invalidArgs)
        XCTAssertEqual(code { try h.intent("set", ["on": 1]) }, .invalidArgs)
        XCTAssertEqual(code { try h.intent("set", ["on": "true"]) }, .invalidArgs)
        XCTAssertEqual(code { try h.intent("toggle") }, .unknownIntent)
        XCTAssertEqual(code { try h.intent("release") }, .notHolder)
        try h.intent("press")
        XCTAssertEqual(state(h)["on"], true, "without confirmHoldMs a press switches at once")
        XCTAssertEqual(state(h)["holding"], .null)
    }

    func testAConfirmingHoldSwitchesExactlyAtItsDeadline() throws {
        var h = harness(Toggle(label: "On air", confirmHoldMs: 800))
        h.advance(toMilliseconds: 1_000)
        try h.intent("press", by: "a")
        XCTAssertEqual(state(h)["holding"], ["session": "a", "to": true, "until": 1_764_331_201_800])
        XCTAssertEqual(h.room.render()["presence"]?["a"]?["holding"], ["q"])
        XCTAssertEqual(h.timers[ControlID("q")], .milliseconds(1_800))
        XCTAssertNil(try h.intent("press", by: "a").patch, "the holder's press again changes nothing")
        h.advance(toMilliseconds: 1_799)
        XCTAssertEqual(state(h)["on"], false)
        h.advance(toMilliseconds: 1_800)
        XCTAssertEqual(state(h)["on"], true)
        XCTAssertEqual(state(h)["holding"], .null)
        XCTAssertEqual(h.lastEnded, [["control": "q", "session": "a", "reason": "confirmed"]])
        XCTAssertEqual(h.patches.last?.cause["kind"], "timer")
        XCTAssertEqual(h.room.render()["presence"]?["a"]?["holding"], [])
    }

    func testReleasingEarlyOrLeavingChangesNothing() throws {
        var h = harness(Toggle(label: "On air", on: true, confirmHoldMs: 500))
        try h.intent("press", by: "a")
        h.advance(toMilliseconds: 499)
        XCTAssertEqual(code { try h.intent("release", by: "b") }, .notHolder)
        try h.intent("release", by: "a")
        XCTAssertEqual(h.lastEnded, [["control": "q", "session": "a", "reason": "release"]])
        h.advance(toMilliseconds: 2_000)
        XCTAssertEqual(state(h)["on"], true)
        try h.intent("press", by: "b")
        h.leave("b", reason: .disconnect)
        XCTAssertEqual(h.lastEnded, [["control": "q", "session": "b", "reason": "disconnect"]])
        h.advance(toMilliseconds: 5_000)
        XCTAssertEqual(state(h)["on"], true)
        XCTAssertEqual(h.patches.filter { $0.cause["kind"] == "timer" }.count, 0, "no timer fired a change")
    }

    func testAReleaseAtUntilBeforeTheTimerFiresStillSwitches() throws {
        var h = harness(Toggle(label: "On air", confirmHoldMs: 500))
        try h.intent("press", by: "a")
        // The release arrives at the deadline, before the room's timer (the harness fires timers only when advanced).
        let update = try h.room.apply(control: ControlID("q"), intent: "release", args: [:], by: SessionID("a"), requestID: nil,
                                      at: .milliseconds(500))
        h.record(update)
        XCTAssertEqual(state(h)["on"], true, "the hold lasted: it switches")
        XCTAssertEqual(h.lastEnded, [["control": "q", "session": "a", "reason": "confirmed"]])
    }

    func testAnotherPressReplacesTheHoldAndStartsTheTimeOver() throws {
        var h = harness(Toggle(label: "On air", confirmHoldMs: 500))
        try h.intent("press", by: "a")
        h.advance(toMilliseconds: 400)
        try h.intent("press", by: "b")
        XCTAssertEqual(h.lastEnded, [["control": "q", "session": "a", "reason": "replaced"]])
        h.advance(toMilliseconds: 899)
        XCTAssertEqual(state(h)["on"], false)
        h.advance(toMilliseconds: 900)
        XCTAssertEqual(state(h)["on"], true)
    }

    func testMembersMustHoldButTheServerSetsDirectly() throws {
        var h = harness(Toggle(label: "On air", confirmHoldMs: 500))
        XCTAssertEqual(code { try h.intent("flip") }, .holdRequired)
        XCTAssertEqual(code { try h.intent("set", ["on": true]) }, .holdRequired)
        XCTAssertEqual(code { try h.intent("set", ["on": 3]) }, .invalidArgs, "bad args are told first")
        let update = try h.room.applyAsServer([ServerIntent(control: ControlID("q"), intent: "set", args: ["on": true])], at: h.now)
        h.record(update)
        XCTAssertEqual(state(h)["on"], true)
    }

    func testConfigAndStorage() throws {
        let good = try ServerConfig(json: ["templates": ["t": ["controls": ["q": ["kind": "toggle", "label": "Live", "on": true, "confirmHoldMs": 60_000]]]]],
                                    file: "f", today: CivilDate(year: 2026, month: 1, day: 1))
        let made = try XCTUnwrap(good.templates["t"]?.controls.first?.control as? Toggle)
        XCTAssertEqual(made.on, true)
        XCTAssertEqual(made.confirmHoldMs, 60_000)
        for (entry, pointer, words): (JSONObject, String, String) in [
            (["kind": "toggle", "confirmHoldMs": 0], "/templates/t/controls/q/confirmHoldMs", "1…60000"),
            (["kind": "toggle", "confirmHoldMs": 60_001], "/templates/t/controls/q/confirmHoldMs", "1…60000"),
            (["kind": "toggle", "on": "yes"], "/templates/t/controls/q/on", "true or false"),
            (["kind": "toggle", "flip": true], "/templates/t/controls/q/flip", "unknown key"),
        ] {
            XCTAssertThrowsError(try ServerConfig(json: ["templates": ["t": ["controls": ["q": .object(entry)]]]], file: "f",
                                                  today: CivilDate(year: 2026, month: 1, day: 1))) { error in
                let e = error as! ConfigError
                XCTAssertEqual(e.path, pointer, "\(entry)")
                XCTAssertTrue(e.message.contains(words), e.message)
            }
        }
        var h = harness(Toggle(label: "On air", confirmHoldMs: 500))
        try h.intent("press", by: "a")
        let toggle = h.room.control(ControlID("q")) as! Toggle
        let restored = try XCTUnwrap(try ControlCoding.restore(kind: "toggle", state: XCTUnwrap(ControlCoding.encode(toggle))) as? Toggle)
        XCTAssertEqual(restored.render(), toggle.render())
        XCTAssertEqual(restored.wakeDeadline, toggle.wakeDeadline)
        XCTAssertThrowsError(try ControlCoding.restore(kind: "toggle", state: #"{"label": "x", "on": 1}"#))
    }
}
