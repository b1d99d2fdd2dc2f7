import LiveControlsProtocol
import XCTest

@testable import LiveControlsEngine

/// The `range` kind (a fader): exact decimal grids, coalesced patches on a manual clock, the drag hold.
final class FaderTests: XCTestCase {
    func code(_ body: () throws -> Void) -> ErrorCode? {
        do { try body() } catch { return (error as? IntentError)?.code }
        return nil
    }

    func harness(_ entry: JSONObject) throws -> TickHarness {
        var full = entry
        full["kind"] = "range"
        let config = try ServerConfig(json: ["templates": ["t": ["controls": ["q": .object(full)]]]], file: "f",
                                      today: CivilDate(year: 2026, month: 1, day: 1))
        return TickHarness(template: try XCTUnwrap(config.templates["t"]))
    }

    func value(_ h: TickHarness) -> JSONValue { h.room.render()["controls"]!["q"]!["value"]! }

    func testDecimalStepsAreExact() throws {
        var h = try harness(["min": 0, "max": 1, "step": 0.1, "minIntervalMs": 0])
        for _ in 0..<3 { try h.intent("nudge", ["by": 0.1]) }
        XCTAssertEqual(value(h), .double(0.3), "0.1 + 0.1 + 0.1 is 0.3, not 0.30000000000000004")
        XCTAssertEqual(JSONWriter.string(value(h)), "0.3")
        try h.intent("set", ["value": 0.26])
        XCTAssertEqual(value(h), .double(0.3), "snapped to the grid")
        try h.intent("set", ["value": 1])
        XCTAssertEqual(value(h), .double(1.0))
        XCTAssertEqual(code { try h.intent("nudge", ["by": 0.1]) }, .atBound)
        try h.intent("nudge", ["by": -5])
        XCTAssertEqual(value(h), .double(0), "a nudge past a bound stops at it")
        var odd = try harness(["min": 0, "max": 1, "step": 0.3, "minIntervalMs": 0])
        try odd.intent("set", ["value": 0.98])
        XCTAssertEqual(value(odd), .double(1), "max is on the grid too")
        try odd.intent("set", ["value": 0.7])
        XCTAssertEqual(value(odd), .double(0.6))
        var whole = try harness(["min": -10, "max": 10, "step": 5, "value": 3, "minIntervalMs": 0])
        XCTAssertEqual(value(whole), 5, "an integer grid stays integers")
        try whole.intent("set", ["value": -7.4])
        XCTAssertEqual(value(whole), -5)
    }

    func testTheNearestGridPointIsFoundFromTheNumberSentAndNothingMovingTakesNoHold() throws {
        var h = try harness(["min": 0, "max": 1, "step": 0.2, "minIntervalMs": 0])
        try h.intent("set", ["value": 0.29], by: "a")
        XCTAssertEqual(value(h), .double(0.2), "0.29 is nearer 0.2 than 0.4 (not rounded to 0.3 first)")
        var coarse = try harness(["min": 0, "max": 100, "step": 5, "minIntervalMs": 0])
        try coarse.intent("set", ["value": 50], by: "a")
        XCTAssertNil(try coarse.intent("nudge", ["by": 1], by: "b").patch, "under half a step: nothing moves")
        XCTAssertEqual(coarse.room.render()["controls"]?["q"]?["holding"], ["session": "a"], "and Ann's drag is not taken over")
        let huge = Fader.snap(9_007_199_254_740_990, min: -9_007_199_254_740_991, max: 9_007_199_254_740_991, step: 1)
        XCTAssertEqual(huge, 9_007_199_254_740_990, "exact in integers at the ends of the range")
    }

    func testADragIsCoalescedToOnePatchPerIntervalAndTheLastValueIsAlwaysSent() throws {
        var h = try harness(["min": 0, "max": 1000, "minIntervalMs": 16])
        let start = h.patches.count
        try h.intent("set", ["value": 10])  // starts the drag: at once
        XCTAssertEqual(h.patches.count, start + 1)
        XCTAssertEqual(h.room.render()["controls"]?["q"]?["holding"], ["session": "a"])
        h.advance(toMilliseconds: 5)
        XCTAssertNil(try h.intent("set", ["value": 11]).patch, "within the interval: applied, acked, not yet sent")
        h.advance(toMilliseconds: 10)
        XCTAssertNil(try h.intent("set", ["value": 12]).patch)
        XCTAssertEqual(value(h), 10, "the room shows what it last sent")
        h.advance(toMilliseconds: 15)
        XCTAssertEqual(h.patches.count, start + 1)
        h.advance(toMilliseconds: 16)
        XCTAssertEqual(h.patches.count, start + 2)
        XCTAssertEqual(value(h), 12, "the last value, at the end of the interval")
        XCTAssertEqual(h.patches.last?.cause["kind"], "timer")
        h.advance(toMilliseconds: 40)
        XCTAssertNotNil(try h.intent("set", ["value": 13]).patch, "the interval has passed: at once")
        // A 60/s drag for a second: 60 sets, at most one patch per 16 ms.
        let before = h.patches.count
        for i in 1...60 {
            h.advance(toMilliseconds: 40 + i * 1000 / 60)
            try h.intent("set", ["value": .int(13 + i)])
        }
        h.advance(toMilliseconds: 1_100)
        XCTAssertEqual(value(h), 73)
        XCTAssertLessThanOrEqual(h.patches.count - before, 63)
        XCTAssertGreaterThanOrEqual(h.patches.count - before, 55, "every frame a patch, give or take")
    }

    func testTheDragHoldEndsOnReleaseIdleOrAnotherSetter() throws {
        var h = try harness(["min": 0, "max": 100, "minIntervalMs": 50])
        try h.intent("set", ["value": 1], by: "a")
        h.advance(toMilliseconds: 10)
        try h.intent("set", ["value": 2], by: "a")
        XCTAssertEqual(code { try h.intent("release", by: "b") }, .notHolder)
        try h.intent("release", by: "a")
        XCTAssertEqual(h.lastEnded, [["control": "q", "session": "a", "reason": "release"]])
        XCTAssertEqual(value(h), 2, "a release sends what is pending")
        try h.intent("set", ["value": 5], by: "a")
        h.advance(toMilliseconds: 100)
        try h.intent("set", ["value": 6], by: "b")
        XCTAssertEqual(h.lastEnded, [["control": "q", "session": "a", "reason": "replaced"]])
        XCTAssertEqual(value(h), 6, "a new dragger's first set goes out at once")
        h.advance(toMilliseconds: 1_099)
        XCTAssertEqual(h.room.render()["controls"]?["q"]?["holding"], ["session": "b"])
        h.advance(toMilliseconds: 1_100)
        XCTAssertEqual(h.lastEnded, [["control": "q", "session": "b", "reason": "lease"]])
        let update = try h.room.applyAsServer([ServerIntent(control: ControlID("q"), intent: "set", args: ["value": 9])], at: h.now)
        h.record(update)
        XCTAssertEqual(value(h), 9)
        XCTAssertEqual(h.room.render()["controls"]?["q"]?["holding"], .null, "the server API holds nothing")
    }

    func testBadArgsAndConfigs() throws {
        var h = try harness(["min": 0, "max": 10])
        XCTAssertEqual(code { try h.intent("set", ["value": "3"]) }, .invalidArgs)
        XCTAssertEqual(code { try h.intent("set") }, .invalidArgs)
        XCTAssertEqual(code { try h.intent("set", ["value": 10.5]) }, .outOfRange)
        XCTAssertEqual(code { try h.intent("set", ["value": -0.1]) }, .outOfRange)
        XCTAssertEqual(code { try h.intent("nudge", ["by": true]) }, .invalidArgs)
        XCTAssertEqual(code { try h.intent("nudge", ["by": -1]) }, .atBound)
        XCTAssertEqual(code { try h.intent("release") }, .notHolder)
        for (entry, key, words): (JSONObject, String, String) in [
            (["step": 0], "step", "above 0"),
            (["min": 5, "max": 5], "max", "above min"),
            (["step": 0.0000000001], "step", "decimal places"),
            (["minIntervalMs": 1_001], "minIntervalMs", "0…1000"),
            (["value": 200], "value", "within"),
            (["max": "ten"], "max", "number"),
        ] {
            XCTAssertThrowsError(try harness(entry)) { error in
                let e = error as! ConfigError
                XCTAssertEqual(e.path, "/templates/t/controls/q/\(key)", "\(entry)")
                XCTAssertTrue(e.message.contains(words), e.message)
            }
        }
    }

    func testStoredAsTheLatestValue() throws {
        var h = try harness(["min": 0, "max": 1, "step": 0.05, "minIntervalMs": 100])
        try h.intent("set", ["value": 0.5])
        h.advance(toMilliseconds: 1)
        try h.intent("set", ["value": 0.55])  // pending
        let stored = try XCTUnwrap(ControlCoding.encode(h.room.control(ControlID("q"))!))
        let restored = try XCTUnwrap(try ControlCoding.restore(kind: "range", state: stored) as? Fader)
        XCTAssertEqual(restored.render()["value"], .double(0.55), "what was set, even if not sent yet")
        XCTAssertEqual(restored.render()["holding"], .null)
        XCTAssertEqual(restored.render()["step"], .double(0.05))
    }
}
