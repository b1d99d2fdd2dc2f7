import Foundation
import LiveControlsEngine
import LiveControlsProtocol
import LiveControlsSQLite
import XCTest

/// Issue 40: a durable change costs what it changes. With the embedded store a control is written as what changed
/// since its last full state (`Room+StoreDeltas.swift`), and a load replays it exactly.
final class StoreDeltaTests: XCTestCase {
    let config = try! ServerConfig(json: ["templates": ["t": ["maxStateBytes": .int(64 << 20), "controls": [
        "list": ["kind": "list", "label": "People", "display": "{name}", "maxItems": 1_000, "sections": [["id": "s", "items": []]]],
        "quantity": ["kind": "stepper", "label": "Quantity", "min": 0, "max": 99, "value": 0],
    ]]]], file: "t.json", today: CivilDate(year: 2026, month: 11, day: 28))
    let ann = SessionID("ann")

    func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "lc-deltas-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    func write(_ store: SQLiteRoomStore, _ write: StoreWrite) throws {
        let failure = LockedBox<(any Error)?>(nil)
        store.write(write) { failure.value = $0 }
        store.waitUntilIdle()
        if let error = failure.value { throw error }
    }

    @discardableResult
    func apply(_ room: inout Room, _ store: SQLiteRoomStore, _ control: String, _ intent: String, _ args: JSONObject = [:]) throws -> StoreWrite {
        let update = try room.apply(control: ControlID(control), intent: intent, args: args, by: ann, requestID: nil, at: .milliseconds(0))
        guard let patch = update.patch else { return StoreWrite(room: "r", template: "t", epoch: "e", version: room.version, kind: .reset,
                                                                controls: [], joined: [], left: [], keepFromVersion: 0) }  // (no change)
        let write = room.storeWrite(for: patch, keepHistory: 16, deltas: true)
        try self.write(store, write)
        return write
    }

    func testAStepInABigListWritesAFewBytesAndALoadGivesTheRoomBackExactly() throws {
        let store = try SQLiteRoomStore(directory: try temporaryDirectory())
        var room = Room(name: "r", template: config.templates["t"]!, epoch: "e", historyLimit: 16)
        try write(store, room.storeReset(deltas: true))
        _ = room.join(ann, name: "Ann", roles: [])
        let big = String(repeating: "x", count: 50_000)
        for i in 0..<60 { try apply(&room, store, "list", "append", ["value": ["name": .string(big), "age": .int(i), "1.0": .double(1)]]) }

        let step = try apply(&room, store, "list", "next")
        XCTAssertTrue(step.controls.isEmpty, "no control written whole")
        XCTAssertEqual(step.controlDeltas.count, 1)
        XCTAssertLessThan(step.controlDeltas[0].ops.utf8.count, 200, "a step in a 3 MB list: \(step.controlDeltas[0].ops)")
        let append = try apply(&room, store, "list", "append", ["value": ["name": "new", "age": 1]])
        XCTAssertLessThan(append.controlDeltas.first?.ops.utf8.count ?? .max, 300, "an append: the item, not the list")
        // Edits, removals, moves and steps in between; some past the deltas' bound (full writes again).
        var rng = SystemRandomNumberGenerator()
        for i in 0..<400 {
            switch i % 5 {
            case 0: try apply(&room, store, "list", "edit", ["id": .string("i\(Int.random(in: 1...60, using: &rng))"), "value": ["name": .string("e\(i)"), "age": .double(1)]])
            case 1: try apply(&room, store, "quantity", "next")
            case 2: try apply(&room, store, "list", "move", ["id": .string("i\(Int.random(in: 1...60, using: &rng))"), "index": .int(Int.random(in: 0..<50, using: &rng))])
            case 3: try apply(&room, store, "list", "append", ["value": .string("a\(i)")])
            default: try apply(&room, store, "list", "select", ["id": .string("i\(Int.random(in: 1...60, using: &rng))")])
            }
        }
        let loaded = try XCTUnwrap(try store.loadRoom(named: "r", historyLimit: 16))
        let restored = try XCTUnwrap(Room(restoring: loaded, template: config.templates["t"]!, historyLimit: 16))
        XCTAssertEqual(restored.version, room.version)
        assertSameText(JSONWriter.string(restored.render()["controls"]!), JSONWriter.string(room.render()["controls"]!), "the controls as they were, byte for byte")
        var restoredCopy = restored
        let restoredStates = restoredCopy.storeReset(deltas: false).controls.map { $0.state }
        for (a, b) in zip(restoredStates, room.storeReset(deltas: false).controls.map { $0.state }) { assertSameText(a, b, "each control's stored state exactly") }
    }

    func testAfterALoadEachControlIsWrittenWholeOnceThenAsWhatChanged() throws {
        let directory = try temporaryDirectory()
        var store: SQLiteRoomStore? = try SQLiteRoomStore(directory: directory)
        var room = Room(name: "r", template: config.templates["t"]!, epoch: "e", historyLimit: 16)
        try write(store!, room.storeReset(deltas: true))
        _ = room.join(ann, name: "Ann", roles: [])
        for _ in 0..<3 { try apply(&room, store!, "quantity", "next") }
        store = nil  // closed: the data directory's lock goes with it
        let reopened = try SQLiteRoomStore(directory: directory)
        var loaded = try XCTUnwrap(Room(restoring: try XCTUnwrap(try reopened.loadRoom(named: "r", historyLimit: 16)),
                                        template: config.templates["t"]!, historyLimit: 16))
        XCTAssertEqual(loaded.render()["controls"]?["quantity"]?["value"], 3)
        _ = loaded.join(ann, name: "Ann", roles: [])
        let first = try apply(&loaded, reopened, "quantity", "next")
        XCTAssertEqual(first.controls.map(\.id), [ControlID("quantity")], "written whole: the room does not know the store's deltas")
        let second = try apply(&loaded, reopened, "quantity", "next")
        XCTAssertEqual(second.controls.count, 0)
        XCTAssertEqual(second.controlDeltas.map(\.seq), [1])
    }
}

/// Equal texts, or a failure that shows where they part (not the whole: a state of megabytes).
func assertSameText(_ a: String, _ b: String, _ message: String, file: StaticString = #filePath, line: UInt = #line) {
    guard a != b else { return }
    let x = Array(a.utf8), y = Array(b.utf8)
    let at = (0..<min(x.count, y.count)).first { x[$0] != y[$0] } ?? min(x.count, y.count)
    func around(_ bytes: [UInt8]) -> String { String(decoding: bytes[max(0, at - 80)..<min(bytes.count, at + 80)], as: UTF8.self) }
    XCTFail("\(message): they differ at byte \(at) of \(x.count)/\(y.count): …\(around(x))… against …\(around(y))…", file: file, line: line)
}

final class LockedBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T
    init(_ value: T) { stored = value }
    var value: T {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); stored = newValue; lock.unlock() }
    }
}
