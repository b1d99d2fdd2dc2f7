import LiveControlsEngine
import LiveControlsProtocol
import XCTest

/// Intents the server applies through its API (`Room.applyAsServer`) and `Room.reset(to:)`, on the built-in
/// demo template and a manual clock.
final class ServerIntentTests: XCTestCase {
    let config = ServerConfig.builtin(today: CivilDate(year: 2026, month: 2, day: 28))
    var template: RoomTemplate { config.templates["demo"]! }

    func makeRoom() -> Room { Room(name: "r", template: template, epoch: "e1", historyLimit: 16) }

    func intent(_ control: String, _ name: String, _ args: JSONObject = [:]) -> ServerIntent {
        ServerIntent(control: ControlID(control), intent: name, args: args)
    }

    func testAListIsAppliedInOrderAsOnePatchWithAServerCause() throws {
        var room = makeRoom()
        let before = room.render()
        let update = try room.applyAsServer([
            intent("signup", "set", ["element": "account", "field": "email", "value": "ann@example.org"]),
            intent("signup", "set", ["element": "account", "field": "name", "value": "Ann"]),
            intent("signup", "finish", ["element": "account"]),
            intent("quantity", "set", ["value": 7]),
        ], at: .milliseconds(0))
        let patch = try XCTUnwrap(update.patch)
        XCTAssertEqual(patch.version, 1)
        XCTAssertEqual(room.version, 1)
        XCTAssertEqual(patch.cause["kind"], "server")
        XCTAssertEqual(patch.cause["intents"]?.arrayValue?.map { $0["intent"] }, ["set", "set", "finish", "set"])
        XCTAssertNil(patch.cause["session"], "the server is not a session")
        XCTAssertEqual(try before.applying(patch.ops), room.render(), "the ops turn the old state into the new one")
        XCTAssertEqual(room.render()["controls"]?["signup"]?["current"], "profile", "finish saw the sets before it")
        XCTAssertEqual(room.render()["controls"]?["quantity"]?["value"], 7)
    }

    func testARefusedIntentLeavesTheRoomExactlyAsItWasAndSaysWhichOne() throws {
        var room = makeRoom()
        let before = room.render()
        XCTAssertThrowsError(try room.applyAsServer([
            intent("quantity", "set", ["value": 5]),
            intent("quantity", "set", ["value": 500]),
        ], at: .milliseconds(0))) { error in
            let refused = error as? ServerIntentError
            XCTAssertEqual(refused?.index, 1)
            XCTAssertEqual(refused?.error.code, .outOfRange)
        }
        XCTAssertEqual(room.render(), before, "the first set is not half-applied")
        XCTAssertEqual(room.version, 0)
        XCTAssertThrowsError(try room.applyAsServer([intent("nope", "next")], at: .milliseconds(0))) {
            XCTAssertEqual(($0 as? ServerIntentError)?.error.code, .unknownControl)
        }
    }

    func testServerIntentsNeedNoMembershipAndAServerHoldTicksUntilReleased() throws {
        var room = makeRoom()
        let update = try room.applyAsServer([intent("quantity", "press", ["direction": "next"])], at: .milliseconds(0))
        XCTAssertEqual(room.render()["controls"]?["quantity"]?["holding"]?["session"], "server")
        XCTAssertEqual(room.render()["presence"], .object([:]), "the server has no presence")
        XCTAssertEqual(update.timers.first?.deadline, .milliseconds(500))
        _ = room.wake(control: ControlID("quantity"), at: .milliseconds(500))
        XCTAssertEqual(room.render()["controls"]?["quantity"]?["value"], 3)
        let release = try room.applyAsServer([intent("quantity", "release")], at: .milliseconds(550))
        XCTAssertEqual(release.patch?.cause["ended"]?.arrayValue?.first?["reason"], "release")
        XCTAssertEqual(room.render()["controls"]?["quantity"]?["holding"], .null)
    }

    func testAnEmptyListOrANoOpChangesNothing() throws {
        var room = makeRoom()
        XCTAssertNil(try room.applyAsServer([], at: .milliseconds(0)).patch)
        XCTAssertNil(try room.applyAsServer([intent("quantity", "set", ["value": 1])], at: .milliseconds(0)).patch)
        XCTAssertEqual(room.version, 0)
    }

    func testResetPutsEveryControlBackAndEndsHoldsWithReasonReset() throws {
        var room = makeRoom()
        _ = room.join(SessionID("sA"), name: "Ann", roles: ["admin"])
        _ = try room.apply(control: ControlID("quantity"), intent: "press", args: ["direction": "next"], by: SessionID("sA"),
                           requestID: nil, at: .milliseconds(0))
        _ = try room.applyAsServer([intent("month", "next"), intent("person", "next")], at: .milliseconds(10))
        let before = room.render()
        let update = room.reset(to: template)
        let patch = try XCTUnwrap(update.patch)
        XCTAssertEqual(patch.cause["kind"], "reset")
        XCTAssertEqual(patch.cause["ended"], [["control": "quantity", "session": "sA", "reason": "reset"]])
        XCTAssertEqual(try before.applying(patch.ops), room.render())
        XCTAssertEqual(room.render()["controls"], makeRoom().render()["controls"])
        XCTAssertEqual(room.render()["presence"]?["sA"], ["name": "Ann", "user": .null, "roles": ["admin"], "holding": [], "editing": [], "data": [:]], "members stay, their holds end")
        XCTAssertEqual(update.timers, [TimerEffect(control: ControlID("quantity"), deadline: nil)])
        XCTAssertNil(room.reset(to: template).patch, "a room at its template's state does not change")
    }

    func testARoomMadeWithInitialValuesStartsThereAtVersionZero() throws {
        var room = makeRoom()
        _ = try room.applyAsServer([intent("quantity", "set", ["value": 9])], at: .milliseconds(0))
        room.startHere()
        XCTAssertEqual(room.version, 0)
        XCTAssertNil(room.history.changes(after: 0, current: 0).flatMap { $0.isEmpty ? nil : $0 })
        XCTAssertEqual(room.render()["controls"]?["quantity"]?["value"], 9)
    }
}

extension ServerIntentTests {
    func testAServerHoldInARecoveredRoomEndsWithoutTouchingPresence() throws {
        var room = makeRoom()
        _ = room.join(SessionID("sA"), name: "Ann", roles: ["admin"])
        _ = try room.applyAsServer([intent("quantity", "press", ["direction": "next"])], at: .milliseconds(0))
        let stored = StoredRoom(name: "r", template: "demo", epoch: "e1", version: room.version,
                                controls: Dictionary(uniqueKeysWithValues: room.storeReset().controls.map { ($0.id, $0.state) }),
                                members: [StoredMember(session: SessionID("sA"), name: "Ann", roles: ["admin"])], history: [])
        var recovered = try XCTUnwrap(Room(restoring: stored, template: template, historyLimit: 16))
        var state = recovered.render()
        for update in recovered.dropMembersAfterRestart() {
            let patch = try XCTUnwrap(update.patch)
            state = try state.applying(patch.ops)  // every op applies: no remove of a presence the server never had
            if patch.cause["kind"] == "restart" {
                XCTAssertEqual(patch.cause["ended"], [["control": "quantity", "session": "server", "reason": "restart"]])
            }
        }
        XCTAssertEqual(state, recovered.render())
        XCTAssertEqual(recovered.render()["controls"]?["quantity"]?["holding"], .null)
        XCTAssertEqual(recovered.render()["presence"], .object([:]))
    }
}
