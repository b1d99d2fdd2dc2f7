import LiveControlsEngine
import LiveControlsProtocol
import XCTest

/// Claims (who is editing what) on the demo template, with `signup` exclusive and `person` soft, on a manual clock.
final class ClaimTests: XCTestCase {
    let ann = SessionID("ann"), bob = SessionID("bob")
    var template: RoomTemplate {
        var t = ServerConfig.builtin(today: CivilDate(year: 2026, month: 11, day: 24)).templates["demo"]!
        t.claims = [ControlID("signup"): ClaimPolicy(exclusive: true, leaseMs: 10_000), ControlID("person"): ClaimPolicy()]
        return t
    }

    func makeRoom() -> Room {
        var room = Room(name: "r", template: template, epoch: "e", historyLimit: 16)
        _ = room.join(ann, name: "Ann", roles: ["editor"])
        _ = room.join(bob, name: "Bob", roles: ["editor"])
        return room
    }

    func claim(_ room: inout Room, _ session: SessionID, _ control: String, _ target: String, at ms: Int = 0) throws -> RoomUpdate {
        try room.claim(session, control: ControlID(control), target: target, requestID: nil, at: .milliseconds(ms))
    }

    func set(_ room: inout Room, _ field: String, _ value: JSONValue, by session: SessionID) throws -> RoomUpdate {
        try room.apply(control: ControlID("signup"), intent: "set", args: ["element": "account", "field": .string(field), "value": value],
                       by: session, requestID: nil, at: .milliseconds(0))
    }

    func code(_ body: () throws -> Any) -> ErrorCode? {
        do { _ = try body(); return nil } catch { return (error as? IntentError)?.code }
    }

    func testAClaimShowsOnTheControlAndTheMemberAndIsPatched() throws {
        var room = makeRoom()
        var state = room.render()
        XCTAssertEqual(state["controls"]?["signup"]?["claims"], [:])
        let update = try claim(&room, ann, "signup", "account.email")
        let patch = try XCTUnwrap(update.patch)
        XCTAssertEqual(patch.cause, ["kind": "claim", "session": "ann", "control": "signup", "target": "account.email"])
        XCTAssertEqual(update.timers, [TimerEffect(control: ControlID("signup"), deadline: .milliseconds(10_000))], "the lease is armed")
        state = try state.applying(patch.ops)
        XCTAssertEqual(state, room.render())
        XCTAssertEqual(state["controls"]?["signup"]?["claims"], ["account.email": ["session": "ann", "exclusive": true, "leaseMs": 10_000]])
        XCTAssertEqual(state["presence"]?["ann"]?["editing"], [["control": "signup", "target": "account.email"]])
        let renewal = try claim(&room, ann, "signup", "account.email", at: 4_000)
        XCTAssertNil(renewal.patch, "claiming again renews the lease; nothing visible changes")
        XCTAssertEqual(renewal.timers, [TimerEffect(control: ControlID("signup"), deadline: .milliseconds(14_000))])
    }

    func testOverlappingClaimsAreRefusedNamingTheHolder() throws {
        var room = makeRoom()
        _ = try claim(&room, ann, "signup", "account.email")
        for target in ["account.email", "account", "*"] {
            XCTAssertThrowsError(try claim(&room, bob, "signup", target)) { error in
                XCTAssertEqual((error as? IntentError)?.code, .claimed)
                XCTAssertTrue((error as? IntentError)?.message.contains("Ann (ann)") ?? false, "\(error)")
            }
        }
        XCTAssertNotNil(try claim(&room, bob, "signup", "account.name").patch, "another field is free")
        XCTAssertNotNil(try claim(&room, bob, "person", "i1").patch)
        XCTAssertEqual(code { try self.claim(&room, bob, "signup", "account.phone") }, .notFound)
        XCTAssertEqual(code { try self.claim(&room, bob, "quantity", "value") }, .notFound, "a stepper has no parts: claim * instead")
        XCTAssertEqual(code { try room.unclaim(bob, control: ControlID("signup"), target: "account.email", requestID: nil, at: .milliseconds(0)) }, .notHolder)
    }

    func testAnExclusiveClaimRefusesOthersWritesToItsPartOnly() throws {
        var room = makeRoom()
        _ = try claim(&room, ann, "signup", "account.email")
        XCTAssertThrowsError(try set(&room, "email", "bob@example.org", by: bob)) { error in
            XCTAssertEqual((error as? IntentError)?.code, .claimed)
            XCTAssertEqual((error as? IntentError)?.message, "signup account.email is being edited by Ann (ann); set waits until they are done")
        }
        XCTAssertNotNil(try set(&room, "name", "Bob", by: bob).patch, "another field of the element")
        XCTAssertNotNil(try set(&room, "email", "ann@example.org", by: ann).patch, "the holder writes")
        XCTAssertEqual(code { try room.apply(control: ControlID("signup"), intent: "reset", args: [:], by: bob, requestID: nil, at: .milliseconds(0)) },
                       .claimed, "a reset writes everything")
        XCTAssertEqual(code { try room.apply(control: ControlID("signup"), intent: "finish", args: ["element": "account"], by: bob, requestID: nil, at: .milliseconds(0)) },
                       .claimed, "finishing the element writes the claimed field's element")
        XCTAssertNotNil(try room.applyAsServer([ServerIntent(control: ControlID("signup"), intent: "set",
                                                             args: ["element": "account", "field": "email", "value": "api@example.org"])],
                                               at: .milliseconds(0)).patch, "the server API is not held back")
    }

    func testASoftClaimLetsOthersWrite() throws {
        var room = makeRoom()
        _ = try claim(&room, ann, "person", "i1")
        XCTAssertEqual(room.render()["controls"]?["person"]?["claims"], ["i1": ["session": "ann", "exclusive": false, "leaseMs": 30_000]])
        XCTAssertNotNil(try room.apply(control: ControlID("person"), intent: "remove", args: ["id": "i2"], by: bob, requestID: nil, at: .milliseconds(0)).patch)
    }

    func testClaimsEndOnEveryPathWithTheirReason() throws {
        func ended(_ update: RoomUpdate) -> JSONValue? { update.patch?.cause["claimsEnded"] }
        var room = makeRoom()
        _ = try claim(&room, ann, "signup", "account")
        XCTAssertEqual(ended(try room.unclaim(ann, control: ControlID("signup"), target: "account", requestID: nil, at: .milliseconds(0))),
                       [["control": "signup", "target": "account", "session": "ann", "reason": "release"]])
        _ = try claim(&room, ann, "signup", "account")
        XCTAssertEqual(ended(try room.unclaim(ann, control: ControlID("signup"), target: "account", blur: true, requestID: nil, at: .milliseconds(0))),
                       [["control": "signup", "target": "account", "session": "ann", "reason": "blur"]])
        _ = try claim(&room, ann, "signup", "account", at: 1_000)
        XCTAssertNil(room.wake(control: ControlID("signup"), at: .milliseconds(10_999)).patch, "one millisecond short of the lease")
        let lapsed = room.wake(control: ControlID("signup"), at: .milliseconds(11_000))
        XCTAssertEqual(ended(lapsed), [["control": "signup", "target": "account", "session": "ann", "reason": "lease"]])
        XCTAssertEqual(lapsed.timers, [TimerEffect(control: ControlID("signup"), deadline: nil)])
        _ = try claim(&room, ann, "signup", "account")
        _ = try claim(&room, bob, "person", "i2")
        XCTAssertEqual(ended(room.leave(ann, reason: .disconnect)), [["control": "signup", "target": "account", "session": "ann", "reason": "disconnect"]])
        let removed = try room.apply(control: ControlID("person"), intent: "remove", args: ["id": "i2"], by: bob, requestID: nil, at: .milliseconds(0))
        XCTAssertEqual(ended(removed), [["control": "person", "target": "i2", "session": "bob", "reason": "removed"]])
        XCTAssertEqual(removed.patch?.ops.contains(.replace(path: JSONPointer(["presence", "bob", "editing"]), value: [])), true)
        _ = try claim(&room, bob, "signup", "*")
        XCTAssertEqual(ended(room.reset(to: template)), [["control": "signup", "target": "*", "session": "bob", "reason": "reset"]])
        _ = try claim(&room, bob, "quantity", "*")
        let failover = room.endHolds(reason: .failover)
        XCTAssertEqual(failover.patch?.cause["kind"], "failover")
        XCTAssertEqual(ended(failover), [["control": "quantity", "target": "*", "session": "bob", "reason": "failover"]])
    }

    func testClaimsAreStoredAndATakeoverEndsThem() throws {
        var room = makeRoom()
        _ = try claim(&room, ann, "signup", "account.email")
        let write = room.storeReset()
        let stored = StoredRoom(name: "r", template: "demo", epoch: "e", version: room.version,
                                controls: Dictionary(uniqueKeysWithValues: write.controls.map { ($0.id, $0.state) }), members: write.joined, history: [])
        var restored = try XCTUnwrap(Room(restoring: stored, template: template, historyLimit: 16))
        XCTAssertEqual(restored.render(), room.render())
        XCTAssertNil(restored.resumeFloor, "stored by this release: resumes go on across the restart")
        let takeover = restored.endHolds(reason: .failover)
        XCTAssertEqual(takeover.patch?.cause["claimsEnded"], [["control": "signup", "target": "account.email", "session": "ann", "reason": "failover"]])
        XCTAssertEqual(takeover.timers, [], "a restored claim had no lease armed")
        var soft = template
        soft.claims[ControlID("signup")] = ClaimPolicy(exclusive: false, leaseMs: 10_000)
        XCTAssertEqual(Room.configurationChanges(stored: stored, template: soft), ["signup"], "a changed claim policy is a changed setting")
    }

    /// Review of issue 15: a claim must not trap a running hold, nor lock a control for those who may act on it.
    func testHoldsAndPermissionsComeBeforeClaims() throws {
        var room = makeRoom()
        _ = try room.apply(control: ControlID("quantity"), intent: "press", args: ["direction": "next"], by: ann, requestID: nil, at: .milliseconds(0))
        XCTAssertEqual(code { try self.claim(&room, bob, "quantity", "*") }, .claimed, "the whole control is being held")
        var exclusive = template
        exclusive.claims[ControlID("quantity")] = ClaimPolicy(exclusive: true)
        exclusive.permissions[ControlID("quantity")] = ControlPermissions(rules: [("*", ["host"])])
        var hosted = Room(name: "h", template: exclusive, epoch: "e", historyLimit: 4)
        _ = hosted.join(ann, name: "Ann", roles: ["editor"])
        _ = hosted.join(bob, name: "Bob", roles: ["editor", "host"])
        XCTAssertEqual(code { try self.claim(&hosted, ann, "quantity", "*") }, .forbidden, "a guest cannot lock the host's control")
        _ = try hosted.apply(control: ControlID("quantity"), intent: "press", args: ["direction": "next"], by: bob, requestID: nil, at: .milliseconds(0))
        _ = try hosted.apply(control: ControlID("quantity"), intent: "release", args: [:], by: bob, requestID: nil, at: .milliseconds(1))
        XCTAssertNotNil(try claim(&hosted, bob, "quantity", "*").patch)
    }

    func testAReleaseIsNeverHeldBackAndUnclaimingCostsNoRate() throws {
        var t = template
        t.claims[ControlID("quantity")] = ClaimPolicy(exclusive: true)
        var room = Room(name: "r", template: t, epoch: "e", historyLimit: 4)
        _ = room.join(ann, name: "Ann", roles: ["editor"])
        _ = room.join(bob, name: "Bob", roles: ["editor"])
        _ = try claim(&room, bob, "person", "i1")
        _ = try room.apply(control: ControlID("quantity"), intent: "press", args: ["direction": "next"], by: ann, requestID: nil, at: .milliseconds(0))
        // Bob cannot claim the held stepper, so the hold is released freely; an exclusive claim by the holder itself
        // does not stop its own release either.
        _ = try claim(&room, ann, "quantity", "*")
        XCTAssertNotNil(try room.apply(control: ControlID("quantity"), intent: "release", args: [:], by: ann, requestID: nil, at: .milliseconds(1)).patch)
        for i in 0..<Int(PresenceLimits.burst) - 1 { _ = try room.setPresence(bob, data: ["n": .int(i)], requestID: nil, at: .milliseconds(2)) }
        XCTAssertEqual(code { try room.setPresence(bob, data: ["n": -1], requestID: nil, at: .milliseconds(2)) }, .rateLimited)
        XCTAssertNotNil(try room.unclaim(bob, control: ControlID("person"), target: "i1", requestID: nil, at: .milliseconds(2)).patch,
                        "giving a claim up is not rate limited")
    }

    /// Rooms without presence store no members; a restart still ends every claim they stored.
    func testARestartEndsClaimsOfMembersTheStoreDidNotList() throws {
        var t = template
        t.presence = false
        var room = Room(name: "r", template: t, epoch: "e", historyLimit: 4)
        _ = room.join(ann, name: nil, roles: ["editor"])
        _ = try claim(&room, ann, "signup", "account")
        let write = room.storeReset()
        let stored = StoredRoom(name: "r", template: "demo", epoch: "e", version: room.version,
                                controls: Dictionary(uniqueKeysWithValues: write.controls.map { ($0.id, $0.state) }), members: [], history: [])
        var restored = try XCTUnwrap(Room(restoring: stored, template: t, historyLimit: 4))
        let updates = restored.dropMembersAfterRestart()
        XCTAssertEqual(updates.last?.patch?.cause["claimsEnded"], [["control": "signup", "target": "account", "session": "ann", "reason": "restart"]])
        XCTAssertEqual(restored.render()["controls"]?["signup"]?["claims"], [:])
    }

    func testASessionHoldsABoundedNumberOfClaims() throws {
        var room = makeRoom()
        for i in 0..<Room.maxClaimsPerSession {
            _ = try room.apply(control: ControlID("person"), intent: "append", args: ["value": .int(i)], by: ann, requestID: nil, at: .milliseconds(0))
        }
        let ids = room.render()["controls"]!["person"]!["sections"]!.arrayValue!.flatMap { $0["items"]!.arrayValue!.map { $0["id"]!.stringValue! } }
        for id in ids.prefix(Room.maxClaimsPerSession) { _ = try claim(&room, ann, "person", id, at: 0) }
        XCTAssertEqual(code { try self.claim(&room, ann, "person", ids[Room.maxClaimsPerSession], at: 0) }, .tooLarge)
    }
}
