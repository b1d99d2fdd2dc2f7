import LiveControlsEngine
import LiveControlsProtocol
import XCTest

/// A member's own presence data (`Room.setPresence`), on the built-in demo template and a manual clock.
final class PresenceDataTests: XCTestCase {
    let config = ServerConfig.builtin(today: CivilDate(year: 2026, month: 11, day: 24))
    let ann = SessionID("ann"), bob = SessionID("bob")

    func makeRoom(presence: Bool = true) -> Room {
        var template = config.templates["demo"]!
        template.presence = presence
        var room = Room(name: "r", template: template, epoch: "e", historyLimit: 16)
        _ = room.join(ann, name: "Ann", roles: ["editor"])
        _ = room.join(bob, name: "Bob", roles: ["editor", "host"])
        return room
    }

    func testDataIsMergedPatchedUnderTheMemberAndNullRemovesAKey() throws {
        var room = makeRoom()
        XCTAssertEqual(room.render()["presence"]?["bob"], ["name": "Bob", "user": .null, "roles": ["editor", "host"], "holding": [], "editing": [], "data": [:]])
        var state = room.render()
        let first = try XCTUnwrap(try room.setPresence(ann, data: ["focus": "signup.email", "color": "#e11d48"], requestID: .int(7),
                                                       at: .milliseconds(0)).patch)
        XCTAssertEqual(first.cause, ["kind": "presence", "session": "ann", "id": 7])
        XCTAssertEqual(first.ops, [.add(path: JSONPointer(["presence", "ann", "data", "focus"]), value: "signup.email"),
                                   .add(path: JSONPointer(["presence", "ann", "data", "color"]), value: "#e11d48")])
        state = try state.applying(first.ops)
        let second = try XCTUnwrap(try room.setPresence(ann, data: ["focus": nil, "color": "#e11d48", "cursor": ["x": 1, "y": 2]],
                                                        requestID: nil, at: .milliseconds(1)).patch)
        XCTAssertEqual(second.ops, [.remove(path: JSONPointer(["presence", "ann", "data", "focus"])),
                                    .add(path: JSONPointer(["presence", "ann", "data", "cursor"]), value: ["x": 1, "y": 2])],
                       "only what changed; an unchanged key is not sent again")
        state = try state.applying(second.ops)
        XCTAssertEqual(state, room.render())
        XCTAssertEqual(room.render()["presence"]?["ann"]?["data"], ["color": "#e11d48", "cursor": ["x": 1, "y": 2]])
        XCTAssertNil(try room.setPresence(ann, data: ["color": "#e11d48"], requestID: nil, at: .milliseconds(2)).patch,
                     "the same value again changes nothing")
        XCTAssertEqual(room.version, 4, "two joins and two changes")
    }

    func testServerFieldsStayTheServers() throws {
        var room = makeRoom()
        _ = try room.setPresence(ann, data: ["name": "Mallory", "holding": ["quantity"], "roles": ["admin"]], requestID: nil, at: .milliseconds(0))
        let member = try XCTUnwrap(room.render()["presence"]?["ann"])
        XCTAssertEqual(member["name"], "Ann")
        XCTAssertEqual(member["holding"], [])
        XCTAssertEqual(member["roles"], ["editor"])
        XCTAssertEqual(member["data"]?["name"], "Mallory", "a client's fields live under data, apart from the server's")
    }

    func testBoundsAreTypedErrorsAndChangeNothing() throws {
        var room = makeRoom()
        let version = room.version
        var many = JSONObject()
        for i in 0...PresenceLimits.maxKeys { many["k\(i)"] = .int(i) }
        XCTAssertThrowsError(try room.setPresence(ann, data: many, requestID: nil, at: .milliseconds(0))) {
            XCTAssertEqual(($0 as? IntentError)?.code, .tooLarge)
        }
        XCTAssertThrowsError(try room.setPresence(ann, data: ["note": .string(String(repeating: "x", count: PresenceLimits.maxBytes))],
                                                  requestID: nil, at: .milliseconds(0))) {
            XCTAssertEqual(($0 as? IntentError)?.code, .tooLarge)
            XCTAssertTrue(($0 as? IntentError)?.message.contains("\(PresenceLimits.maxBytes) bytes") ?? false)
        }
        XCTAssertEqual(room.version, version)
        XCTAssertEqual(room.render()["presence"]?["ann"]?["data"], [:])
        XCTAssertThrowsError(try room.setPresence(SessionID("eve"), data: [:], requestID: nil, at: .milliseconds(0))) {
            XCTAssertEqual(($0 as? IntentError)?.code, .notJoined)
        }
        var quiet = makeRoom(presence: false)
        XCTAssertThrowsError(try quiet.setPresence(ann, data: ["focus": "x"], requestID: nil, at: .milliseconds(0))) {
            XCTAssertEqual(($0 as? IntentError)?.code, .presenceOff)
        }
    }

    func testTheRateIsABurstThenPerSecondOnTheRoomsClock() throws {
        var room = makeRoom()
        let burst = Int(PresenceLimits.burst)
        for i in 0..<burst { _ = try room.setPresence(ann, data: ["n": .int(i)], requestID: nil, at: .milliseconds(0)) }
        XCTAssertThrowsError(try room.setPresence(ann, data: ["n": -1], requestID: nil, at: .milliseconds(0))) {
            XCTAssertEqual(($0 as? IntentError)?.code, .rateLimited)
        }
        _ = try room.setPresence(bob, data: ["n": 1], requestID: nil, at: .milliseconds(0))  // each member has its own
        let oneToken = Int(1000 / PresenceLimits.perSecond)
        XCTAssertThrowsError(try room.setPresence(ann, data: ["n": -2], requestID: nil, at: .milliseconds(oneToken - 1)))
        XCTAssertNotNil(try room.setPresence(ann, data: ["n": -3], requestID: nil, at: .milliseconds(2 * oneToken - 1)).patch,
                        "one update per 1/perSecond comes back")
    }

    func testALeaveTakesTheDataWithTheMember() throws {
        var room = makeRoom()
        _ = try room.setPresence(ann, data: ["focus": "quantity"], requestID: nil, at: .milliseconds(0))
        let leave = try XCTUnwrap(room.leave(ann, reason: .leave).patch)
        XCTAssertEqual(leave.ops, [.remove(path: JSONPointer(["presence", "ann"]))])
        _ = room.join(ann, name: "Ann", roles: ["editor"])
        XCTAssertEqual(room.render()["presence"]?["ann"]?["data"], [:], "joining again starts with no data")
    }

    func testTheStoreGetsTheDataAndARestoredRoomHasIt() throws {
        var room = makeRoom()
        let patch = try XCTUnwrap(try room.setPresence(bob, data: ["focus": "onboarding"], requestID: nil, at: .milliseconds(0)).patch)
        let write = room.storeWrite(for: patch, keepHistory: 16)
        XCTAssertEqual(write.presence.map(\.session), [bob])
        XCTAssertEqual(write.presence.first?.data, ["focus": "onboarding"])
        let reset = room.storeReset()
        let stored = StoredRoom(name: "r", template: "demo", epoch: "e", version: room.version,
                                controls: Dictionary(uniqueKeysWithValues: reset.controls.map { ($0.id, $0.state) }), members: reset.joined, history: [])
        let restored = try XCTUnwrap(Room(restoring: stored, template: config.templates["demo"]!, historyLimit: 16))
        XCTAssertEqual(restored.render(), room.render(), "a room taken over (cluster) keeps its members' roles and data")
    }

    func testGatheredUpdatesGoInOnePatchAndTheStoreGetsEveryMembersData() throws {
        var room = makeRoom()
        try room.gatherPresence(ann, data: ["x": 1], at: .milliseconds(0))
        try room.gatherPresence(bob, data: ["x": 2], at: .milliseconds(0))
        try room.gatherPresence(ann, data: ["x": 3], at: .milliseconds(1))
        XCTAssertEqual(room.render()["presence"]?["ann"]?["data"], [:], "gathered is not yet the state")
        let patch = try XCTUnwrap(room.commitGatheredPresence().patch)
        XCTAssertEqual(patch.cause, ["kind": "presence", "sessions": ["ann", "bob"]])
        XCTAssertEqual(patch.ops, [.add(path: JSONPointer(["presence", "ann", "data", "x"]), value: 3),
                                   .add(path: JSONPointer(["presence", "bob", "data", "x"]), value: 2)])
        let write = room.storeWrite(for: patch, keepHistory: 16)
        XCTAssertEqual(write.presence.map(\.session), [ann, bob])
        XCTAssertEqual(write.presence.map(\.data), [["x": 3], ["x": 2]])
        XCTAssertFalse(room.hasGatheredPresence)
        XCTAssertNil(room.commitGatheredPresence().patch, "nothing gathered: no patch")
    }

    func testALeaveDropsTheLeaversGatheredDataAndErrorsGatherNothing() throws {
        var room = makeRoom()
        try room.gatherPresence(ann, data: ["x": 1], at: .milliseconds(0))
        XCTAssertThrowsError(try room.gatherPresence(bob, data: ["note": .string(String(repeating: "x", count: PresenceLimits.maxBytes))], at: .milliseconds(0)))
        _ = room.leave(ann, reason: .leave)
        XCTAssertFalse(room.hasGatheredPresence)
        XCTAssertNil(room.commitGatheredPresence().patch)
    }
}
