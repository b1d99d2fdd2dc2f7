@testable import LiveControlsRuntime
import LiveControlsEngine
import LiveControlsProtocol
import Logging
import Dispatch
import XCTest

/// Presence in a busy room (`RoomRuntime+Presence.swift`), on the manual clock: at most one presence patch per
/// interval (1 ms per member past 8 members), the updates that come sooner gathered into the next one, each member's
/// latest data in it, their acks after it.
final class PresenceGatheringTests: XCTestCase {
    let clock = ManualScheduler(startingAt: 1_000_000_000)

    func makeDemo(members: Int) throws -> (RoomRuntime, [RecordingSubscriber]) {
        let registry = RoomRegistry(config: .builtin(today: CivilDate(year: 2026, month: 2, day: 28)), maxRooms: 10, store: MemoryRoomStore(),
                                    waker: CountingWaker(), scheduler: clock, logger: Logger(label: "test"))
        try registry.start()
        let runtime = try registry.room(named: "demo", template: nil, force: false)
        let subscribers = (0..<members).map { RecordingSubscriber("m\($0)") }
        for s in subscribers { runtime.join(s, JoinRequest(room: "demo")) }
        runtime.queue.sync {}
        return (runtime, subscribers)
    }

    func messages(_ s: RecordingSubscriber, after count: Int) throws -> [JSONValue] {
        try s.messages.dropFirst(count).map { try JSONParser.parse($0) }
    }

    func presence(_ runtime: RoomRuntime, _ s: RecordingSubscriber, _ data: JSONObject, id: Int) {
        runtime.presence(s, PresenceRequest(id: .int(id), room: "demo", data: data))
        runtime.queue.sync {}
    }

    func testUpdatesWithinTheIntervalGoOutAsOnePatchWithEachMembersLatestDataThenTheirAcks() throws {
        let (runtime, members) = try makeDemo(members: 20)  // interval: 20 ms
        let watcher = members[19]
        let seen = watcher.messages.count
        presence(runtime, members[0], ["x": 1], id: 1)
        var got = try messages(watcher, after: seen)
        XCTAssertEqual(got.count, 1, "the first update is its own patch at once")
        XCTAssertEqual(got.first?["cause"], ["kind": "presence", "session": "m0", "id": 1])

        clock.advance(nanoseconds: 5_000_000)
        presence(runtime, members[1], ["x": 2], id: 2)
        presence(runtime, members[2], ["x": 3], id: 3)
        presence(runtime, members[1], ["x": 4, "y": 0], id: 4)
        XCTAssertEqual(try messages(watcher, after: seen).count, 1, "5 ms after the last presence patch: gathered, nothing sent")
        XCTAssertEqual(try messages(members[1], after: 0).filter { $0["type"] == "ack" && $0["id"] == 2 }.count, 0, "no ack before its patch")
        XCTAssertEqual(clock.armed, [Instant(nanoseconds: 1_020_000_000)], "armed for the interval's end")

        clock.advance(nanoseconds: 14_999_999)
        XCTAssertEqual(try messages(watcher, after: seen).count, 1)
        clock.advance(nanoseconds: 1)
        got = try messages(watcher, after: seen)
        XCTAssertEqual(got.count, 2)
        let patch = got[1]
        XCTAssertEqual(patch["version"], .int(try XCTUnwrap(got[0]["version"]?.intValue) + 1))
        XCTAssertEqual(patch["cause"], ["kind": "presence", "sessions": ["m1", "m2"]])
        XCTAssertEqual(patch["ops"], [["op": "add", "path": "/presence/m1/data/x", "value": 4], ["op": "add", "path": "/presence/m1/data/y", "value": 0],
                                      ["op": "add", "path": "/presence/m2/data/x", "value": 3]], "each member's latest data, members in join order")
        let m1 = try messages(members[1], after: 0)
        let patchIndex = try XCTUnwrap(m1.firstIndex { $0["type"] == "patch" && $0["cause"]?["sessions"] != nil })
        let acks = m1.enumerated().filter { $0.element["type"] == "ack" }
        XCTAssertEqual(acks.map { $0.element["id"] }, [2, 4])
        XCTAssertTrue(acks.allSatisfy { $0.offset > patchIndex && $0.element["version"] == patch["version"] }, "acks after the patch, at its version")
        XCTAssertEqual(runtime.queue.sync { runtime.room.render()["presence"]?["m1"]?["data"] }, ["x": 4, "y": 0])
    }

    func testErrorsAreAnsweredAtOnceAndNothingIsGatheredForThem() throws {
        let (runtime, members) = try makeDemo(members: 10)
        presence(runtime, members[0], ["x": 1], id: 1)
        clock.advance(nanoseconds: 1_000_000)
        presence(runtime, members[0], ["note": .string(String(repeating: "x", count: PresenceLimits.maxBytes))], id: 2)
        let error = try messages(members[0], after: 0).last
        XCTAssertEqual(error?["type"], "error")
        XCTAssertEqual(error?["code"], "too_large")
        XCTAssertEqual(clock.armed, [], "nothing gathered, nothing armed")
    }

    func testALeavingMembersGatheredUpdateIsAppliedAndAckedBeforeItsLeft() throws {
        let (runtime, members) = try makeDemo(members: 10)
        presence(runtime, members[0], ["x": 1], id: 1)
        clock.advance(nanoseconds: 1_000_000)
        presence(runtime, members[1], ["x": 2], id: 2)
        runtime.leave(members[1], id: .int(3), reason: .leave)
        runtime.queue.sync {}
        let types = try messages(members[1], after: 0).suffix(3).map { $0["type"] }
        XCTAssertEqual(types, ["patch", "ack", "left"], "its presence patch, its ack, then its left")
        XCTAssertEqual(try messages(members[0], after: 0).suffix(2).map { $0["cause"]?["kind"] }, ["presence", "leave"])
        clock.advance(nanoseconds: 1_000_000_000)
        XCTAssertEqual(try messages(members[0], after: 0).filter { $0["cause"]?["kind"] == "presence" }.count, 2, "nothing more")
    }

    func testSmallRoomsSendEveryUpdateAsItsOwnPatch() throws {
        let (runtime, members) = try makeDemo(members: 8)
        for i in 1...5 { presence(runtime, members[0], ["x": .int(i)], id: i) }
        let causes = try messages(members[7], after: 0).filter { $0["cause"]?["kind"] == "presence" }.map { $0["cause"]?["id"] }
        XCTAssertEqual(causes, [1, 2, 3, 4, 5])
        XCTAssertEqual(clock.armed, [])
    }

    func testAClosingConnectionsGatheredUpdateIsAppliedAndAckedBeforeItsClose() throws {
        let (runtime, members) = try makeDemo(members: 10)
        presence(runtime, members[0], ["x": 1], id: 1)
        clock.advance(nanoseconds: 1_000_000)
        presence(runtime, members[1], ["x": 2], id: 2)
        let closed = DispatchSemaphore(value: 0)
        runtime.afterQueuedWork(of: members[1]) { closed.signal() }
        XCTAssertEqual(closed.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(try messages(members[1], after: 0).last?["type"], "ack", "its ack is out before the close may go")
        XCTAssertEqual(try messages(members[1], after: 0).last?["id"], 2)
    }

    func testAPresencePatchOfALeaverPushesTheNextOneAnIntervalLater() throws {
        let (runtime, members) = try makeDemo(members: 20)  // 20 ms
        presence(runtime, members[0], ["x": 1], id: 1)
        clock.advance(nanoseconds: 5_000_000)
        presence(runtime, members[1], ["x": 2], id: 2)  // armed for 20 ms
        runtime.leave(members[1], id: nil, reason: .leave)  // its update goes now, at 5 ms
        runtime.queue.sync {}
        clock.advance(nanoseconds: 1_000_000)
        presence(runtime, members[2], ["x": 3], id: 3)  // gathered: the last presence patch was 1 ms ago
        clock.advance(nanoseconds: 14_000_000)  // 20 ms: the first deadline, but only 15 ms after the leaver's patch
        XCTAssertFalse(try messages(members[2], after: 0).contains { $0["type"] == "ack" && $0["id"] == 3 })
        clock.advance(nanoseconds: 5_000_000)  // 25 ms: an interval after it
        XCTAssertTrue(try messages(members[2], after: 0).contains { $0["type"] == "ack" && $0["id"] == 3 })
    }
}
