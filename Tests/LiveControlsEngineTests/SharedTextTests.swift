import LiveControlsProtocol
import LiveControlsTestSupport
import XCTest

@testable import LiveControlsEngine

/// The `text` kind: operational transformation on a central server. Property tests: transform's convergence on random
/// edits, and whole sessions of several clients typing at once (ot.js-style clients against the room) converging.
final class SharedTextTests: XCTestCase {
    func code(_ body: () throws -> Void) -> ErrorCode? {
        do { try body() } catch { return (error as? IntentError)?.code }
        return nil
    }

    static let alphabet: [Unicode.Scalar] = Array("ab \nçé😀中".unicodeScalars)

    static func randomText(_ rng: inout SplitMix64, _ n: Int) -> [Unicode.Scalar] { (0..<n).map { _ in alphabet.randomElement(using: &rng)! } }

    static func randomSplice(_ rng: inout SplitMix64, length: Int) -> (at: Int, delete: Int, insert: [Unicode.Scalar]) {
        let at = Int.random(in: 0...length, using: &rng)
        let delete = Bool.random(using: &rng) ? 0 : Int.random(in: 0...min(4, length - at), using: &rng)
        let insert = Int.random(in: 0..<4, using: &rng) == 0 ? [] : randomText(&rng, Int.random(in: 1...4, using: &rng))
        return (at, delete, insert)
    }

    static func randomOperation(_ rng: inout SplitMix64, length: Int) -> TextOperation {
        var op = TextOperation()
        var left = length
        while left > 0 || Int.random(in: 0..<3, using: &rng) == 0 {
            switch Int.random(in: 0..<3, using: &rng) {
            case 0 where left > 0: let n = Int.random(in: 1...left, using: &rng); op.retain(n); left -= n
            case 1 where left > 0: let n = Int.random(in: 1...left, using: &rng); op.delete(n); left -= n
            default: op.insert(randomText(&rng, Int.random(in: 1...3, using: &rng)))
            }
            if left == 0, Bool.random(using: &rng) { break }
        }
        return op
    }

    func testTransformConvergesOnTenThousandRandomPairs() {
        var rng = SplitMix64(state: 0x07_7E47)
        for _ in 0..<10_000 {
            let text = Self.randomText(&rng, Int.random(in: 0..<20, using: &rng))
            let a = Self.randomOperation(&rng, length: text.count), b = Self.randomOperation(&rng, length: text.count)
            let (a2, b2) = TextOperation.transform(a, b)
            XCTAssertEqual(b2.apply(to: a.apply(to: text)), a2.apply(to: b.apply(to: text)))
            // Splices say the same edit.
            var viaSplices = text
            for s in a.splices { viaSplices.replaceSubrange(s.at..<(s.at + s.delete), with: s.insert) }
            XCTAssertEqual(viaSplices, a.apply(to: text))
            XCTAssertEqual(a.composedForStorage(with: b2).apply(to: text), a2.apply(to: b.apply(to: text)))
        }
    }

    func room(_ text: SharedText) -> Room {
        var room = Room(name: "r", template: RoomTemplate(name: "t", controls: [(ControlID("note"), text)]), epoch: "e", historyLimit: 64)
        for s in ["ann", "bob", "cy"] { _ = room.join(SessionID(s), name: String?.none, roles: ["editor"]) }
        return room
    }

    func note(_ room: Room) -> SharedText { room.control(ControlID("note")) as! SharedText }

    @discardableResult
    func edit(_ room: inout Room, _ intent: String, _ args: JSONObject, by session: String = "ann") throws -> Patch? {
        try room.apply(control: ControlID("note"), intent: intent, args: args, by: SessionID(session), requestID: nil, at: Instant(nanoseconds: 0)).patch
    }

    func testConcurrentSplicesBothKeepTheirText() throws {
        var r = room(SharedText(label: "Notes", text: "Hello world"))
        try edit(&r, "splice", ["at": 5, "insert": ",", "base": 0], by: "ann")
        // Bob typed at the end of "Hello world" as he saw it at revision 0.
        let bobs = try XCTUnwrap(try edit(&r, "splice", ["at": 11, "insert": "!", "base": 0], by: "bob"))
        XCTAssertEqual(note(r).string, "Hello, world!")
        XCTAssertEqual(bobs.cause["splices"], [["at": 12, "delete": 0, "insert": "!"]], "the edit as applied, for clients' transforms")
        XCTAssertEqual(r.render()["controls"]?["note"]?["rev"], 2)
        // Cy deleted "world" at revision 0 while both typed: their text stays.
        try edit(&r, "splice", ["at": 6, "delete": 5, "base": 0], by: "cy")
        XCTAssertEqual(note(r).string, "Hello, !")
        try edit(&r, "set", ["text": "Hello, there!\nSecond line"])
        XCTAssertEqual(r.render()["controls"]?["note"]?["lines"], ["Hello, there!", "Second line"])
        let patch = try XCTUnwrap(try edit(&r, "splice", ["at": 14, "insert": "My ", "base": 4]))
        XCTAssertEqual(patch.ops.map(\.path.description), ["/controls/note/rev", "/controls/note/lines/1"], "only the line that changed")
    }

    func testBadSplicesAreRefusedAndChangeNothing() throws {
        var r = room(SharedText(label: "Notes", text: "abc", maxLength: 5))
        XCTAssertEqual(code { try self.edit(&r, "splice", ["at": 4, "base": 0]) }, .outOfRange)
        XCTAssertEqual(code { try self.edit(&r, "splice", ["at": 1, "delete": 3, "base": 0]) }, .outOfRange)
        XCTAssertEqual(code { try self.edit(&r, "splice", ["at": 0, "base": 1]) }, .outOfRange, "a base ahead of rev")
        XCTAssertEqual(code { try self.edit(&r, "splice", ["at": 0, "insert": "xyz", "base": 0]) }, .tooLarge)
        XCTAssertEqual(code { try self.edit(&r, "splice", ["at": 0, "insert": 3, "base": 0]) }, .invalidArgs)
        XCTAssertEqual(code { try self.edit(&r, "splice", ["at": 0, "insert": "x"]) }, .invalidArgs, "base is required")
        XCTAssertEqual(code { try self.edit(&r, "set", ["text": "toolong"]) }, .tooLarge)
        XCTAssertNil(try edit(&r, "splice", ["at": 1, "base": 0]), "a splice of nothing is no change")
        XCTAssertEqual(code { try self.edit(&r, "splice", ["at": .int(Int.max), "delete": 1, "base": 0]) }, .outOfRange, "no overflow")
        XCTAssertEqual(code { try self.edit(&r, "splice", ["at": 1, "delete": .int(Int.max), "base": 0]) }, .outOfRange)
        XCTAssertEqual(note(r).rev, 0)
        for i in 0..<(SharedText.logLimit + 1) { try edit(&r, "set", ["text": i % 2 == 0 ? "x" : "y"]) }
        XCTAssertEqual(code { try self.edit(&r, "splice", ["at": 0, "insert": "z", "base": 0]) }, .conflict, "older than the edits kept")
        XCTAssertNoThrow(try edit(&r, "splice", ["at": 0, "insert": "z", "base": .int(note(r).rev - SharedText.logLimit)]))
        let stored = try SharedText(storedState: note(r).storedState)
        XCTAssertEqual(stored.render(), note(r).render())
        XCTAssertEqual(stored.log.map { $0.apply(to: Array(repeating: "a", count: $0.baseLength)) }, note(r).log.map { $0.apply(to: Array(repeating: "a", count: $0.baseLength)) })
    }

    func testTheLogKeepsNoMoreTextThanFourTimesMaxLengthAndAStoredLogMustChain() throws {
        var r = room(SharedText(label: "Notes", maxLength: 2_000))
        for i in 0..<40 { try edit(&r, "set", ["text": .string(String(repeating: i % 2 == 0 ? "a" : "b", count: 1_000))]) }
        XCTAssertLessThanOrEqual(note(r).log.reduce(0) { $0 + $1.insertedCount }, 8_000)
        XCTAssertEqual(note(r).log.count, 8)
        XCTAssertEqual(code { try self.edit(&r, "splice", ["at": 0, "insert": "z", "base": .int(note(r).rev - 9)]) }, .conflict)
        var stored = note(r).storedState
        if case var .object(o) = stored, case var .array(log)? = o["log"] {
            log.swapAt(0, 1)
            log[0] = ["length": 5, "splices": []]
            o["log"] = .array(log)
            stored = .object(o)
        }
        XCTAssertThrowsError(try SharedText(storedState: stored), "edits that do not follow each other")
    }

    func testAResetToTheTemplateIsOneMoreEditNotANewCount() throws {
        let template = RoomTemplate(name: "t", controls: [(ControlID("note"), SharedText(label: "N", text: "start"))])
        var r = Room(name: "r", template: template, epoch: "e", historyLimit: 64)
        _ = r.join(SessionID("ann"), name: String?.none, roles: ["editor"])
        try edit(&r, "set", ["text": "start and more"])
        let before = note(r).rev
        _ = r.reset(to: template)
        XCTAssertEqual(note(r).string, "start")
        XCTAssertEqual(note(r).rev, before + 1, "revisions go on")
        // A splice made before the reset, at the end of "start and more": moved to where that text went.
        try edit(&r, "splice", ["at": 14, "insert": "!", "base": .int(before)])
        XCTAssertEqual(note(r).string, "start!")
    }

    func testAChangeToACanonicallyEqualSpellingIsPatched() throws {
        var r = room(SharedText(label: "Notes", text: "caf\u{E9}"))
        let patch = try XCTUnwrap(try edit(&r, "set", ["text": "cafe\u{301}"]), "é as one scalar, then as e and an accent")
        XCTAssertEqual(patch.ops.map(\.path.description), ["/controls/note/rev", "/controls/note/lines/0"])
    }

    /// One client as ot.js has it: its state is the server's text at `rev` plus its edits not yet applied there
    /// (`pending`: the first sent and awaiting its ack, the others waiting), each transformed against what the server
    /// applied meanwhile (taken from `cause.splices`).
    struct Client {
        let session: SessionID
        var serverText: [Unicode.Scalar]
        var rev: Int
        var pending: [TextOperation] = []
        var sent = false

        var local: [Unicode.Scalar] { pending.reduce(serverText) { $1.apply(to: $0) } }

        mutating func type(_ rng: inout SplitMix64) {
            let text = local
            let s = SharedTextTests.randomSplice(&rng, length: text.count)
            let op = TextOperation(length: text.count, at: s.at, delete: s.delete, insert: s.insert)
            if !op.isNoop { pending.append(op) }
        }

        /// The splice to send now, if any (one at a time, as a single splice).
        mutating func send() -> JSONObject? {
            guard !sent, let first = pending.first else { return nil }
            sent = true
            let s = first.splices[0]
            return ["at": .int(s.at), "delete": .int(s.delete), "insert": .string(String(String.UnicodeScalarView(s.insert))), "base": .int(rev)]
        }

        /// What the server answered to this client's splice when it changed nothing (an `ack` without a patch).
        mutating func absorbed() {
            pending.removeFirst()
            sent = false
            pending = split(pending)
        }

        mutating func receive(_ patch: Patch) {
            guard patch.cause["control"] == "note", let splices = patch.cause["splices"]?.arrayValue else { return }
            if patch.cause["session"]?.stringValue == session.rawValue {
                // Our own, acknowledged: the server's text now has it.
                serverText = pending.removeFirst().apply(to: serverText)
                rev += 1
                sent = false
                pending = split(pending)
                return
            }
            for splice in splices {
                var remote = TextOperation(length: serverText.count, at: splice["at"]!.intValue!, delete: splice["delete"]!.intValue!,
                                           insert: Array(splice["insert"]!.stringValue!.unicodeScalars))
                serverText = remote.apply(to: serverText)
                var transformed: [TextOperation] = []
                for op in pending {
                    let (mine, theirs) = TextOperation.transform(op, remote)
                    remote = theirs
                    transformed.append(mine)
                }
                pending = transformed
            }
            pending = split(pending)
            rev += 1
        }

        /// Edits not sent yet as single splices that change something (a transformed one may have become two, or
        /// nothing); the sent one stays as it is: the server transforms it the same way.
        func split(_ ops: [TextOperation]) -> [TextOperation] {
            var result: [TextOperation] = []
            for (index, op) in ops.enumerated() {
                if index == 0 && sent { result.append(op); continue }
                var length = op.baseLength
                for s in op.splices {
                    result.append(TextOperation(length: length, at: s.at, delete: s.delete, insert: s.insert))
                    length += s.insert.count - s.delete
                }
            }
            return result
        }
    }

    enum Delivery { case patch(Patch), absorbed }

    func testManyClientsTypingAtOnceConverge() throws {
        var rng = SplitMix64(state: 0x0_7E47_5EED)
        for round in 0..<200 {
            let start = Self.randomText(&rng, Int.random(in: 0..<12, using: &rng))
            var r = room(SharedText(label: "N", text: String(String.UnicodeScalarView(start)), maxLength: 100_000))
            var clients = ["ann", "bob", "cy"].map { Client(session: SessionID($0), serverText: start, rev: 0) }
            var toServer: [[JSONObject]] = [[], [], []], toClient: [[Delivery]] = [[], [], []]
            func serve(_ who: Int) throws {
                let splice = toServer[who].removeFirst()
                if let patch = try edit(&r, "splice", splice, by: clients[who].session.rawValue) {
                    for i in 0..<3 { toClient[i].append(.patch(patch)) }
                } else {
                    toClient[who].append(.absorbed)
                }
            }
            func deliver(_ who: Int) {
                switch toClient[who].removeFirst() {
                case let .patch(patch): clients[who].receive(patch)
                case .absorbed: clients[who].absorbed()
                }
            }
            for _ in 0..<60 {
                let who = Int.random(in: 0..<3, using: &rng)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: clients[who].type(&rng)
                case 1: if let splice = clients[who].send() { toServer[who].append(splice) }
                case 2: if !toServer[who].isEmpty { try serve(who) }
                default: if !toClient[who].isEmpty { deliver(who) }
                }
            }
            // Quiesce: everything sent, applied and delivered.
            var moved = true
            while moved {
                moved = false
                for who in 0..<3 {
                    if let splice = clients[who].send() { toServer[who].append(splice); moved = true }
                    while !toServer[who].isEmpty { try serve(who); moved = true }
                    while !toClient[who].isEmpty { deliver(who); moved = true }
                }
            }
            for c in clients {
                XCTAssertTrue(c.pending.isEmpty, "round \(round)")
                XCTAssertEqual(c.local, note(r).text, "round \(round): \(c.session) converged")
                XCTAssertEqual(c.rev, note(r).rev)
            }
        }
    }
}
