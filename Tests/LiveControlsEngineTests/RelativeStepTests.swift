import LiveControlsProtocol
import XCTest

@testable import LiveControlsEngine

/// `next`/`prev {count}`: a move of `count` steps lands where `count` single steps would (in closed form), stopping at
/// a bound the control does not wrap past; refused only when no step is possible.
final class RelativeStepTests: XCTestCase {
    func code(_ body: () throws -> Void) -> ErrorCode? {
        do { try body() } catch { return (error as? IntentError)?.code }
        return nil
    }

    /// Where `count` single steps take a control (stopping when no step is possible).
    func oneByOne<C: HoldableControl>(_ control: C, _ direction: Direction, _ count: Int) -> C {
        var c = control
        for _ in 0..<count where c.canStep(direction) { c.step(direction) }
        return c
    }

    /// `cases` random controls from `make`, each moved in a random direction by a random count up to `maxCount`: moved at
    /// once, each lands where single steps land it (`landing` says what to compare).
    func checkCountedMoves<C: HoldableControl, Landing: Equatable>(
        cases: Int, maxCount: Int, file: StaticString = #filePath, line: UInt = #line,
        make: (inout SystemRandomNumberGenerator) -> C, landing: (C) -> Landing
    ) {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<cases {
            let control = make(&rng)
            let direction = Direction.allCases.randomElement(using: &rng)!, count = Int.random(in: 1...maxCount, using: &rng)
            guard control.canStep(direction) else { continue }
            var moved = control
            moved.step(direction, count: count)
            XCTAssertEqual(landing(moved), landing(oneByOne(control, direction, count)), "\(control.render()): \(direction) ×\(count)",
                           file: file, line: line)
        }
    }

    func testStepperCountLandsWhereSingleStepsDo() {
        checkCountedMoves(cases: 20_000, maxCount: 80, make: { rng in
            let min = Int.random(in: -20...20, using: &rng), max = min + Int.random(in: 1...30, using: &rng)
            return Stepper(label: "s", min: min, max: max, value: Int.random(in: min...max, using: &rng),
                           step: Int.random(in: 1...12, using: &rng), wrap: Bool.random(using: &rng))
        }, landing: \.value)
    }

    func testListCountLandsWhereSingleStepsDo() {
        checkCountedMoves(cases: 5_000, maxCount: 30, make: { rng in
            let n = Int.random(in: 2...9, using: &rng)
            return ListStepper(label: "l", values: (0..<n).map { .int($0) }, selectedIndex: Int.random(in: 0..<n, using: &rng),
                               wrap: Bool.random(using: &rng))
        }, landing: \.selected)
    }

    func testPagerCountLandsWhereSingleStepsDo() {
        checkCountedMoves(cases: 5_000, maxCount: 40, make: { rng in
            let step = Int.random(in: 1...4, using: &rng), position = Int.random(in: -20...20, using: &rng)
            return Pager(label: "p", domain: .integer, position: position, min: position - Int.random(in: 0...30, using: &rng),
                         max: position + Int.random(in: 0...30, using: &rng), step: step)
        }, landing: \.position)
    }

    func testHugeCountsNeitherOverflowNorLoop() {
        let limit = IntentArgs.maxCount
        var s = Stepper(label: "s", min: -limit, max: limit, value: 0, step: limit)
        s.step(.next, count: limit)
        XCTAssertEqual(s.value, limit)
        var w = Stepper(label: "s", min: 0, max: 99, value: 0, step: 5, wrap: true)
        w.step(.next, count: limit)  // the cycle 0, 5, …, 95, 99, 0 has 21 values
        XCTAssertEqual(w.value, oneByOne(Stepper(label: "s", min: 0, max: 99, value: 0, step: 5, wrap: true), .next, limit % 21).value)
        var p = Pager(label: "p", domain: .integer, position: 0)
        p.step(.prev, count: limit)
        XCTAssertEqual(p.position, -limit)
        var l = ListStepper(label: "l", values: [1, 2, 3], wrap: true)
        l.step(.prev, count: limit)  // limit % 3 == 1
        XCTAssertEqual(l.selected, "i3")
    }

    func testCountOverTheRoomIsOnePatchAndItsArgsAreChecked() throws {
        var h = TickHarness(stepper: Stepper(label: "Q", min: 0, max: 99, value: 1))
        let version = h.room.version
        try h.intent("next", ["count": 10])
        XCTAssertEqual(h.value, 11)
        XCTAssertEqual(h.room.version, version + 1, "one move, one patch")
        try h.intent("prev", ["count": 500])
        XCTAssertEqual(h.value, 0, "a move past a bound stops at it")
        XCTAssertEqual(code { try h.intent("prev", ["count": 2]) }, .atBound, "refused only when no step is possible")
        try h.intent("next", ["count": .null])
        XCTAssertEqual(h.value, 1, "null is absent: one step")
        for bad: JSONValue in [0, -3, 2.5, "5", .int(IntentArgs.maxCount + 1)] {
            XCTAssertEqual(code { try h.intent("next", ["count": bad]) }, .invalidArgs, "\(bad)")
        }
        XCTAssertEqual(h.value, 1)
    }

    func testAHoldEndsWhenACountedMoveReachesItsBound() throws {
        var h = TickHarness(stepper: Stepper(label: "Q", min: 0, max: 20, value: 0))
        try h.intent("press", ["direction": "next"], by: "b")
        let update = try h.intent("next", ["count": 50])
        XCTAssertEqual(h.value, 20)
        XCTAssertEqual(update.patch?.cause["ended"]?.arrayValue?.first?["reason"], "bound")
    }
}
