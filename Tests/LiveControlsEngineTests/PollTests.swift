import LiveControlsProtocol
import LiveControlsTestSupport
import XCTest

@testable import LiveControlsEngine

/// The `poll` kind and per-member views: ballots private until the reveal, each member's patches fit its own view.
final class PollTests: XCTestCase {
    func code(_ body: () throws -> Void) -> ErrorCode? {
        do { try body() } catch { return (error as? IntentError)?.code }
        return nil
    }

    let options = [Poll.Option(id: "a", label: "Apples"), Poll.Option(id: "b", label: "Pears"), Poll.Option(id: "c", label: "Plums")]

    /// A room with one poll (`q`) and a stepper (`s`), and members: `host` (role host), `ann`, `bob`, `cy` (editors).
    func room(_ poll: Poll) -> Room {
        var room = Room(name: "r", template: RoomTemplate(name: "t", controls: [(ControlID("q"), poll), (ControlID("s"), Stepper(label: "S", min: 0, max: 9, value: 0))]),
                        epoch: "e", historyLimit: 64)
        _ = room.join(SessionID("host"), name: String?.none, roles: ["editor", "host"])
        for s in ["ann", "bob", "cy"] { _ = room.join(SessionID(s), name: String?.none, roles: ["editor"]) }
        return room
    }

    func seen(_ room: Room, by session: String) -> JSONValue { room.render(for: room.viewer(of: SessionID(session)))["controls"]!["q"]! }

    @discardableResult
    func vote(_ room: inout Room, _ intent: String, _ args: JSONObject = [:], by session: String) throws -> Patch? {
        try room.apply(control: ControlID("q"), intent: intent, args: args, by: SessionID(session), requestID: nil, at: Instant(nanoseconds: 0)).patch
    }

    func testBallotsArePrivateUntilTheRevealAndTheHostSeesThem() throws {
        var r = room(Poll(label: "Fruit", options: options, seeVotes: ["host"]))
        try vote(&r, "vote", ["option": "a"], by: "ann")
        try vote(&r, "vote", ["option": "b"], by: "bob")
        XCTAssertEqual(seen(r, by: "ann")["ballots"], ["ann": ["a"]])
        XCTAssertEqual(seen(r, by: "ann")["voters"], 2)
        XCTAssertNil(seen(r, by: "ann")["tally"], "the tally is hidden before the reveal")
        XCTAssertEqual(seen(r, by: "cy")["ballots"], [:])
        XCTAssertEqual(seen(r, by: "host")["ballots"], ["ann": ["a"], "bob": ["b"]])
        XCTAssertEqual(seen(r, by: "host")["tally"], ["a": 1, "b": 1, "c": 0])
        XCTAssertEqual(r.render()["controls"]?["q"]?["tally"], ["a": 1, "b": 1, "c": 0], "the whole document (the server API's) has everything")

        try vote(&r, "close", by: "host")
        XCTAssertEqual(code { try self.vote(&r, "vote", ["option": "c"], by: "cy") }, .closed)
        try vote(&r, "reveal", by: "host")
        XCTAssertEqual(seen(r, by: "cy")["tally"], ["a": 1, "b": 1, "c": 0])
        XCTAssertEqual(seen(r, by: "cy")["ballots"], [:], "without showVoters ballots stay private")
        XCTAssertEqual(seen(r, by: "ann")["ballots"], ["ann": ["a"]])
        XCTAssertEqual(code { try self.vote(&r, "vote", ["option": "c"], by: "cy") }, .finished)
        XCTAssertEqual(code { try self.vote(&r, "open", by: "host") }, .finished)

        try vote(&r, "reset", by: "host")
        XCTAssertEqual(seen(r, by: "host")["ballots"], [:])
        XCTAssertNil(seen(r, by: "ann")["tally"])
        XCTAssertEqual(seen(r, by: "ann")["phase"], "open")
    }

    func testAVoteIsThreeViewsWhateverTheRoomsSize() throws {
        var r = room(Poll(label: "Fruit", options: options, seeVotes: ["host"]))
        for i in 0..<200 { _ = r.join(SessionID("m\(i)"), name: nil, roles: ["editor"]) }
        let patch = try XCTUnwrap(try vote(&r, "vote", ["option": "a"], by: "ann"))
        XCTAssertFalse(patch.isShared)
        let keys = Set(r.sessions.map { patch.viewKey(for: r.viewer(of: $0)) })
        XCTAssertEqual(keys.count, 3, "the voter, the host, everyone else")
        XCTAssertEqual(patch.ops(for: r.viewer(of: SessionID("m7"))).map(\.path.description), ["/controls/q/voters"])
        XCTAssertEqual(patch.cause["intent"], "vote")
        XCTAssertNil(patch.cause["args"], "the cause does not tell the option")
        // A change to another control is one view.
        let step = try r.apply(control: ControlID("s"), intent: "next", args: [:], by: SessionID("bob"), requestID: nil, at: Instant(nanoseconds: 0)).patch
        XCTAssertEqual(step?.isShared, true)
    }

    func testModesLimitsAndAddedOptions() throws {
        var r = room(Poll(label: "Pick", options: options, mode: .multi, maxVotes: 2, allowAdd: true, maxOptions: 4))
        try vote(&r, "vote", ["option": "c"], by: "ann")
        try vote(&r, "vote", ["option": "a"], by: "ann")
        XCTAssertEqual(seen(r, by: "ann")["ballots"], ["ann": ["a", "c"]], "choices in option order")
        XCTAssertEqual(code { try self.vote(&r, "vote", ["option": "b"], by: "ann") }, .outOfRange)
        XCTAssertNil(try vote(&r, "vote", ["option": "a"], by: "ann"), "a vote it has changes nothing")
        XCTAssertEqual(code { try self.vote(&r, "vote", ["option": "zz"], by: "ann") }, .notFound)
        XCTAssertEqual(code { try self.vote(&r, "vote", [:], by: "ann") }, .invalidArgs)
        try vote(&r, "unvote", ["option": "a"], by: "ann")
        try vote(&r, "unvote", ["option": "c"], by: "ann")
        XCTAssertEqual(seen(r, by: "ann")["ballots"], [:], "a ballot with no choice left is gone")
        XCTAssertEqual(seen(r, by: "ann")["voters"], 0)

        try vote(&r, "add", ["label": "  Figs "], by: "bob")
        XCTAssertEqual(seen(r, by: "cy")["options"]?.arrayValue?.last, ["id": "added-1", "label": "Figs", "addedBy": "bob"])
        XCTAssertEqual(code { try self.vote(&r, "add", ["label": "figs"], by: "cy") }, .conflict)
        XCTAssertEqual(code { try self.vote(&r, "add", ["label": "Kiwis"], by: "cy") }, .tooLarge)
        XCTAssertEqual(code { try self.vote(&r, "add", ["label": "   "], by: "cy") }, .invalidArgs)
        try vote(&r, "vote", ["option": "added-1"], by: "cy")
        try vote(&r, "reset", by: "host")
        XCTAssertEqual(seen(r, by: "cy")["options"]?.arrayValue?.count, 3, "reset drops added options")

        var single = room(Poll(label: "One", options: options))
        try vote(&single, "vote", ["option": "a"], by: "ann")
        try vote(&single, "vote", ["option": "b"], by: "ann")
        XCTAssertEqual(seen(single, by: "ann")["ballots"], ["ann": ["b"]], "a single-choice vote replaces the choice")
        XCTAssertEqual(code { try self.vote(&single, "add", ["label": "Kiwis"], by: "ann") }, .forbidden)
    }

    func testShowVotersMakesBallotsPublicAtTheReveal() throws {
        var r = room(Poll(label: "Fruit", options: options, seeVotes: ["host"], showVoters: true))
        try vote(&r, "vote", ["option": "a"], by: "ann")
        XCTAssertEqual(seen(r, by: "bob")["ballots"], [:])
        let reveal = try XCTUnwrap(try vote(&r, "reveal", by: "host"))
        XCTAssertEqual(seen(r, by: "bob")["ballots"], ["ann": ["a"]])
        // Bob gets the ballot and the tally added; the host (who saw them) does not.
        XCTAssertEqual(Set(reveal.ops(for: r.viewer(of: SessionID("bob"))).map(\.path.description)), ["/controls/q/phase", "/controls/q/ballots/ann", "/controls/q/tally"])
        XCTAssertEqual(reveal.ops(for: r.viewer(of: SessionID("host"))).map(\.path.description), ["/controls/q/phase"])
        try vote(&r, "reset", by: "host")
        XCTAssertNil(seen(r, by: "bob")["tally"])
    }

    func testStoredStateRoundTripsAndConfigErrorsNameTheirPointer() throws {
        var r = room(Poll(label: "Pick", options: options, mode: .multi, maxVotes: 2, seeVotes: ["host"], allowAdd: true))
        try vote(&r, "add", ["label": "Figs"], by: "bob")
        try vote(&r, "vote", ["option": "added-1"], by: "ann")
        try vote(&r, "vote", ["option": "a"], by: "ann")
        try vote(&r, "close", by: "host")
        let poll = r.control(ControlID("q")) as! Poll
        let back = try Poll(storedState: poll.storedState)
        XCTAssertEqual(back.render(), poll.render())
        XCTAssertEqual(back.privateParts, poll.privateParts)

        func configError(_ json: String) -> String? {
            do {
                _ = try Poll(config: ConfigNode(try JSONParser.parse(json), file: "c.json", pointer: JSONPointer(["q"])), id: ControlID("q"), today: CivilDate(year: 2026, month: 1, day: 1))
                return nil
            } catch { return (error as? ConfigError)?.path }
        }
        XCTAssertNil(configError(#"{"kind": "poll", "options": ["Yes", "No"]}"#))
        XCTAssertEqual(configError(#"{"kind": "poll"}"#), "/q/options")
        XCTAssertEqual(configError(#"{"kind": "poll", "options": ["Yes", "Yes"]}"#), "/q/options/1")
        XCTAssertEqual(configError(#"{"kind": "poll", "options": ["a"], "maxVotes": 2}"#), "/q/maxVotes")
        XCTAssertEqual(configError(#"{"kind": "poll", "options": ["a"], "mode": "ranked"}"#), "/q/mode")
        XCTAssertEqual(configError(#"{"kind": "poll", "options": ["a"], "seeVotes": ["bad role"]}"#), "/q/seeVotes/0")
        XCTAssertEqual(configError(#"{"kind": "poll", "options": [{"id": "x", "label": ""}]}"#), "/q/options/0")
        XCTAssertNil(configError(#"{"kind": "poll", "allowAdd": true}"#))
    }

    func testWebhooksCarryTheTally() throws {
        var r = room(Poll(label: "Fruit", options: options, seeVotes: ["host"]))
        try vote(&r, "vote", ["option": "b"], by: "ann")
        let closed = try XCTUnwrap(try vote(&r, "close", by: "host"))
        let event = try XCTUnwrap(r.webhookDrafts(for: closed).first { $0.type == "poll.closed" })
        XCTAssertEqual(event.data["tally"], ["a": 0, "b": 1, "c": 0])
        XCTAssertEqual(event.data["ballots"], ["ann": ["b"]])
        let revealed = try XCTUnwrap(try vote(&r, "reveal", by: "host"))
        XCTAssertEqual(r.webhookDrafts(for: revealed).map(\.type), ["poll.revealed"])
    }

    /// Thousands of random intents by members with and without the seeing role: each member's state, built from its
    /// first view and the ops it received, is always the room as it sees it; members with equal view keys receive
    /// equal ops; stored patches read back with who receives each op.
    func testEveryMembersPatchesFitItsOwnView() throws {
        var rng = SplitMix64(state: 0x5EED_0F_7011)
        for round in 0..<40 {
            let showVoters = round % 2 == 0
            var r = room(Poll(label: "P", options: options, mode: round % 3 == 0 ? .single : .multi, maxVotes: round % 3 == 0 ? 1 : 2,
                              seeVotes: ["host"], showVoters: showVoters, allowAdd: true, maxOptions: 6))
            var documents: [SessionID: JSONValue] = [:]
            for s in r.sessions { documents[s] = r.render(for: r.viewer(of: s)) }
            for step in 0..<150 {
                // Now and then someone joins (with or without the role) and starts from its snapshot.
                if Int.random(in: 0..<20, using: &rng) == 0 {
                    let s = SessionID("j\(round)-\(step)")
                    let join = r.join(s, name: nil, roles: Bool.random(using: &rng) ? ["host"] : ["editor"])
                    for (other, doc) in documents { documents[other] = try doc.applying(join.patch!.ops(for: r.viewer(of: other))) }
                    documents[s] = r.render(for: r.viewer(of: s))
                    continue
                }
                let sessions = r.sessions
                let by = sessions[Int.random(in: 0..<sessions.count, using: &rng)]
                let option = ["a", "b", "c", "added-1", "added-2"][Int.random(in: 0..<5, using: &rng)]
                let (intent, args): (String, JSONObject) = [
                    ("vote", ["option": .string(option)]), ("vote", ["option": .string(option)]), ("vote", ["option": .string(option)]),
                    ("unvote", ["option": .string(option)]), ("close", [:]), ("open", [:]), ("reveal", [:]), ("reset", [:]),
                    ("add", ["label": .string("L\(Int.random(in: 0..<4, using: &rng))")]),
                ][Int.random(in: 0..<9, using: &rng)]
                guard let patch = try? r.apply(control: ControlID("q"), intent: intent, args: args, by: by, requestID: nil, at: Instant(nanoseconds: 0)).patch
                else { continue }
                var byKey: [[Bool]: [PatchOp]] = [:]
                let (owners, roles) = patch.audienceMembers
                let anyoneKey = patch.viewKey(for: Viewer(session: nil, roles: []))
                for s in r.sessions {
                    if r.seesAsAnyone(s, owners: owners, roles: roles) {
                        XCTAssertEqual(patch.viewKey(for: r.viewer(of: s)), anyoneKey, "the fan-out's shortcut: \(s) sees what anyone sees")
                    }
                    let viewer = r.viewer(of: s), ops = patch.ops(for: viewer)
                    documents[s] = try documents[s]!.applying(ops)
                    XCTAssertEqual(documents[s], r.render(for: viewer), "round \(round) step \(step): \(s) after \(intent) by \(by)")
                    let key = patch.viewKey(for: viewer)
                    if let same = byKey[key] { XCTAssertEqual(same, ops) } else { byKey[key] = ops }
                }
                let stored = try XCTUnwrap(Patch(version: patch.version, storedOps: patch.storedOps, cause: patch.cause))
                XCTAssertEqual(stored, patch)
            }
        }
    }

    func testASinceFitsANewSessionUnlessItsFormerSessionOwnedAPart() throws {
        var r = room(Poll(label: "Fruit", options: options, seeVotes: ["host"]))
        let start = r.version
        XCTAssertTrue(r.resumes(from: SessionID("ann"), missed: []), "nobody owns anything yet")
        try vote(&r, "vote", ["option": "a"], by: "bob")
        let missed = try XCTUnwrap(r.history.changes(after: start, current: r.version))
        XCTAssertTrue(r.resumes(from: SessionID("ann"), missed: missed), "ann's state had no ballot of hers")
        XCTAssertFalse(r.resumes(from: SessionID("bob"), missed: missed), "bob's had his ballot")
        XCTAssertFalse(r.resumes(from: nil, missed: missed), "unnamed: any owned part counts")
        try vote(&r, "reset", by: "host")
        let afterReset = try XCTUnwrap(r.history.changes(after: r.version - 1, current: r.version))
        XCTAssertFalse(r.resumes(from: SessionID("bob"), missed: afterReset), "the reset removed bob's ballot: only bob's view had it")
        XCTAssertTrue(r.resumes(from: SessionID("bob"), missed: []), "from after the reset")
        XCTAssertEqual(r.viewKey(for: r.viewer(of: SessionID("ann"))), [false], "the tally, which ann does not see")
    }
}
