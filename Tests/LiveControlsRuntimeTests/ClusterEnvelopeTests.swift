@testable import LiveControlsRuntime
import LiveControlsEngine
import LiveControlsProtocol
import XCTest

/// The bytes nodes exchange through Redis: every request kind and reply survives the round trip exactly.
final class ClusterEnvelopeTests: XCTestCase {
    func roundTrip(_ request: ClusterRequest, file: StaticString = #filePath, line: UInt = #line) throws {
        let envelope = ClusterEnvelope.Request(request: request, room: "team-1:a.b", node: "node-a", session: SessionID("s123"), token: 42)
        guard case let .request(decoded)? = ClusterEnvelope.decodeInbox(ClusterEnvelope.encode(envelope)) else {
            return XCTFail("not decoded", file: file, line: line)
        }
        XCTAssertEqual(decoded.request, request, file: file, line: line)
        XCTAssertEqual(decoded.room, "team-1:a.b", file: file, line: line)
        XCTAssertEqual(decoded.node, "node-a", file: file, line: line)
        XCTAssertEqual(decoded.session, SessionID("s123"), file: file, line: line)
        XCTAssertEqual(decoded.token, 42, file: file, line: line)
    }

    func testRequestsRoundTrip() throws {
        try roundTrip(.join(JoinRequest(id: .string("j1"), room: "team-1:a.b", name: "Ann \t\n\"quoted\"", since: ResumePoint(epoch: "e1", version: 7))))
        try roundTrip(.join(JoinRequest(room: "team-1:a.b")))
        var hosted = JoinRequest(room: "team-1:a.b", name: "Hana")
        hosted.roles = ["editor", "host"]
        try roundTrip(.join(hosted))
        let host = Membership(name: "Hana", roles: ["editor", "host"])
        try roundTrip(.intent(IntentRequest(id: .int(9), room: "team-1:a.b", control: "q", intent: "set",
                                            args: ["value": 3, "nested": ["a": [1, 2.5, nil, true]]]), host))
        try roundTrip(.intent(IntentRequest(id: .int(9), room: "team-1:a.b", control: "q", intent: "next"), nil))
        try roundTrip(.presence(PresenceRequest(room: "team-1:a.b", data: ["focus": "q", "gone": nil]), Membership(name: nil, roles: [])))
        try roundTrip(.claim(ClaimRequest(id: .string("c"), room: "team-1:a.b", control: "f", target: "account.email"), host))
        try roundTrip(.claim(ClaimRequest(room: "team-1:a.b", control: "f", release: true), nil))
        try roundTrip(.leave(id: .string("l"), reason: .leave))
        try roundTrip(.leave(id: nil, reason: .disconnect))
        try roundTrip(.snapshot(id: nil))
        try roundTrip(.snapshot(id: .int(0)))
    }

    func testRepliesKeepTheMessageBytesAndTheStateVersion() throws {
        let message = Array(#"{"type":"snapshot","room":"r","epoch":"e","version":5,"state":{"a":"x\ny"}}"#.utf8)
        let bytes = message.withUnsafeBufferPointer {
            ClusterEnvelope.reply(room: "r", session: SessionID("s1"), token: 7, state: ("e", 5), message: $0)
        }
        guard case let .reply(reply)? = ClusterEnvelope.decodeInbox(bytes) else { return XCTFail("not decoded") }
        XCTAssertEqual(Array(reply.message), message)
        XCTAssertEqual(reply.epoch, "e")
        XCTAssertEqual(reply.version, 5)
        XCTAssertEqual(reply.token, 7)

        let ack = Array(#"{"type":"ack","id":"1","room":"r","version":5}"#.utf8)
        let plain = ack.withUnsafeBufferPointer { ClusterEnvelope.reply(room: "r", session: SessionID("s1"), token: 8, state: nil, message: $0) }
        guard case let .reply(r2)? = ClusterEnvelope.decodeInbox(plain) else { return XCTFail("not decoded") }
        XCTAssertNil(r2.epoch)
        XCTAssertNil(r2.version)
        XCTAssertEqual(Array(r2.message), ack)
        XCTAssertFalse(r2.notOwner)

        let refusal = Array(#"{"type":"error","code":"unavailable","room":"r"}"#.utf8)
        let notOwner = refusal.withUnsafeBufferPointer {
            ClusterEnvelope.reply(room: "r", session: SessionID("s1"), token: 9, state: nil, message: $0, notOwner: true)
        }
        guard case let .reply(r3)? = ClusterEnvelope.decodeInbox(notOwner) else { return XCTFail("not decoded") }
        XCTAssertTrue(r3.notOwner, "the sender learns the node does not own the room")
        XCTAssertEqual(r3.token, 9)
        XCTAssertEqual(Array(r3.message), refusal)
    }

    func testPublicationsAndMalformedInput() {
        let p = ClusterEnvelope.publication(epoch: "e9", version: 12, owner: "n3", message: Array("{}".utf8))
        let decoded = ClusterEnvelope.decodePublication(p)
        XCTAssertEqual(decoded?.epoch, "e9")
        XCTAssertEqual(decoded?.version, 12)
        XCTAssertEqual(decoded?.owner, "n3")
        XCTAssertEqual(decoded.map { Array($0.message) }, Array("{}".utf8))
        XCTAssertEqual(ClusterEnvelope.decodePublication(ClusterEnvelope.publication(epoch: "e", version: 0, owner: "n", message: []))?.message.count, 0)
        let badInbox = ["", "no newline", "Q\tjoin\tr\tn\ts\n{}", "Q\tfly\tr\tn\ts\t1\n{}", "Q\tintent\tr\tn\ts\t1\n{\"control\":\"q\"}",
                        "Q\tleave\tr\tn\ts\t1\n{\"reason\":\"bored\"}", "Q\tjoin\tr\tn\ts\t1\nnot json", "R\tr\ts\tx\t\t\n{}", "Z\t1\n"]
        for bad in badInbox { XCTAssertNil(ClusterEnvelope.decodeInbox(Array(bad.utf8)).map { _ in true }, bad) }
        for bad in ["", "e\tx\tn\n{}", "e\n{}", "e\t1\n{}", "e\t1\t\n{}", "e\t1\t2\t3\n{}"] { XCTAssertNil(ClusterEnvelope.decodePublication(Array(bad.utf8)).map { _ in true }, bad) }
    }

    func testKeysAndChannels() {
        let keys = ClusterKeys(prefix: "lc:")
        XCTAssertEqual(keys.lease("demo"), "lc:lease:demo")
        XCTAssertEqual(keys.room(ofPatchChannel: keys.patches("a:b")), "a:b")
        XCTAssertNil(keys.room(ofPatchChannel: keys.inbox("n1")))
        XCTAssertEqual(keys.patchPattern, "lc:p:*")
    }

    func testAHandBackNoticeIsNeitherAPatchNorAnythingElse() {
        let notice = ClusterEnvelope.release(owner: "n1")
        XCTAssertEqual(ClusterEnvelope.decodeRelease(notice), "n1")
        XCTAssertNil(ClusterEnvelope.decodePublication(notice))
        XCTAssertNil(ClusterEnvelope.decodeRelease(Array("e1\t3\tn1\n{}".utf8)), "a patch is not a notice")
        XCTAssertNil(ClusterEnvelope.decodeRelease(Array("released\t\n".utf8)))
    }

    func testAPatchWithViewsCarriesEachViewWithItsSessions() throws {
        let views: [(sessions: [SessionID], message: [UInt8])] = [
            ([SessionID("s1")], Array(#"{"a":1}"#.utf8)), ([SessionID("s2"), SessionID("s3")], Array(#"{"b":"\n\t"}"#.utf8)), ([], Array("{}".utf8)),
        ]
        let decoded = try XCTUnwrap(ClusterEnvelope.decodePublication(ClusterEnvelope.publication(epoch: "e", version: 7, owner: "n1", views: views)))
        XCTAssertEqual(decoded.version, 7)
        XCTAssertEqual(decoded.owner, "n1")
        XCTAssertEqual(Array(decoded.message), Array("{}".utf8), "for sessions not listed")
        XCTAssertEqual(decoded.views?[SessionID("s1")].map(Array.init), Array(#"{"a":1}"#.utf8))
        XCTAssertEqual(decoded.views?[SessionID("s3")].map(Array.init), Array(#"{"b":"\n\t"}"#.utf8))
        XCTAssertNil(decoded.views?[SessionID("s4")])
        for bad in ["e\t1\tn\tviews\n", "e\t1\tn\tviews\n9\ts1\n{}", "e\t1\tn\tviews\n2\t\n{}x", "e\t1\tn\tviews\nx\ts1\n{}", "e\t1\tn\tother\n{}"] {
            XCTAssertNil(ClusterEnvelope.decodePublication(Array(bad.utf8)).map { _ in true }, bad)
        }
    }
}
