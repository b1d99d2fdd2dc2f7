import LiveControlsEngine
import LiveControlsProtocol
import XCTest

final class BroadcastTests: XCTestCase {
    let day = CivilDate(year: 2026, month: 11, day: 28)

    func room(_ broadcast: JSONValue?) throws -> Room {
        var template: JSONObject = ["controls": ["q": ["kind": "stepper"]]]
        if let broadcast { template["broadcast"] = broadcast }
        let config = try ServerConfig(json: ["templates": ["t": .object(template)]], file: "c.json", today: day)
        var room = Room(name: "r", template: config.templates["t"]!, epoch: "e", historyLimit: 4)
        _ = room.join(SessionID("ann"), name: "Ann", roles: ["editor"])
        _ = room.join(SessionID("vic"), name: nil, roles: ["viewer"])
        _ = room.join(SessionID("host"), name: nil, roles: ["editor", "host"])
        return room
    }

    func code(_ body: () throws -> Void) -> String {
        do { try body(); return "ok" } catch let error as IntentError { return error.code.rawValue } catch { return "\(error)" }
    }

    func testTheMembersRateRefillsAtExactInstants() throws {
        var room = try room(["perSecond": 2, "burst": 3])
        let at = { (ms: UInt64) in Instant(nanoseconds: ms * 1_000_000) }
        for _ in 0..<3 { XCTAssertEqual(code { try room.checkBroadcast(from: SessionID("ann"), bytes: 10, at: at(1_000)) }, "ok") }
        XCTAssertEqual(code { try room.checkBroadcast(from: SessionID("ann"), bytes: 10, at: at(1_000)) }, "rate_limited")
        XCTAssertEqual(code { try room.checkBroadcast(from: SessionID("ann"), bytes: 10, at: at(1_499)) }, "rate_limited", "0.998 of a token")
        XCTAssertEqual(code { try room.checkBroadcast(from: SessionID("ann"), bytes: 10, at: at(1_500)) }, "ok", "one token after 500 ms at 2 a second")
        XCTAssertEqual(code { try room.checkBroadcast(from: SessionID("host"), bytes: 10, at: at(1_500)) }, "ok", "another member has its own rate")
    }

    func testTheRoomsRateBoundsEveryoneTogether() throws {
        var room = try room(["perSecond": 1, "burst": 1, "roomPerSecond": 1])
        let now = Instant(nanoseconds: 5_000_000_000)
        XCTAssertEqual(code { try room.checkBroadcast(from: SessionID("ann"), bytes: 1, at: now) }, "ok")
        XCTAssertEqual(code { try room.checkBroadcast(from: SessionID("host"), bytes: 1, at: now) }, "ok", "the room's burst is twice its rate")
        XCTAssertEqual(code { try room.checkServerBroadcast(at: now) }, "rate_limited", "the server API counts toward it")
    }

    func testARefusalByTheRoomCostsItsSenderNothing() throws {
        var room = try room(["perSecond": 1, "burst": 1, "roomPerSecond": 2])  // the room's burst: 4
        let now = Instant(nanoseconds: 1_000_000_000)
        for name in ["m1", "m2", "m3", "m4", "ed"] { _ = room.join(SessionID(name), name: nil, roles: ["editor"]) }
        for name in ["m1", "m2", "m3", "m4"] { XCTAssertEqual(code { try room.checkBroadcast(from: SessionID(name), bytes: 1, at: now) }, "ok") }
        XCTAssertEqual(code { try room.checkBroadcast(from: SessionID("ed"), bytes: 1, at: now) }, "rate_limited", "the room's burst is spent")
        let later = Instant(nanoseconds: now.nanoseconds + 500_000_000)  // the room has one token again; a spent member's only half
        XCTAssertEqual(code { try room.checkBroadcast(from: SessionID("ed"), bytes: 1, at: later) }, "ok", "Ed's own token was not spent by the refusal")
    }

    func testRolesSizeAndOff() throws {
        var open = try room(nil)
        let now = Instant(nanoseconds: 0)
        XCTAssertEqual(code { try open.checkBroadcast(from: SessionID("vic"), bytes: 1, at: now) }, "forbidden", "not a viewer by default")
        XCTAssertEqual(code { try open.checkBroadcast(from: SessionID("ann"), bytes: 2_049, at: now) }, "too_large")
        XCTAssertEqual(code { try open.checkBroadcast(from: SessionID("nobody"), bytes: 1, at: now) }, "not_joined")
        var hosts = try room(["roles": ["host", "viewer"]])
        XCTAssertEqual(code { try hosts.checkBroadcast(from: SessionID("ann"), bytes: 1, at: now) }, "forbidden")
        XCTAssertEqual(code { try hosts.checkBroadcast(from: SessionID("host"), bytes: 1, at: now) }, "ok")
        XCTAssertEqual(code { try hosts.checkBroadcast(from: SessionID("vic"), bytes: 1, at: now) }, "ok", "listed, viewers may")
        var off = try room(false)
        XCTAssertEqual(code { try off.checkBroadcast(from: SessionID("ann"), bytes: 1, at: now) }, "forbidden")
        XCTAssertThrowsError(try room(["perSecond": 10, "burst": 5])) { XCTAssertTrue("\($0)".contains("broadcast/burst: must be within 10…1000000"), "\($0)") }
        XCTAssertThrowsError(try room(["color": "red"])) { XCTAssertTrue("\($0)".contains("color"), "\($0)") }
    }
}
