import XCTest

@testable import LiveControlsProtocol

/// `JSONObject` keeps its members in insertion order, finds them by key at any size (small objects by search, large
/// ones through a dictionary of positions), and compares equal regardless of order.
final class JSONObjectTests: XCTestCase {
    func testSmallAndLargeObjectsKeepOrderThroughSetsReplacementsAndRemovals() {
        for size in [3, JSONObject.indexedCount, JSONObject.indexedCount + 1, 200] {
            var object = JSONObject()
            var expected: [(String, Int)] = []
            for i in 0..<size {
                object["k\(i)"] = .int(i)
                expected.append(("k\(i)", i))
            }
            object["k0"] = .int(-1)  // a replacement keeps the key's place
            expected[0].1 = -1
            object["k\(size / 2)"] = nil  // a removal closes the gap
            expected.remove(at: size / 2)
            if size / 2 != 1 {
                object["k1"] = nil  // near the front: every later member moves
                expected.remove(at: 1)
            }
            object["missing"] = nil  // removing what is not there changes nothing
            object["new"] = .int(99)
            expected.append(("new", 99))
            XCTAssertEqual(object.count, expected.count, "size \(size)")
            XCTAssertEqual(object.keys, expected.map(\.0), "size \(size)")
            XCTAssertEqual(object.map { $0.value }, expected.map { .int($0.1) }, "size \(size)")
            for (key, value) in expected { XCTAssertEqual(object[key], .int(value), "size \(size), \(key)") }
            XCTAssertNil(object["k\(size / 2)"], "size \(size)")
            XCTAssertNil(object["missing"], "size \(size)")
        }
    }

    func testShrinkingBelowTheIndexedSizeStillFindsEveryKey() {
        var object = JSONObject(pairs: (0..<40).map { ("k\($0)", .int($0)) })
        for i in stride(from: 39, through: 5, by: -1) { object["k\(i)"] = nil }
        XCTAssertEqual(object.keys, ["k0", "k1", "k2", "k3", "k4"])
        XCTAssertEqual(object["k4"], .int(4))
        object["k4"] = .string("x")
        XCTAssertEqual(object["k4"], .string("x"))
    }

    func testARepeatedKeyInPairsKeepsTheFirstPlaceAndTheLastValue() {
        let object = JSONObject(pairs: [("a", 1), ("b", 2), ("a", 3)])
        XCTAssertEqual(object.keys, ["a", "b"])
        XCTAssertEqual(object["a"], 3)
        let large = JSONObject(pairs: (0..<40).map { ("k\($0 % 30)", .int($0)) })  // k0…k9 repeated past 16
        XCTAssertEqual(large.keys, (0..<30).map { "k\($0)" })
        XCTAssertEqual(large["k5"], .int(35))
        XCTAssertEqual(large["k29"], .int(29))
    }

    func testObjectsOfDistinctKeysAndParsedObjectsAreFoundAtEverySize() throws {
        for size in [3, JSONObject.indexedCount, JSONObject.indexedCount + 1, 40] {
            let keys = (0..<size).map { "k\($0)" }
            var literal = JSONObject(distinctKeys: keys.enumerated().map { ($1, .int($0)) })
            let text = "{" + keys.enumerated().map { "\"\($1)\":\($0)" }.joined(separator: ",") + "}"
            guard case var .object(parsed) = try JSONParser.parse(Array(text.utf8)) else { return XCTFail("not an object") }
            for (name, object) in [("literal", literal), ("parsed", parsed)] {
                XCTAssertEqual(object.keys, keys, "\(name), size \(size)")
                for (i, key) in keys.enumerated() { XCTAssertEqual(object[key], .int(i), "\(name), size \(size), \(key)") }
                XCTAssertNil(object["missing"])
            }
            literal["new"] = .int(-1)  // grows on as any object does
            parsed["new"] = .int(-1)
            XCTAssertEqual(literal, parsed)
            XCTAssertEqual(literal["new"], .int(-1))
        }
        XCTAssertThrowsError(try JSONParser.parse(Array(#"{"a":1,"b":2,"a":3}"#.utf8)), "a repeated key is refused")
    }

    func testALargeObjectStaysFindableThroughRemovalsAtBothEndsShrinkingAndGrowingAgain() {
        var object = JSONObject(pairs: (0..<30).map { ("k\($0)", .int($0)) })
        object["k0"] = nil
        object["k29"] = nil
        XCTAssertEqual(object.keys, (1..<29).map { "k\($0)" })
        for i in 1..<29 { XCTAssertEqual(object["k\(i)"], .int(i)) }
        for i in 1..<20 { object["k\(i)"] = nil }  // down to 9 members: searched again
        XCTAssertNil(object["k19"])
        for i in 30..<60 { object["k\(i)"] = .int(i) }  // past 16 again: indexed again
        XCTAssertEqual(object.keys, (20..<29).map { "k\($0)" } + (30..<60).map { "k\($0)" })
        for key in object.keys { XCTAssertEqual(object[key], .int(Int(key.dropFirst())!)) }
        XCTAssertNil(object["k0"])
    }

    func testEqualityIgnoresOrderAtEverySize() {
        for size in [2, 17, 100] {
            let pairs: [(String, JSONValue)] = (0..<size).map { ("k\($0)", .int($0)) }
            let forward = JSONObject(pairs: pairs), backward = JSONObject(pairs: pairs.reversed())
            XCTAssertEqual(forward, backward, "size \(size)")
            var changed = backward
            changed["k1"] = .int(-1)
            XCTAssertNotEqual(forward, changed, "size \(size)")
            var renamed = backward
            renamed["k1"] = nil
            renamed["other"] = .int(1)
            XCTAssertNotEqual(forward, renamed, "size \(size)")
            var longer = forward
            longer["extra"] = .null
            XCTAssertNotEqual(forward, longer, "size \(size)")
        }
    }
}

/// `JSONWriter` copies runs without escapes whole and writes integers without a `String`: the bytes are those of
/// escaping byte by byte.
final class JSONWriterTests: XCTestCase {
    func testStringsWithEscapesAnywhereAreWrittenAsBefore() {
        let cases: [(String, String)] = [
            ("", #""""#), ("plain", #""plain""#), ("\"start", #""\"start""#), ("end\\", #""end\\""#),
            ("mid\ndle", #""mid\ndle""#), ("\t\r\u{01}\u{1f}", #""\t\r\u0001\u001f""#), ("a\"b\\c\"", #""a\"b\\c\"""#),
            ("héllo wörld ✓ 𝄞", "\"héllo wörld ✓ 𝄞\""), (String(repeating: "long text ", count: 30) + "\"", "\"" + String(repeating: "long text ", count: 30) + "\\\"\""),
        ]
        for (string, expected) in cases {
            XCTAssertEqual(JSONWriter.string(.string(string)), expected)
            XCTAssertEqual(try JSONParser.parse(JSONWriter.string(.string(string))), .string(string))
        }
    }

    func testIntegersAtTheirLimits() {
        for value in [0, 1, -1, 9, 10, -10, 1234567890, Int.max, Int.min] {
            XCTAssertEqual(JSONWriter.string(.int(value)), String(value))
        }
    }
}

/// `JSONDiff` walks objects with the same keys in the same order side by side, and any others by key: the ops are
/// the same either way.
final class JSONDiffOrderTests: XCTestCase {
    func testTheSameChangeGivesTheSameOpsWhateverTheKeyOrder() throws {
        let before: JSONValue = ["kind": "stepper", "value": 1, "nested": ["a": 1, "b": [1, 2]], "gone": true]
        let after: JSONValue = ["kind": "stepper", "value": 2, "nested": ["a": 1, "b": [1, 3]], "gone": true]
        let reordered: JSONValue = ["gone": true, "nested": ["b": [1, 3], "a": 1], "value": 2, "kind": "stepper"]
        let expected: [PatchOp] = [.replace(path: JSONPointer(["value"]), value: 2), .replace(path: JSONPointer(["nested", "b", "1"]), value: 3)]
        XCTAssertEqual(JSONDiff.diff(from: before, to: after), expected)
        XCTAssertEqual(Set(JSONDiff.diff(from: before, to: reordered).map { "\($0)" }), Set(expected.map { "\($0)" }))
        XCTAssertEqual(try before.applying(JSONDiff.diff(from: before, to: reordered)), after)
        // Same count, other keys: removed and added, not walked side by side.
        let renamed: JSONValue = ["kind": "stepper", "value": 1, "nested": ["a": 1, "b": [1, 2]], "new": true]
        XCTAssertEqual(JSONDiff.diff(from: before, to: renamed), [.remove(path: JSONPointer(["gone"])), .add(path: JSONPointer(["new"]), value: true)])
    }

    func testAPathIsSpelledAsTheNewObjectSpellsItsKey() {
        // Swift's `==` holds for canonically equal spellings; the op names the key as the new state has it.
        let ops = JSONDiff.diff(from: ["e\u{301}": 1], to: ["\u{e9}": 2])
        XCTAssertEqual(ops.count, 1)
        XCTAssertEqual(ops.first.map { Array($0.path.tokens[0].utf8) }, Array("\u{e9}".utf8))
    }

    func testSharedStorageIsSeenAndARebuiltObjectIsNot() {
        let a: JSONObject = ["x": 1, "y": "two"]
        let copy = a
        var changed = a
        changed["x"] = 2
        XCTAssertTrue(a.sharesStorage(with: copy), "a copy is the same storage")
        XCTAssertFalse(a.sharesStorage(with: ["x": 1, "y": "two"]), "an equal object built again is not")
        XCTAssertFalse(a.sharesStorage(with: changed), "a changed copy has its own storage")
    }
}
