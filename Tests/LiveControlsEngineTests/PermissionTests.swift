import LiveControlsEngine
import LiveControlsProtocol
import XCTest

/// A template's `permissions`: intents reserved for roles, per control.
final class PermissionTests: XCTestCase {
    let day = CivilDate(year: 2026, month: 11, day: 24)
    var workshop: RoomTemplate { ServerConfig.builtin(today: day).templates["workshop"]! }
    let guest = SessionID("guest"), host = SessionID("host"), admin = SessionID("admin")

    func makeRoom() -> Room {
        var room = Room(name: "w", template: workshop, epoch: "e", historyLimit: 16)
        _ = room.join(guest, name: "Gus", roles: ["editor"])
        _ = room.join(host, name: "Hana", roles: ["editor", "host"])
        _ = room.join(admin, name: "Ada", roles: ["admin"])
        return room
    }

    func next(_ room: inout Room, by session: SessionID) throws -> RoomUpdate {
        try room.apply(control: ControlID("agenda"), intent: "next", args: [:], by: session, requestID: nil, at: .milliseconds(0))
    }

    func testOnlyTheRolesListedMaySendTheIntentAndTheErrorNamesTheRole() throws {
        var room = makeRoom()
        XCTAssertThrowsError(try next(&room, by: guest)) { error in
            let e = error as? IntentError
            XCTAssertEqual(e?.code, .forbidden)
            XCTAssertEqual(e?.message, "next on agenda needs role host (you have: editor)")
        }
        XCTAssertEqual(room.render()["controls"]?["agenda"]?["index"], 0, "nothing changed")
        XCTAssertNotNil(try next(&room, by: host).patch)
        XCTAssertNotNil(try next(&room, by: admin).patch, "an admin may do everything")
        XCTAssertEqual(room.render()["controls"]?["agenda"]?["index"], 2)
    }

    func testTheStateSaysWhoMayDoWhatAndPatchesNeverTouchIt() throws {
        var room = makeRoom()
        XCTAssertEqual(room.render()["controls"]?["agenda"]?["permissions"], ["*": ["host"]])
        let patch = try XCTUnwrap(try next(&room, by: host).patch)
        XCTAssertFalse(patch.ops.contains { $0.path.description.contains("permissions") })
        let demo = Room(name: "d", template: ServerConfig.builtin(today: day).templates["demo"]!, epoch: "e", historyLimit: 1)
        XCTAssertNil(demo.render()["controls"]?["quantity"]?["permissions"], "no permissions: every member who may act may")
    }

    func testANamedIntentBeatsTheWildcardAndUnlistedIntentsStayOpen() throws {
        let config = try ServerConfig(json: [
            "templates": ["t": [
                "controls": ["q": ["kind": "stepper", "min": 0, "max": 9, "value": 0]],
                "permissions": ["q": ["set": ["host", "lead"]]],
            ]],
        ], file: "t.json", today: day)
        var room = Room(name: "r", template: config.templates["t"]!, epoch: "e", historyLimit: 1)
        _ = room.join(guest, name: nil, roles: ["editor"])
        _ = room.join(host, name: nil, roles: ["editor", "lead"])
        XCTAssertNotNil(try room.apply(control: ControlID("q"), intent: "next", args: [:], by: guest, requestID: nil, at: .milliseconds(0)).patch)
        XCTAssertThrowsError(try room.apply(control: ControlID("q"), intent: "set", args: ["value": 3], by: guest, requestID: nil, at: .milliseconds(0))) {
            XCTAssertEqual(($0 as? IntentError)?.message, "set on q needs role host or lead (you have: editor)")
        }
        XCTAssertNotNil(try room.apply(control: ControlID("q"), intent: "set", args: ["value": 3], by: host, requestID: nil, at: .milliseconds(0)).patch)
    }

    func testTheServerAPIIsNotRestricted() throws {
        var room = makeRoom()
        XCTAssertNotNil(try room.applyAsServer([ServerIntent(control: ControlID("agenda"), intent: "next")], at: .milliseconds(0)).patch)
    }

    func testConfigMistakesNameTheirPlace() {
        func error(_ permissions: JSONValue) -> String? {
            do {
                _ = try ServerConfig(json: ["templates": ["t": ["controls": ["q": ["kind": "stepper"]], "permissions": permissions]]],
                                     file: "c.json", today: day)
                return nil
            } catch { return error.description }
        }
        XCTAssertEqual(error(["x": ["next": ["host"]]]), "c.json: at /templates/t/permissions/x: no control \"x\" in this template (it has: q)")
        XCTAssertEqual(error(["q": ["jump": ["host"]]]),
                       "c.json: at /templates/t/permissions/q/jump: no intent \"jump\" on this control (it has: next, prev, set, press, release, or * for all)")
        XCTAssertEqual(error(["q": ["next": []]]),
                       "c.json: at /templates/t/permissions/q/next: list at least one role (leave the intent out to open it to every editor)")
        XCTAssertEqual(error(["q": ["next": ["a b"]]]), "c.json: at /templates/t/permissions/q/next/0: a role is 1–64 characters of A–Z a–z 0–9 _ - . :")
        XCTAssertNil(error(["q": ["next": ["host"], "*": ["lead"]]]))
    }

    /// Permissions are settings like any other: a stored room whose template's permissions changed starts a new epoch
    /// (its clients would otherwise keep showing the old ones).
    func testChangedPermissionsAreAConfigurationChange() throws {
        var room = makeRoom()
        _ = try next(&room, by: host)
        let write = room.storeReset()
        let stored = StoredRoom(name: "w", template: "workshop", epoch: "e", version: room.version,
                                controls: Dictionary(uniqueKeysWithValues: write.controls.map { ($0.id, $0.state) }), members: write.joined, history: [])
        XCTAssertEqual(Room.configurationChanges(stored: stored, template: workshop), [])
        XCTAssertEqual(try XCTUnwrap(Room(restoring: stored, template: workshop, historyLimit: 16)).render(), room.render())
        var opened = workshop
        opened.permissions[ControlID("agenda")] = nil
        XCTAssertEqual(Room.configurationChanges(stored: stored, template: opened), ["agenda"])
        var other = workshop
        other.permissions[ControlID("timebox")] = ControlPermissions(rules: [("start", ["host"])])
        XCTAssertEqual(Room.configurationChanges(stored: stored, template: other), ["timebox"])
    }

    func testTokensCarryCustomRoles() throws {
        let authority = TokenAuthority(secret: "0123456789abcdef0123")
        let token = AccessToken(name: "Hana", role: .editor, roles: ["host"], rooms: ["w"], expiresAt: 2_000)
        let verified = try authority.verify(authority.sign(token), now: 1_000)
        XCTAssertEqual(verified.roles, ["host"])
        XCTAssertEqual(verified.allRoles, ["editor", "host"])
        let plain = try authority.verify(authority.sign(AccessToken(role: .viewer, rooms: ["w"], expiresAt: 2_000)), now: 1_000)
        XCTAssertEqual(plain.allRoles, ["viewer"])
        // A built-in name among the custom roles would pass as that role (an editor passing every permission as admin).
        let smuggled = authority.sign(AccessToken(role: .editor, roles: ["admin"], rooms: ["w"], expiresAt: 2_000))
        XCTAssertThrowsError(try authority.verify(smuggled, now: 1_000)) {
            XCTAssertEqual($0 as? TokenError, .invalid("roles lists custom roles only; admin belongs in role"))
        }
    }
}
