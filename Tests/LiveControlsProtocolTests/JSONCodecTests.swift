import LiveControlsProtocol
import XCTest

final class JSONCodecTests: XCTestCase {
    func parse(_ text: String) throws -> JSONValue { try JSONParser.parse(text) }

    func testParserReadsEveryKindOfValueAndKeepsKeyOrder() throws {
        let value = try parse(#" {"b": [1, -2.5e1, true, false, null], "a": "\u00e9\ud83d\ude00\n", "c": {}} "#)
        XCTAssertEqual(value.objectValue?.keys, ["b", "a", "c"])
        XCTAssertEqual(value["b"], [1, -25.0, true, false, nil])
        XCTAssertEqual(value["a"], "é😀\n")
        if case .int = value["b"]!.arrayValue![0] {} else { XCTFail("1 is an integer") }
        if case .double = value["b"]!.arrayValue![1] {} else { XCTFail("-2.5e1 is not an integer") }
    }

    func testParserRejectsWhatRFC8259Rejects() {
        let bad = ["", "{", "[1,]", "{\"a\":1,}", "01", "-", "1.", ".5", "1e", "+1", "nul", "\"\u{1}\"", "\"\\x\"", "\"\\ud800\"",
                   "\"\\udc00x\"", "{\"a\":1}x", "{'a':1}", "[1 2]", "{\"a\" 1}", "{\"a\":1,\"a\":2}", "NaN", "1e999"]
        for text in bad {
            XCTAssertThrowsError(try parse(text), "should refuse \(text.debugDescription)")
        }
    }

    func testParserRejectsInvalidUTF8AndDeepNesting() {
        XCTAssertThrowsError(try JSONParser.parse([0x22, 0xFF, 0x22]))
        XCTAssertThrowsError(try JSONParser.parse(String(repeating: "[", count: 65) + String(repeating: "]", count: 65)))
        XCTAssertNoThrow(try JSONParser.parse(String(repeating: "[", count: 64) + String(repeating: "]", count: 64)))
    }

    func testWriterRoundTripsAndEscapes() throws {
        let value: JSONValue = ["s": "quote\" backslash\\ tab\t nul\u{0} bell\u{7}", "n": [0, -1, 1.5, 1e20], "o": ["z": nil, "a": true]]
        let text = JSONWriter.string(value)
        XCTAssertTrue(text.contains(#"\u0000"#) && text.contains(#"\u0007"#) && text.contains(#"\t"#))
        XCTAssertEqual(try parse(text), value)
        XCTAssertEqual(JSONWriter.string(["b": 1, "a": 2]), #"{"b":1,"a":2}"#, "keys in insertion order")
    }

    /// Same case and, for doubles, the same bits (so `-0.0` stays `-0.0`): stricter than `==`, which takes `1 == 1.0`.
    func assertIdentical(_ a: JSONValue, _ b: JSONValue, _ message: String = "", file: StaticString = #filePath, line: UInt = #line) {
        switch (a, b) {
        case let (.int(x), .int(y)): XCTAssertEqual(x, y, message, file: file, line: line)
        case let (.double(x), .double(y)): XCTAssertEqual(x.bitPattern, y.bitPattern, "\(x) vs \(y) \(message)", file: file, line: line)
        case let (.array(x), .array(y)):
            XCTAssertEqual(x.count, y.count, message, file: file, line: line)
            for (u, v) in zip(x, y) { assertIdentical(u, v, message, file: file, line: line) }
        case let (.object(x), .object(y)):
            XCTAssertEqual(x.keys, y.keys, message, file: file, line: line)
            for key in x.keys { assertIdentical(x[key]!, y[key] ?? .null, "\(key) \(message)", file: file, line: line) }
        default: XCTAssertEqual(a, b, message, file: file, line: line)
        }
    }

    func testWriterKeepsIntegersAndDoublesApart() throws {
        let cases: [(JSONValue, String)] = [
            (.int(1), "1"), (.double(1.0), "1.0"), (.int(0), "0"), (.double(0), "0.0"), (.double(-0.0), "-0.0"),
            (.int(-7), "-7"), (.double(-7), "-7.0"), (.double(0.1), "0.1"), (.double(1.5), "1.5"),
            (.double(1e15), "1000000000000000.0"), (.double(1e16), "1e+16"), (.double(1e300), "1e+300"),
            (.double(0x1p53), "9007199254740992.0"), (.double(-2.5e-7), "-2.5e-07"), (.double(.leastNonzeroMagnitude), "5e-324"),
            (.double(.greatestFiniteMagnitude), "1.7976931348623157e+308"),
            (.int(.max), "9223372036854775807"), (.int(.min), "-9223372036854775808"),
        ]
        for (value, text) in cases {
            XCTAssertEqual(JSONWriter.string(value), text)
            assertIdentical(try parse(text), value, text)
        }
    }

    func testIntegersPastIntAreReadAsDoublesAndTheEdgesAsInts() throws {
        assertIdentical(try parse("9223372036854775808"), .double(9223372036854775808.0))
        assertIdentical(try parse("-9223372036854775809"), .double(-9223372036854775809.0))
        assertIdentical(try parse("123456789012345678901234567890"), .double(123456789012345678901234567890.0))
        assertIdentical(try parse("-0"), .int(0))
        assertIdentical(try parse("9223372036854775807"), .int(.max))
        assertIdentical(try parse("-9223372036854775808"), .int(.min))
        assertIdentical(try parse("[10,-10,0]"), .array([.int(10), .int(-10), .int(0)]))
    }

    func testEveryFiniteDoubleReadsBackAsTheSameDouble() throws {
        var rng = JSONPatchTests.LCG(state: 11)
        var checked = 0
        while checked < 20_000 {
            let d = Double(bitPattern: rng.next())
            guard d.isFinite else { continue }
            checked += 1
            assertIdentical(try parse(JSONWriter.string(.double(d))), .double(d))
        }
        for d in [1.0, 2.0, 100.0, 123_456_789.0, 0x1p52, 0x1p53, 0x1p63, 0x1p64, 1e22, -1e22] {
            assertIdentical(try parse(JSONWriter.string(.double(d))), .double(d), "integral \(d)")
        }
    }

    func testNonFiniteDoublesAreWrittenAsNull() throws {
        for d in [Double.nan, .infinity, -.infinity] {
            XCTAssertEqual(JSONWriter.string(["v": .double(d)]), #"{"v":null}"#)
        }
    }

    func testPatchesAndSnapshotsKeepOneApartFromOnePointZero() throws {
        let value: JSONValue = ["i": 1, "d": 1.0, "list": [1, 1.0, -0.0, 2.5], "deep": ["x": 3.0]]
        let ops: [PatchOp] = [.replace(path: JSONPointer(["controls", "q", "value"]), value: 1.0),
                              .add(path: JSONPointer(["controls", "q", "n"]), value: 1), .add(path: JSONPointer(["v"]), value: value)]
        let patch = ServerMessage.patch(room: "r", epoch: "e", version: 3, ops: ops, cause: ["kind": "intent", "arg": 2.0])
        XCTAssertEqual(patch.encoded(), JSONWriter.encode(patch.json), "the fast path writes the same bytes")
        let text = String(decoding: patch.encoded(), as: UTF8.self)
        XCTAssertTrue(text.contains(#""value":1.0}"#) && text.contains(#""value":1}"#), text)
        let parsed = try JSONParser.parse(patch.encoded())
        let readOps = try XCTUnwrap(parsed["ops"]?.arrayValue).map { try PatchOp(json: $0) }
        XCTAssertEqual(readOps.count, 3)
        for (read, written) in zip(readOps, ops) {
            assertIdentical(read.json, written.json)
        }
        assertIdentical(parsed["cause"]!, ["kind": "intent", "arg": 2.0])

        let snapshot = ServerMessage.snapshot(room: "r", epoch: "e", version: 3, state: value, id: nil, resumed: nil)
        assertIdentical(try JSONParser.parse(snapshot.encoded())["state"]!, value)
        // A client that applies the patch to the snapshot ends with the same types the server has.
        let before: JSONValue = ["controls": ["q": ["value": 1]]]
        assertIdentical(try before.applying(readOps), try before.applying(ops))
    }

    func testPointerEscapesSlashAndTilde() {
        let pointer = JSONPointer(["a/b", "c~d", ""])
        XCTAssertEqual(pointer.description, "/a~1b/c~0d/")
        XCTAssertEqual(JSONPointer(parsing: "/a~1b/c~0d/"), pointer)
        XCTAssertEqual(JSONPointer(parsing: ""), JSONPointer.root)
        XCTAssertNil(JSONPointer(parsing: "a"))
    }
}

final class JSONPatchTests: XCTestCase {
    struct LCG: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 { state = state &* 6364136223846793005 &+ 1442695040888963407; return state }
    }

    func randomValue(_ rng: inout LCG, depth: Int = 0) -> JSONValue {
        switch Int.random(in: 0..<(depth > 2 ? 4 : 6), using: &rng) {
        case 0: return .int(Int.random(in: 0...3, using: &rng))
        case 1: return .string(["a", "b", "~", "/"].randomElement(using: &rng)!)
        case 2: return [nil, true, 1.5].randomElement(using: &rng)!
        case 3: return .bool(Bool.random(using: &rng))
        case 4: return .array((0..<Int.random(in: 0...3, using: &rng)).map { _ in randomValue(&rng, depth: depth + 1) })
        default:
            var o = JSONObject()
            for _ in 0..<Int.random(in: 0...4, using: &rng) { o[["x", "y", "a/b", "c~d"].randomElement(using: &rng)!] = randomValue(&rng, depth: depth + 1) }
            return .object(o)
        }
    }

    func testApplyingTheDiffTurnsAnyDocumentIntoAnother() throws {
        var rng = LCG(state: 7)
        for _ in 0..<500 {
            let a: JSONValue = ["doc": randomValue(&rng)]
            let b: JSONValue = ["doc": randomValue(&rng)]
            XCTAssertEqual(try a.applying(JSONDiff.diff(from: a, to: b)), b)
        }
    }

    func testDiffOfEqualDocumentsIsEmptyAndNumberTypesCount() {
        let a: JSONValue = ["v": 1, "w": [1, 2]]
        XCTAssertEqual(JSONDiff.diff(from: a, to: a), [])
        XCTAssertEqual(JSONDiff.diff(from: ["v": 1], to: ["v": 1.0]), [.replace(path: JSONPointer(["v"]), value: 1.0)])
    }

    func testAChangedArrayCostsWhatChangedNotTheWholeArray() {
        let items: [JSONValue] = (0..<60).map { .string(String(repeating: "x", count: 10) + "\($0)") }
        let p = JSONPointer(["items"])
        XCTAssertEqual(JSONDiff.diff(from: ["items": .array(items)], to: ["items": .array(items + ["new"])]),
                       [.add(path: p.appending("60"), value: "new")], "an append")
        XCTAssertEqual(JSONDiff.diff(from: ["items": .array(items)], to: ["items": .array(Array(items[0..<5] + items[6...]))]),
                       [.remove(path: p.appending("5"))], "a removal")
        XCTAssertEqual(JSONDiff.diff(from: ["items": .array(items)], to: ["items": .array(Array(items[0..<5] + ["in"] + items[5...]))]),
                       [.add(path: p.appending("5"), value: "in")], "an insertion")
        XCTAssertEqual(JSONDiff.diff(from: ["items": .array(items)], to: ["items": .array(Array(items.dropFirst(2)))]),
                       [.remove(path: p.appending("0")), .remove(path: p.appending("0"))], "two from the start")
        var forward = items
        forward.insert(forward.remove(at: 3), at: 40)
        XCTAssertEqual(JSONDiff.diff(from: ["items": .array(items)], to: ["items": .array(forward)]),
                       [.remove(path: p.appending("3")), .add(path: p.appending("40"), value: items[3])], "a move down the list")
        var back = items
        back.insert(back.remove(at: 59), at: 0)
        XCTAssertEqual(JSONDiff.diff(from: ["items": .array(items)], to: ["items": .array(back)]),
                       [.remove(path: p.appending("59")), .add(path: p.appending("0"), value: items[59])], "a move to the top")
        XCTAssertEqual(JSONDiff.diff(from: ["items": .array(items)], to: ["items": .array(Array(items[0..<7] + ["x"] + items[8...]))]),
                       [.replace(path: p.appending("7"), value: "x")], "one element changed in place")
        // A number's type changing inside an element is a change, however the element is compared.
        XCTAssertEqual(JSONDiff.diff(from: ["l": [["v": 1]]], to: ["l": [["v": 1.0]]]),
                       [.replace(path: JSONPointer(["l", "0", "v"]), value: 1.0)], "1 → 1.0 in an object in an array")
        XCTAssertEqual(JSONDiff.diff(from: ["l": [[1], ["x": 2]]], to: ["l": [[1.0], ["x": 2]]]),
                       [.replace(path: JSONPointer(["l", "0", "0"]), value: 1.0)], "in an array in an array")
        XCTAssertEqual(JSONDiff.diff(from: ["l": [["v": 1], 2]], to: ["l": [["v": 1.0]]]),
                       [.replace(path: JSONPointer(["l", "0", "v"]), value: 1.0), .remove(path: JSONPointer(["l", "1"]))],
                       "arrays of different lengths")
        XCTAssertEqual(JSONDiff.diff(from: ["l": [["v": 1], ["w": 2]]], to: ["l": [["w": 2], ["v": 1.0]]]),
                       [.remove(path: JSONPointer(["l", "0"])), .add(path: JSONPointer(["l", "1"]), value: ["v": 1.0])],
                       "one out and another in, the rest shifted: the new element goes whole (1.0, not 1)")
        var replaced = items
        replaced.remove(at: 0)
        replaced.append("new")
        XCTAssertEqual(JSONDiff.diff(from: ["items": .array(items)], to: ["items": .array(replaced)]),
                       [.remove(path: p.appending("0")), .add(path: p.appending(String(items.count - 1)), value: "new")],
                       "the first removed and another appended: not every element replaced")
        XCTAssertEqual(JSONDiff.diff(from: ["h": ["a"]], to: ["h": []]), [.remove(path: JSONPointer(["h", "0"]))])
        XCTAssertEqual(JSONDiff.diff(from: ["h": [1]], to: ["h": [1.0, 2]]),
                       [.replace(path: JSONPointer(["h", "0"]), value: 1.0), .add(path: JSONPointer(["h", "1"]), value: 2)],
                       "1 and 1.0 differ")
    }

    func testArrayDiffsApplyForAnyLengths() throws {
        var rng = LCG(state: 11)
        for _ in 0..<2_000 {
            let a: JSONValue = ["l": .array((0..<Int.random(in: 0...6, using: &rng)).map { _ in .int(Int.random(in: 0...3, using: &rng)) })]
            let b: JSONValue = ["l": .array((0..<Int.random(in: 0...6, using: &rng)).map { _ in .int(Int.random(in: 0...3, using: &rng)) })]
            XCTAssertEqual(try a.applying(JSONDiff.diff(from: a, to: b)), b, "\(a) → \(b)")
            // And one element moved, or two swapped, within the same array.
            guard case let .array(elements) = a["l"], elements.count > 1 else { continue }
            var moved = elements
            let from = Int.random(in: 0..<moved.count, using: &rng), to = Int.random(in: 0..<moved.count, using: &rng)
            moved.insert(moved.remove(at: from), at: to)
            if Bool.random(using: &rng) { moved.swapAt(Int.random(in: 0..<moved.count, using: &rng), Int.random(in: 0..<moved.count, using: &rng)) }
            let c: JSONValue = ["l": .array(moved)]
            XCTAssertEqual(try a.applying(JSONDiff.diff(from: a, to: c)), c, "\(a) → \(c)")
        }
    }

    func testApplyRefusesMissingPaths() {
        XCTAssertThrowsError(try JSONValue.object([:]).applying([.replace(path: JSONPointer(["x"]), value: 1)]))
        XCTAssertThrowsError(try JSONValue.object([:]).applying([.remove(path: JSONPointer(["x"]))]))
        XCTAssertThrowsError(try JSONValue.array([]).applying([.add(path: JSONPointer(["2"]), value: 1)]))
        XCTAssertEqual(try JSONValue.array([1]).applying([.add(path: JSONPointer(["-"]), value: 2)]), [1, 2])
    }

    func testOpsEncodeAsRFC6902() {
        XCTAssertEqual(JSONWriter.string(PatchOp.replace(path: JSONPointer(["controls", "q", "value"]), value: 2).json),
                       #"{"op":"replace","path":"/controls/q/value","value":2}"#)
        XCTAssertEqual(JSONWriter.string(PatchOp.remove(path: JSONPointer(["presence", "s1"])).json), #"{"op":"remove","path":"/presence/s1"}"#)
    }
}
