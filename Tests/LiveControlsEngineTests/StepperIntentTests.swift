import LiveControlsEngine
import LiveControlsProtocol
import XCTest

final class StepperIntentTests: XCTestCase {
    func code(_ body: () throws -> Void) -> ErrorCode? {
        do { try body() } catch { return (error as? IntentError)?.code }
        return nil
    }

    func testNextAndPrevClampToTheBoundTheyWouldPass() throws {
        var h = TickHarness(stepper: Stepper(label: "Q", min: 0, max: 99, value: 97, step: 5))
        try h.intent("next")
        XCTAssertEqual(h.value, 99)
        XCTAssertEqual(h.stepper.render()["canNext"], false)
        try h.intent("prev")
        XCTAssertEqual(h.value, 94)
    }

    func testWrapGoesFromOneBoundToTheOther() throws {
        var h = TickHarness(stepper: Stepper(label: "Q", min: 0, max: 99, value: 99, wrap: true))
        try h.intent("next")
        XCTAssertEqual(h.value, 0)
        try h.intent("prev")
        XCTAssertEqual(h.value, 99)
    }

    func testSetValidatesTypeAndRange() throws {
        var h = TickHarness(stepper: Stepper(label: "Q", min: 0, max: 99, value: 1))
        XCTAssertEqual(code { try h.intent("set") }, .invalidArgs)
        XCTAssertEqual(code { try h.intent("set", ["value": "3"]) }, .invalidArgs)
        XCTAssertEqual(code { try h.intent("set", ["value": 2.5]) }, .invalidArgs)
        XCTAssertEqual(code { try h.intent("set", ["value": 100]) }, .outOfRange)
        XCTAssertEqual(code { try h.intent("set", ["value": -1]) }, .outOfRange)
        try h.intent("set", ["value": 42])
        XCTAssertEqual(h.value, 42)
        let version = h.room.version
        XCTAssertNil(try h.intent("set", ["value": 42]).patch, "setting the current value changes nothing")
        XCTAssertEqual(h.room.version, version)
    }

    func testUnknownControlIntentAndNonMemberAreRefused() throws {
        var h = TickHarness(stepper: Stepper(label: "Q", min: 0, max: 99, value: 1))
        XCTAssertEqual(code { try h.intent("next", control: "nope") }, .unknownControl)
        XCTAssertEqual(code { try h.intent("jump") }, .unknownIntent)
        XCTAssertEqual(code { try h.intent("next", by: "stranger") }, .notJoined)
        XCTAssertEqual(code { try h.intent("press", ["direction": "up"]) }, .invalidArgs)
    }

    func testRenderShowsEveryDocumentedField() {
        let json = Stepper(label: "Quantity", min: 0, max: 99, value: 1).render()
        XCTAssertEqual(json.objectValue?.keys, ["kind", "label", "value", "min", "max", "step", "wrap", "canNext", "canPrev", "holding"])
        XCTAssertEqual(json["canPrev"], true)
    }

    func testConfigErrorsNameThePathAndTheProblem() {
        let bad: [(JSONValue, String, String)] = [
            (["kind": "stepper", "min": 5, "max": 1], "/templates/t/controls/q/max", "must be ≥ min"),
            (["kind": "stepper", "value": 500], "/templates/t/controls/q/value", "outside"),
            (["kind": "stepper", "step": 0], "/templates/t/controls/q/step", "1…"),
            // Found by an audit: these were accepted, and one intent or one held button crashed the server (overflow).
            (["kind": "stepper", "min": .int(Int.min), "value": 1], "/templates/t/controls/q/min", "±9007199254740991"),
            (["kind": "stepper", "max": 9_007_199_254_740_992], "/templates/t/controls/q/max", "±9007199254740991"),
            (["kind": "stepper", "hold": ["delayMs": .int(Int.max)]], "/templates/t/controls/q/hold/delayMs", "0…86400000"),
            (["kind": "stepper", "hold": ["maxHoldMs": 86_400_001]], "/templates/t/controls/q/hold/maxHoldMs", "1…86400000"),
            (["kind": "stepper", "hold": ["accelerationMs": 10_000_000_000_000_000]], "/templates/t/controls/q/hold/accelerationMs", "0…86400000"),
            (["kind": "stepper", "mim": 0], "/templates/t/controls/q/mim", "unknown key"),
            (["kind": "stepper", "hold": ["intervalMs": 0]], "/templates/t/controls/q/hold/intervalMs", "1…86400000"),
            (["kind": "slider"], "/templates/t/controls/q/kind", "unknown control kind"),
        ]
        for (control, path, message) in bad {
            let json: JSONValue = ["templates": ["t": ["controls": ["q": control]]]]
            XCTAssertThrowsError(try ServerConfig(json: json, file: "rooms.json", today: SeedHarness.today)) { error in
                let text = "\(error)"
                XCTAssertTrue(text.hasPrefix("rooms.json: at \(path): "), text)
                XCTAssertTrue(text.contains(message), text)
            }
        }
    }

    func testTheWidestStepperStepsAndWrapsWithoutOverflow() throws {
        let limit = Stepper.maxMagnitude
        var stepper = Stepper(label: "W", min: -limit, max: limit, value: -limit, step: limit, wrap: true)
        stepper.step(.prev)
        XCTAssertEqual(stepper.value, limit, "wraps from the bound")
        stepper.step(.next)
        XCTAssertEqual(stepper.value, -limit)
        stepper.step(.next)
        stepper.step(.next)
        XCTAssertEqual(stepper.value, limit, "clamped at the bound it would pass")
    }

    func testAcceleratedGapsStopAtTheShortestWhateverTheRepeatCount() {
        let timing = HoldTiming(delayMs: 0, intervalMs: 100, minIntervalMs: 1, accelerationMs: HoldTiming.maxMs)
        XCTAssertEqual(timing.interval(afterRepeat: 0), 100)
        XCTAssertEqual(timing.interval(afterRepeat: 1), 1)
        XCTAssertEqual(timing.interval(afterRepeat: Int.max / 2), 1, "the product overflows: the gap is the shortest")
    }

    func testBuiltinConfigHasTheDemoRoomAndStepper() throws {
        let config = ServerConfig.builtin(today: SeedHarness.today)
        XCTAssertEqual(config.defaultTemplate, "demo")
        XCTAssertEqual(config.rooms.map(\.name), ["demo"])
        let stepper = try XCTUnwrap(config.templates["demo"]?.controls.first { $0.id == ControlID("quantity") }?.control as? Stepper)
        XCTAssertEqual([stepper.min, stepper.max, stepper.value], [0, 99, 1])
    }

    func testHistoryReplaysOnlyWhatItStillHolds() throws {
        var h = TickHarness(stepper: Stepper(label: "Q", min: 0, max: 99, value: 1))
        for v in 2...80 { try h.intent("set", ["value": .int(v)]) }
        let version = h.room.version
        XCTAssertEqual(h.room.history.changes(after: version, current: version), [])
        XCTAssertEqual(h.room.history.changes(after: version - 3, current: version)?.map(\.version), [version - 2, version - 1, version])
        XCTAssertNil(h.room.history.changes(after: 1, current: version), "older than the 64 kept")
    }
}
