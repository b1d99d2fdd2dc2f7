import LiveControlsProtocol
import XCTest

final class ClientMessageTests: XCTestCase {
    func decode(_ text: String) throws(ProtocolError) -> ClientMessage {
        try Array(text.utf8).withUnsafeBufferPointer { buffer throws(ProtocolError) in try ClientMessage.decode(buffer) }
    }

    func error(_ text: String) -> ProtocolError? {
        do { _ = try decode(text); return nil } catch { return error }
    }

    func testDecodesJoinIntentAndLeave() throws {
        guard case let .join(join) = try decode(#"{"type":"join","room":"demo","name":"Ann","since":{"epoch":"e","version":3},"id":"j"}"#) else {
            return XCTFail("not a join")
        }
        XCTAssertEqual(join.room, "demo")
        XCTAssertEqual(join.name, "Ann")
        XCTAssertEqual(join.since, ResumePoint(epoch: "e", version: 3))
        XCTAssertEqual(join.id, .string("j"))
        guard case let .intent(intent) = try decode(#"{"type":"intent","id":7,"room":"demo","control":"q","intent":"set","args":{"value":5}}"#) else {
            return XCTFail("not an intent")
        }
        XCTAssertEqual(intent.id, .int(7))
        XCTAssertEqual(intent.args["value"], 5)
        XCTAssertEqual(try decode(#"{"type":"leave","room":"demo"}"#), .leave(room: "demo", id: nil))
    }

    /// One rule for `null`: an optional field set to null is absent, everywhere; a required one is missing.
    /// And an integer field takes an integer only (issue 17: `4.0` was accepted as `since.version`).
    func testDecodesPresenceAndRefusesDataThatIsNotAnObjectOfShortKeys() throws {
        XCTAssertEqual(try decode(#"{"type":"presence","room":"demo","data":{"focus":"q","gone":null},"id":"p"}"#),
                       .presence(PresenceRequest(id: .string("p"), room: "demo", data: ["focus": "q", "gone": nil])))
        XCTAssertEqual(try decode(#"{"type":"presence","room":"demo","data":{}}"#), .presence(PresenceRequest(room: "demo", data: [:])))
        let long = String(repeating: "k", count: PresenceRequest.maxKeyLength + 1)
        for text in [#"{"type":"presence","room":"demo","id":1}"#, #"{"type":"presence","room":"demo","data":[],"id":1}"#,
                     #"{"type":"presence","room":"demo","data":null,"id":1}"#, #"{"type":"presence","room":"demo","data":{"":1},"id":1}"#,
                     #"{"type":"presence","room":"demo","data":{"\#(long)":1},"id":1}"#] {
            let error = self.error(text)
            XCTAssertEqual(error?.code, .invalidMessage, text)
            XCTAssertEqual(error?.id, .int(1), text)
            XCTAssertEqual(error?.room, "demo", text)
        }
    }

    func testDecodesClaimsWithTheirTargetAndAnUnclaimsReason() throws {
        XCTAssertEqual(try decode(#"{"type":"claim","room":"demo","control":"f"}"#), .claim(ClaimRequest(room: "demo", control: "f")))
        XCTAssertEqual(try decode(#"{"type":"unclaim","room":"demo","control":"f","target":"a.b","reason":"blur","id":3}"#),
                       .claim(ClaimRequest(id: .int(3), room: "demo", control: "f", target: "a.b", release: true, blur: true)))
        XCTAssertEqual(error(#"{"type":"unclaim","room":"demo","control":"f","reason":"later","id":3}"#)?.code, .invalidMessage)
        XCTAssertEqual(error(#"{"type":"claim","room":"demo","control":"f","target":"a..b","id":3}"#)?.code, .invalidMessage)
    }

    func testNullIsAbsentForEveryOptionalFieldAndIntegersAreIntegers() throws {
        guard case let .join(join) = try decode(#"{"type":"join","room":"demo","id":null,"name":null,"template":null,"token":null,"since":null}"#) else {
            return XCTFail("not a join")
        }
        XCTAssertEqual(join, JoinRequest(room: "demo"))
        XCTAssertEqual(try decode(#"{"type":"leave","room":"demo","id":null}"#), .leave(room: "demo", id: nil))
        guard case let .intent(intent) = try decode(#"{"type":"intent","id":1,"room":"demo","control":"q","intent":"next","args":null}"#) else {
            return XCTFail("not an intent")
        }
        XCTAssertEqual(intent.args, JSONObject())
        for text in [#"{"type":"intent","id":null,"room":"demo","control":"q","intent":"next"}"#,
                     #"{"type":"join","room":null}"#, #"{"type":null,"room":"demo"}"#,
                     #"{"type":"intent","id":1,"room":"demo","control":null,"intent":"next"}"#,
                     #"{"type":"intent","id":1,"room":"demo","control":"q","intent":null}"#,
                     #"{"type":"join","room":"demo","since":{"epoch":"e","version":4.0}}"#,
                     #"{"type":"join","room":"demo","since":{"epoch":"e","version":null}}"#] {
            XCTAssertEqual(error(text)?.code, .invalidMessage, text)
        }
    }

    func testEveryBadInputHasItsCode() {
        let cases: [(String, ErrorCode)] = [
            ("{", .invalidJSON), ("", .invalidJSON), ("[]", .invalidMessage), (#"{"room":"demo"}"#, .invalidMessage),
            (#"{"type":"join","room":"a","room":"b"}"#, .invalidJSON),
            (#"{"type":"intent","id":1,"room":"demo","control":"q","intent":"set","args":{"value":1,"value":2}}"#, .invalidJSON),
            (#"{"type":1}"#, .invalidMessage), (#"{"type":"nope"}"#, .unknownType), (#"{"type":"join"}"#, .invalidMessage),
            (#"{"type":"join","room":"a b"}"#, .invalidMessage), (#"{"type":"join","room":"demo","since":{"epoch":"e","version":-1}}"#, .invalidMessage),
            (#"{"type":"intent","room":"demo","control":"q","intent":"next"}"#, .invalidMessage),
            (#"{"type":"intent","id":"x","room":"demo","control":"q","intent":"next","args":3}"#, .invalidMessage),
            (#"{"type":"intent","id":"","room":"demo","control":"q","intent":"next"}"#, .invalidMessage),
            (#"{"type":"intent","id":"x","room":"demo","control":"q","intent":""}"#, .invalidMessage),
        ]
        for (text, code) in cases {
            XCTAssertEqual(error(text)?.code, code, text)
            XCTAssertFalse(error(text)?.message.isEmpty ?? true)
        }
    }

    func testErrorsCarryTheRequestIDWhenReadable() {
        XCTAssertEqual(error(#"{"type":"nope","id":"q1"}"#)?.id, .string("q1"))
        XCTAssertEqual(error(#"{"type":"join","id":9}"#)?.id, .int(9))
        XCTAssertNil(error(#"{"type":"nope","id":[1]}"#)?.id)
    }

    /// An error names the room whenever the message is a request for a valid room, whichever field was wrong; errors
    /// about the frame itself (its JSON, its type) and an invalid room name name none.
    func testErrorsNameTheRoomOfARequestWhateverFieldWasWrong() {
        let long = String(repeating: "n", count: 65)
        for text in [#"{"type":"intent","room":"demo","control":"bad name","intent":"next","id":"b1"}"#,
                     #"{"type":"intent","room":"demo","control":"quantity","intent":"next"}"#,
                     #"{"type":"claim","room":"demo","id":"c"}"#,
                     #"{"type":"join","room":"demo","id":"j","name":"\#(long)"}"#,
                     #"{"type":"join","room":"demo","id":"j","template":7}"#] {
            XCTAssertEqual(error(text)?.room, "demo", text)
        }
        for text in [#"{"type":"nope","room":"demo","id":"q"}"#, #"{"room":"demo","id":"q"}"#,
                     #"{"type":"join","room":"bad name","id":"j"}"#, #"{"type":"join","room":7,"id":"j"}"#] {
            XCTAssertNotNil(error(text), text)
            XCTAssertNil(error(text)?.room, text)
        }
    }

    func testServerMessagesEncodeTheDocumentedFields() throws {
        let ack = try JSONParser.parse(JSONWriter.string(ServerMessage.ack(id: .string("c1"), room: "demo", version: 4).json))
        XCTAssertEqual(ack, ["type": "ack", "id": "c1", "room": "demo", "version": 4])
        let error = ServerMessage.error(ProtocolError(.outOfRange, "too big", id: .int(3), room: "demo")).json
        XCTAssertEqual(error, ["type": "error", "id": 3, "room": "demo", "code": "out_of_range", "message": "too big"])
        let welcome = ServerMessage.welcome(session: "s1", serverTime: 1_764_331_200_000).json
        XCTAssertEqual(welcome, ["type": "welcome", "session": "s1", "protocol": "livecontrols.v1", "serverTime": 1_764_331_200_000])
    }

    func testDirectlyWrittenMessagesMatchTheGenericWriter() throws {
        let ops: [PatchOp] = [.replace(path: JSONPointer(["controls", "q\"x", "value"]), value: .int(11)),
                              .add(path: JSONPointer(["presence", "s1"]), value: ["name": .null, "holding": .array([])]),
                              .remove(path: JSONPointer(["a/b~c", "", "\u{1}é"])), .replace(path: .root, value: .double(1.5))]
        let messages: [ServerMessage] = [
            .ack(id: .int(42), room: "r-1", version: 7),
            .ack(id: .string("a\"b\\c\n"), room: "room.x", version: 0),
            .patch(room: "r-1", epoch: "e1", version: 3, ops: ops, cause: ["kind": "intent", "id": .int(42)]),
            .patch(room: "r-1", epoch: "e1", version: 4, ops: [], cause: nil),
            // Snapshots splice a state encoded once per version (`encodedSnapshot`): the same bytes, with or without
            // an id and `resumed`.
            .snapshot(room: "r\"1", epoch: "e1", version: 9, state: ["controls": ["q": ["value": 1.5]], "presence": [:]],
                      id: .string("j\n1"), resumed: false),
            .snapshot(room: "r-1", epoch: "e1", version: 0, state: [:], id: .int(7), resumed: true),
            .snapshot(room: "r-1", epoch: "e1", version: 3, state: ["a": .array([.null, true])], id: nil, resumed: nil),
        ]
        for message in messages {
            XCTAssertEqual(String(decoding: message.encoded(), as: UTF8.self), JSONWriter.string(message.json))
        }
    }
}
