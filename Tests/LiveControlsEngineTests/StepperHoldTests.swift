import LiveControlsEngine
import LiveControlsProtocol
import XCTest

/// Hold-to-repeat on the stepper, on a manual clock: exact instants, no sleeping.
final class StepperHoldTests: XCTestCase {
    let next: JSONObject = ["direction": "next"]
    let prev: JSONObject = ["direction": "prev"]

    func testPressStepsAtOnceThenRepeatsAfterTheDelayThenEveryInterval() throws {
        var h = TickHarness(stepper: Stepper(label: "Q", min: 0, max: 99, value: 10))
        try h.intent("press", next)
        XCTAssertEqual(h.value, 11, "the press steps at once")
        h.advance(toMilliseconds: 499)
        XCTAssertEqual(h.value, 11, "nothing before the 500 ms delay")
        h.advance(toMilliseconds: 500)
        XCTAssertEqual(h.value, 12)
        h.advance(toMilliseconds: 599)
        XCTAssertEqual(h.value, 12)
        h.advance(toMilliseconds: 900)
        XCTAssertEqual(h.tickTimes, [500, 600, 700, 800, 900])
        XCTAssertEqual(h.tickPatches.map { $0.cause["tick"] }, [1, 2, 3, 4, 5])
        XCTAssertEqual(h.value, 16)
    }

    func testAccelerationShortensEachGapDownToTheMinimum() throws {
        let timing = HoldTiming(delayMs: 500, intervalMs: 100, minIntervalMs: 40, accelerationMs: 20)
        var h = TickHarness(stepper: Stepper(label: "Q", min: 0, max: 99, value: 0, timing: timing))
        try h.intent("press", next)
        h.advance(toMilliseconds: 860)
        XCTAssertEqual(h.tickTimes, [500, 600, 680, 740, 780, 820, 860])
    }

    func testLateWakeUpsCatchUpOnePatchPerTickWithoutDrift() throws {
        var h = TickHarness(stepper: Stepper(label: "Q", min: 0, max: 99, value: 0))
        try h.intent("press", next)
        var room = h.room
        // The timer fires 430 ms late: each wake applies one due tick; deadlines stay on the press grid.
        var deadlines: [Instant] = []
        var at = Instant.milliseconds(930)
        while let deadline = room.control(ControlID("q"))!.wakeDeadline, deadline <= at {
            deadlines.append(deadline)
            let update = room.wake(control: ControlID("q"), at: at)
            XCTAssertNotNil(update.patch)
            at = Instant.milliseconds(930)
        }
        XCTAssertEqual(deadlines.map { Int($0.nanoseconds / 1_000_000) }, [500, 600, 700, 800, 900])
        XCTAssertEqual(room.control(ControlID("q"))!.wakeDeadline, .milliseconds(1_000))
    }

    func testReleaseEndsTheHoldAndCancelsTheTimer() throws {
        var h = TickHarness(stepper: Stepper(label: "Q", min: 0, max: 99, value: 0))
        try h.intent("press", next)
        h.advance(toMilliseconds: 650)
        let update = try h.intent("release")
        XCTAssertEqual(update.timers, [TimerEffect(control: ControlID("q"), deadline: nil)])
        XCTAssertEqual(h.lastEnded, [["control": "q", "session": "a", "reason": "release"]])
        XCTAssertEqual(h.stepper.render()["holding"], .null)
        h.advance(toMilliseconds: 5_000)
        XCTAssertEqual(h.value, 3, "no tick after the release")
    }

    func testReleaseByAnotherSessionIsNotHolder() throws {
        var h = TickHarness(stepper: Stepper(label: "Q", min: 0, max: 99, value: 0))
        XCTAssertThrowsError(try h.intent("release")) { XCTAssertEqual(($0 as? IntentError)?.code, .notHolder) }
        try h.intent("press", next, by: "a")
        XCTAssertThrowsError(try h.intent("release", by: "b")) { XCTAssertEqual(($0 as? IntentError)?.code, .notHolder) }
    }

    func testLeaseEndsAnUnrenewedHoldExactlyAtMaxHold() throws {
        let timing = HoldTiming(delayMs: 500, intervalMs: 1_000, maxHoldMs: 2_200)
        var h = TickHarness(stepper: Stepper(label: "Q", min: 0, max: 99, value: 0, timing: timing))
        try h.intent("press", next)
        h.advance(toMilliseconds: 2_199)
        XCTAssertNotEqual(h.stepper.render()["holding"], .null)
        h.advance(toMilliseconds: 2_200)
        XCTAssertEqual(h.stepper.render()["holding"], .null)
        XCTAssertEqual(h.lastEnded, [["control": "q", "session": "a", "reason": "lease"]])
        XCTAssertEqual(h.patches.last?.cause["kind"], "timer")
        XCTAssertEqual(h.tickTimes, [500, 1_500])
    }

    func testPressingAgainRenewsTheLeaseWithoutAPatch() throws {
        let timing = HoldTiming(delayMs: 500, intervalMs: 1_000, maxHoldMs: 2_000)
        var h = TickHarness(stepper: Stepper(label: "Q", min: 0, max: 99, value: 0, timing: timing))
        try h.intent("press", next)
        h.advance(toMilliseconds: 1_800)
        let versionBefore = h.room.version
        let renewal = try h.intent("press", next)
        XCTAssertNil(renewal.patch, "a renewal changes nothing visible")
        XCTAssertEqual(h.room.version, versionBefore)
        h.advance(toMilliseconds: 3_799)
        XCTAssertNotEqual(h.stepper.render()["holding"], .null, "the lease now runs to 3,800 ms")
        h.advance(toMilliseconds: 3_800)
        XCTAssertEqual(h.lastEnded, [["control": "q", "session": "a", "reason": "lease"]])
    }

    func testHoldEndsAtTheBoundInTheSamePatchAsTheLastStep() throws {
        var h = TickHarness(stepper: Stepper(label: "Q", min: 0, max: 12, value: 10))
        try h.intent("press", next)
        h.advance(toMilliseconds: 500)
        XCTAssertEqual(h.value, 12)
        XCTAssertEqual(h.patches.last?.cause["kind"], "tick")
        XCTAssertEqual(h.lastEnded, [["control": "q", "session": "a", "reason": "bound"]])
        XCTAssertEqual(h.timers[ControlID("q")] ?? nil, nil)
        XCTAssertThrowsError(try h.intent("press", next)) { XCTAssertEqual(($0 as? IntentError)?.code, .atBound) }
        XCTAssertThrowsError(try h.intent("next")) { XCTAssertEqual(($0 as? IntentError)?.code, .atBound) }
    }

    func testPressThatReachesTheBoundEndsAtOnce() throws {
        var h = TickHarness(stepper: Stepper(label: "Q", min: 0, max: 10, value: 9))
        let update = try h.intent("press", next)
        XCTAssertEqual(h.value, 10)
        XCTAssertEqual(h.lastEnded, [["control": "q", "session": "a", "reason": "bound"]])
        XCTAssertTrue(update.timers.isEmpty)
    }

    func testWrappingStepperNeverEndsAtABound() throws {
        var h = TickHarness(stepper: Stepper(label: "Q", min: 0, max: 2, value: 1, wrap: true))
        try h.intent("press", next)
        h.advance(toMilliseconds: 800)
        XCTAssertEqual(h.patches.filter { $0.cause["kind"] == "tick" || $0.cause["kind"] == "intent" }.count, 5)
        XCTAssertEqual(h.value, (1 + 5) % 3, "2 → 0 → 1 → 2 → 0 …")
        XCTAssertNotEqual(h.stepper.render()["holding"], .null)
    }

    func testAnotherSessionsPressReplacesTheHold() throws {
        var h = TickHarness(stepper: Stepper(label: "Q", min: 0, max: 99, value: 50))
        try h.intent("press", next, by: "a")
        h.advance(toMilliseconds: 550)
        try h.intent("press", prev, by: "b")
        XCTAssertEqual(h.lastEnded, [["control": "q", "session": "a", "reason": "replaced"]])
        XCTAssertEqual(h.stepper.render()["holding"], ["session": "b", "direction": "prev"])
        XCTAssertEqual(h.document["presence"]?["a"]?["holding"], [])
        XCTAssertEqual(h.document["presence"]?["b"]?["holding"], ["q"])
        h.advance(toMilliseconds: 1_049)
        XCTAssertEqual(h.value, 51, "50 +1 (a's press) +1 (a's tick at 500) −1 (b's press); b's first repeat is due at 1,050")
        h.advance(toMilliseconds: 1_050)
        XCTAssertEqual(h.value, 50)
    }

    func testHolderLeavingOrDisconnectingEndsTheHoldInTheLeavePatch() throws {
        for reason in [HoldEndReason.leave, .disconnect] {
            var h = TickHarness(stepper: Stepper(label: "Q", min: 0, max: 99, value: 0))
            try h.intent("press", next)
            h.advance(toMilliseconds: 600)
            h.leave("a", reason: reason)
            let patch = try XCTUnwrap(h.patches.last)
            XCTAssertEqual(patch.cause["kind"], "leave")
            XCTAssertEqual(patch.cause["reason"], .string(reason.rawValue))
            XCTAssertEqual(patch.cause["ended"], [["control": "q", "session": "a", "reason": .string(reason.rawValue)]])
            XCTAssertNil(h.document["presence"]?["a"])
            XCTAssertEqual(h.timers[ControlID("q")] ?? nil, nil, "the timer is cancelled")
        }
    }
}
