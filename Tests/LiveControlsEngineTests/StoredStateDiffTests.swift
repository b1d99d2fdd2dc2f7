@testable import LiveControlsEngine
import LiveControlsProtocol
import LiveControlsTestSupport
import XCTest

/// `StoredStateDiff`: the operations it finds, applied to the old state, give the new one exactly (its JSON text, so
/// key order and `1` against `1.0` count), on seeded random pairs of related values.
final class StoredStateDiffTests: XCTestCase {
    func testAppliedOperationsGiveTheNewStateByteForByte() throws {
        var rng = SplitMix64(state: 40)
        for round in 0..<2_000 {
            let old = randomValue(&rng, depth: 0)
            let new = mutate(old, &rng, depth: 0)
            let ops = StoredStateDiff.diff(from: old, to: new)
            let applied = try old.applying(ops)
            XCTAssertEqual(JSONWriter.string(applied), JSONWriter.string(new), "round \(round): \(ops)")
            if JSONWriter.string(old) == JSONWriter.string(new) { XCTAssertEqual(ops, [], "round \(round): no change, no ops") }
        }
    }

    func testKeyOrderAndNumberTypesAreChanges() throws {
        let a: JSONValue = ["x": 1, "y": 2], b: JSONValue = ["y": 2, "x": 1]
        XCTAssertEqual(JSONWriter.string(try a.applying(StoredStateDiff.diff(from: a, to: b))), #"{"y":2,"x":1}"#)
        let c: JSONValue = ["x": .double(1)]
        let one: JSONValue = ["x": 1]
        XCTAssertEqual(JSONWriter.string(try one.applying(StoredStateDiff.diff(from: one, to: c))), JSONWriter.string(c))
    }

    func testNegativeZeroAndCanonicallyEqualSpellingsAreChanges() throws {
        let a: JSONValue = ["x": .double(0), "s": "\u{1E0B}\u{0323}"], b: JSONValue = ["x": .double(-0.0), "s": "\u{1E0D}\u{0307}"]
        XCTAssertEqual(JSONWriter.string(try a.applying(StoredStateDiff.diff(from: a, to: b))), JSONWriter.string(b))
        XCTAssertEqual(StoredStateDiff.diff(from: a, to: a), [])
    }

    func testAControlWhoseChangesDoNotApplyIsLeftOutSoTheRoomStartsAnew() {
        var controls: [ControlID: String] = [ControlID("a"): #"{"v":1}"#, ControlID("b"): #"{"v":1}"#]
        let failed = StoredRoom.replay([(ControlID("a"), 1, #"[{"op":"replace","path":"/v","value":2}]"#),
                                        (ControlID("b"), 1, #"[{"op":"remove","path":"/nope"}]"#)], onto: &controls)
        XCTAssertEqual(controls, [ControlID("a"): #"{"v":2}"#])
        XCTAssertEqual(Array(failed.keys), [ControlID("b")])
    }

    func testAnAppendToALongListIsOneAdd() {
        let items = (0..<100).map { JSONValue.object(["id": .string("i\($0)"), "json": .string(String(repeating: "x", count: 1_000))]) }
        let old: JSONValue = ["sections": [["id": "s", "items": .array(items)]], "selected": "i0"]
        let new: JSONValue = ["sections": [["id": "s", "items": .array(items + [["id": "i100", "json": "y"]])]], "selected": "i1"]
        XCTAssertEqual(StoredStateDiff.diff(from: old, to: new), [
            .add(path: JSONPointer(["sections", "0", "items", "100"]), value: ["id": "i100", "json": "y"]),
            .replace(path: JSONPointer(["selected"]), value: "i1"),
        ])
    }

    private func randomScalar(_ rng: inout SplitMix64) -> JSONValue {
        switch rng.next() % 6 {
        case 0: return .int(Int(rng.next() % 5))
        case 1: return .double(Double(rng.next() % 5))
        case 2: return .string(["a", "b", "é", "e\u{301}"][Int(rng.next() % 4)])
        case 3: return .bool(rng.next() % 2 == 0)
        case 4: return .null
        default: return .string(String(repeating: "z", count: Int(rng.next() % 40)))
        }
    }

    private func randomValue(_ rng: inout SplitMix64, depth: Int) -> JSONValue {
        guard depth < 4, rng.next() % 3 != 0 else { return randomScalar(&rng) }
        let count = Int(rng.next() % 5)
        if rng.next() % 2 == 0 { return .array((0..<count).map { _ in randomValue(&rng, depth: depth + 1) }) }
        var object = JSONObject()
        for _ in 0..<count { object[["k", "l", "m", "n", "o"][Int(rng.next() % 5)]] = randomValue(&rng, depth: depth + 1) }
        return .object(object)
    }

    /// A value like `value`: some members and elements kept (the same storage), some changed, added, removed or
    /// reordered.
    private func mutate(_ value: JSONValue, _ rng: inout SplitMix64, depth: Int) -> JSONValue {
        switch value {
        case var .array(a):
            for i in a.indices where rng.next() % 3 == 0 { a[i] = mutate(a[i], &rng, depth: depth + 1) }
            if rng.next() % 3 == 0 { a.insert(randomValue(&rng, depth: depth + 1), at: Int(rng.next() % UInt64(a.count + 1))) }
            if !a.isEmpty, rng.next() % 3 == 0 { a.remove(at: Int(rng.next() % UInt64(a.count))) }
            return .array(a)
        case let .object(o):
            var pairs = o.map { ($0.key, $0.value) }
            for i in pairs.indices where rng.next() % 3 == 0 { pairs[i].1 = mutate(pairs[i].1, &rng, depth: depth + 1) }
            if !pairs.isEmpty, rng.next() % 4 == 0 { pairs.remove(at: Int(rng.next() % UInt64(pairs.count))) }
            if pairs.count > 1, rng.next() % 5 == 0 { pairs.swapAt(0, pairs.count - 1) }
            if rng.next() % 3 == 0 { pairs.append(("p\(rng.next() % 3)", randomValue(&rng, depth: depth + 1))) }
            return .object(JSONObject(pairs: pairs))
        default:
            return rng.next() % 2 == 0 ? value : randomScalar(&rng)
        }
    }
}
