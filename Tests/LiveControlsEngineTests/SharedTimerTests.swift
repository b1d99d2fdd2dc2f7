import LiveControlsProtocol
import XCTest

@testable import LiveControlsEngine

/// The `timer` kind on a manual clock: deadlines in server time, exact firings, `then`, storage and a load after the
/// deadline passed.
final class SharedTimerTests: XCTestCase {
    /// Server time at instant 0 in these tests.
    let zero = 1_764_331_200_000

    func code(_ body: () throws -> Void) -> ErrorCode? {
        do { try body() } catch { return (error as? IntentError)?.code }
        return nil
    }

    func template(_ timer: JSONObject, extra: JSONObject = [:]) throws -> RoomTemplate {
        var controls: JSONObject = [
            "agenda": ["kind": "wizard", "steps": [["id": "a", "title": "A"], ["id": "b", "title": "B"]]],
        ]
        controls["q"] = .object(timer)
        for (k, v) in extra { controls[k] = v }
        let config = try ServerConfig(json: ["templates": ["w": ["controls": .object(controls)]]], file: "f",
                                      today: CivilDate(year: 2026, month: 1, day: 1))
        return try XCTUnwrap(config.templates["w"])
    }

    func harness(_ timer: JSONObject) throws -> TickHarness {
        var h = TickHarness(template: try template(timer))
        h.room.adopt(clock: .fixed(unixMillisecondsAtZero: zero))
        return h
    }

    func state(_ h: TickHarness) -> JSONValue { h.room.render()["controls"]!["q"]! }

    func testACountdownCarriesItsDeadlineInServerTimeAndFinishesExactlyThere() throws {
        var h = try harness(["kind": "timer", "label": "Timebox", "durationMs": 60_000])
        XCTAssertEqual(state(h)["status"], "ready")
        XCTAssertEqual(state(h)["remainingMs"], 60_000)
        XCTAssertEqual(state(h)["endsAt"], .null)
        h.advance(toMilliseconds: 1_000)
        try h.intent("start")
        XCTAssertEqual(state(h)["endsAt"], .int(zero + 61_000))
        XCTAssertEqual(state(h)["remainingMs"], .null, "running: clients count down to endsAt on their own clocks")
        XCTAssertEqual(h.timers[ControlID("q")], .milliseconds(61_000))
        let patchesWhileRunning = h.patches.count
        h.advance(toMilliseconds: 60_999)
        XCTAssertEqual(h.patches.count, patchesWhileRunning, "no patch per second")
        h.advance(toMilliseconds: 61_000)
        XCTAssertEqual(state(h)["status"], "finished")
        XCTAssertEqual(state(h)["remainingMs"], 0)
        XCTAssertEqual(h.patches.last?.cause["kind"], "timer")
    }

    func testPauseResumeAndAddMoveTheDeadline() throws {
        var h = try harness(["kind": "timer", "durationMs": 10_000])
        try h.intent("start")
        h.advance(toMilliseconds: 4_000)
        try h.intent("pause")
        XCTAssertEqual(state(h)["status"], "paused")
        XCTAssertEqual(state(h)["remainingMs"], 6_000)
        XCTAssertNil(h.room.wakeDeadline(of: ControlID("q")), "a paused timer wakes nobody")
        h.advance(toMilliseconds: 100_000)
        try h.intent("resume")
        XCTAssertEqual(state(h)["endsAt"], .int(zero + 106_000))
        try h.intent("add", ["ms": 30_000])
        XCTAssertEqual(state(h)["endsAt"], .int(zero + 136_000))
        try h.intent("add", ["ms": -35_000])
        XCTAssertEqual(state(h)["endsAt"], .int(zero + 101_000))
        XCTAssertEqual(code { try h.intent("add", ["ms": -1_000]) }, .outOfRange, "it would leave nothing")
        XCTAssertEqual(code { try h.intent("add", ["ms": 1.5]) }, .invalidArgs)
        XCTAssertEqual(code { try h.intent("add") }, .invalidArgs)
        h.advance(toMilliseconds: 100_999)
        XCTAssertEqual(state(h)["status"], "running")
        h.advance(toMilliseconds: 101_000)
        XCTAssertEqual(state(h)["status"], "finished")
        XCTAssertEqual(code { try h.intent("resume") }, .finished)
        XCTAssertEqual(code { try h.intent("add", ["ms": 1_000]) }, .finished)
        XCTAssertNil(try h.intent("pause").patch, "pausing a stopped timer changes nothing")
        try h.intent("reset")
        XCTAssertEqual(state(h)["status"], "ready")
        XCTAssertEqual(state(h)["remainingMs"], 10_000)
        try h.intent("start")
        XCTAssertNil(try h.intent("start").patch, "start while running changes nothing")
    }

    func testAStopwatchRunsOnClientsClocksAndNeverWakes() throws {
        var h = try harness(["kind": "timer", "mode": "stopwatch"])
        XCTAssertEqual(state(h)["elapsedMs"], 0)
        XCTAssertEqual(state(h)["durationMs"], .null)
        h.advance(toMilliseconds: 2_000)
        try h.intent("start")
        XCTAssertEqual(state(h)["startedAt"], .int(zero + 2_000))
        XCTAssertNil(h.room.wakeDeadline(of: ControlID("q")))
        h.advance(toMilliseconds: 9_500)
        try h.intent("pause")
        XCTAssertEqual(state(h)["elapsedMs"], 7_500)
        try h.intent("add", ["ms": 500])
        XCTAssertEqual(state(h)["elapsedMs"], 8_000)
        try h.intent("resume")
        XCTAssertEqual(state(h)["startedAt"], .int(zero + 9_500 - 8_000))
        XCTAssertEqual(code { try h.intent("add", ["ms": -9_000]) }, .outOfRange)
    }

    func testAStopwatchMayRunPastAWeekAndStillBeStored() throws {
        var h = try harness(["kind": "timer", "mode": "stopwatch"])
        try h.intent("add", ["ms": .int(SharedTimer.maxMs)])
        try h.intent("start")
        h.advance(toMilliseconds: 1_000)
        try h.intent("pause")
        XCTAssertEqual(state(h)["elapsedMs"], .int(SharedTimer.maxMs + 1_000))
        let stored = try XCTUnwrap(ControlCoding.encode(h.room.control(ControlID("q"))!))
        let restored = try XCTUnwrap(try ControlCoding.restore(kind: "timer", state: stored) as? SharedTimer)
        XCTAssertEqual(restored.render()["elapsedMs"], .int(SharedTimer.maxMs + 1_000), "not a room lost at its next load")
    }

    func testThenRunsTheNamedIntentInTheSameChangeAndARefusalIsSaid() throws {
        var h = try harness(["kind": "timer", "durationMs": 1_000, "then": ["control": "agenda", "intent": "next"]])
        XCTAssertEqual(state(h)["then"], ["control": "agenda", "intent": "next"])
        try h.intent("start")
        h.advance(toMilliseconds: 1_000)
        let finished = try XCTUnwrap(h.patches.last)
        XCTAssertEqual(finished.cause["then"], ["control": "agenda", "intent": "next"])
        XCTAssertTrue(finished.ops.contains { $0.path.tokens.first == "controls" && $0.path.tokens.dropFirst().first == "agenda" })
        XCTAssertEqual(h.room.render()["controls"]?["agenda"]?["phase"], "inProgress")
        let event = try XCTUnwrap(h.room.webhookDrafts(for: finished).first { $0.type == "timer.finished" })
        XCTAssertEqual(event.data["control"], "q")
        XCTAssertEqual(event.data["then"], ["control": "agenda", "intent": "next"])
        // At the agenda's last step `next` completes it; once complete, `next` is refused and the timer still finishes.
        for _ in 0..<3 {
            try h.intent("start")
            h.advance(toMilliseconds: Int(h.now.nanoseconds / 1_000_000) + 1_000)
        }
        XCTAssertEqual(state(h)["status"], "finished")
        XCTAssertEqual(h.patches.last?.cause["then"]?["refused"], "finished")
    }

    func testConfigErrorsNameTheirPlace() {
        let cases: [(JSONObject, String, String)] = [
            (["kind": "timer"], "/templates/w/controls/q/durationMs", "needs its duration"),
            (["kind": "timer", "durationMs": 0], "/templates/w/controls/q/durationMs", "1…"),
            (["kind": "timer", "mode": "stopwatch", "durationMs": 5], "/templates/w/controls/q/durationMs", "no duration"),
            (["kind": "timer", "mode": "egg"], "/templates/w/controls/q/mode", "countdown"),
            (["kind": "timer", "durationMs": 5, "then": ["control": "q", "intent": "reset"]], "/templates/w/controls/q/then/control", "another control"),
            (["kind": "timer", "mode": "stopwatch", "then": ["control": "agenda", "intent": "next"]], "/templates/w/controls/q/then", "stopwatch"),
        ]
        for (entry, pointer, words) in cases {
            XCTAssertThrowsError(try template(entry)) { error in
                let e = error as! ConfigError
                XCTAssertEqual(e.path, pointer, "\(entry)")
                XCTAssertTrue(e.message.contains(words), e.message)
            }
        }
    }

    func testALoadAfterTheDeadlineFiresAtOnceAndOnce() throws {
        var h = try harness(["kind": "timer", "durationMs": 5_000, "then": ["control": "agenda", "intent": "next"]])
        try h.intent("start")
        h.advance(toMilliseconds: 1_000)
        let stored = try XCTUnwrap(ControlCoding.encode(h.room.control(ControlID("q"))!))
        // Another process: its monotonic clock starts elsewhere (instant 0 is 1 h later in server time), and the
        // server was down past the deadline.
        var restored = try XCTUnwrap(try ControlCoding.restore(kind: "timer", state: stored) as? SharedTimer)
        restored.adopt(clock: .fixed(unixMillisecondsAtZero: zero + 3_600_000))
        XCTAssertEqual(restored.wakeDeadline, Instant(nanoseconds: 0), "the deadline passed before this process began")
        XCTAssertEqual(restored.render()["endsAt"], .int(zero + 5_000))
        let events = restored.wake(at: .milliseconds(10))
        XCTAssertEqual(events.then?.intent, "next")
        XCTAssertEqual(restored.render()["status"], "finished")
        XCTAssertNil(restored.wakeDeadline, "finished: nothing to fire again")
        // Still running with time left: the deadline lands where server time says.
        var early = try XCTUnwrap(try ControlCoding.restore(kind: "timer", state: stored) as? SharedTimer)
        early.adopt(clock: .fixed(unixMillisecondsAtZero: zero - 10_000))
        XCTAssertEqual(early.wakeDeadline, .milliseconds(15_000))
        XCTAssertThrowsError(try ControlCoding.restore(kind: "timer", state: #"{"label":"x","mode":"countdown","durationMs":5,"status":"running","stoppedMs":5}"#))
    }
}
