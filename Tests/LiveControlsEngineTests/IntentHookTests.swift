import LiveControlsEngine
import LiveControlsProtocol
import XCTest

final class IntentHookTests: XCTestCase {
    let day = CivilDate(year: 2026, month: 11, day: 28)
    let secret = "whsec_" + Base64.encode(Array(repeating: 7, count: 32))

    func template(hooks: JSONValue) throws(ConfigError) -> RoomTemplate {
        let config: JSONValue = ["templates": ["t": [
            "controls": ["a": ["kind": "stepper", "min": 0, "max": 9], "list": ["kind": "list", "values": ["x", "y"]]],
            "hooks": hooks,
        ]]]
        return try ServerConfig(json: config, file: "c.json", today: day).templates["t"]!
    }

    func refusal(_ hooks: JSONValue) -> String {
        do {
            _ = try template(hooks: hooks)
            return "accepted"
        } catch {
            return "\(error.path): \(error.message)"
        }
    }

    func testAHookNamesItsControlsAndIntents() throws {
        let hook = try XCTUnwrap(try template(hooks: ["intent": ["url": "https://app.example/allow", "controls": ["a"], "intents": ["set", "next"],
                                                                 "secret": .string(secret), "timeoutMs": 800, "onError": "allow", "maxWaiting": 3]]).intentHook)
        XCTAssertTrue(hook.covers(ControlID("a"), "set"))
        XCTAssertFalse(hook.covers(ControlID("a"), "prev"))
        XCTAssertFalse(hook.covers(ControlID("list"), "set"))
        XCTAssertEqual(hook.timeoutMs, 800)
        XCTAssertEqual(hook.onError, .allow)
        XCTAssertEqual(hook.maxWaiting, 3)
        XCTAssertEqual(hook.key, Array(repeating: 7, count: 32))

        let everything = try XCTUnwrap(try template(hooks: ["intent": ["url": "http://localhost:9/x", "controls": "*", "secret": .string(secret)]]).intentHook)
        XCTAssertTrue(everything.covers(ControlID("list"), "move"))
        XCTAssertEqual(everything.onError, .deny)
        XCTAssertEqual(everything.timeoutMs, IntentHook.defaultTimeoutMs)
        XCTAssertNil(try template(hooks: [:]).intentHook)
    }

    func testEveryMistakeInAHookIsNamed() {
        let base: JSONObject = ["url": "https://app.example/allow", "controls": ["a"], "secret": .string(secret)]
        func with(_ key: String, _ value: JSONValue?) -> JSONValue {
            var o = base
            o[key] = value
            return ["intent": .object(o)]
        }
        XCTAssertEqual(refusal(with("controls", ["b"])), "/templates/t/hooks/intent/controls/0: no control \"b\" in this template (it has: a, list)")
        XCTAssertEqual(refusal(with("controls", nil)), "/templates/t/hooks/intent/controls: required: an array of control ids, or \"*\" for every control")
        XCTAssertEqual(refusal(with("controls", "a")), "/templates/t/hooks/intent/controls: must be an array of control ids, or \"*\" for every control")
        XCTAssertEqual(refusal(with("controls", [])), "/templates/t/hooks/intent/controls: name at least one control (or \"*\")")
        XCTAssertTrue(refusal(with("intents", ["move"])).hasPrefix("/templates/t/hooks/intent/intents/0: no hooked control has an intent \"move\" (they have: "), refusal(with("intents", ["move"])))
        XCTAssertEqual(refusal(with("onError", "retry")), "/templates/t/hooks/intent/onError: must be \"deny\" or \"allow\"")
        XCTAssertEqual(refusal(with("timeoutMs", 10)), "/templates/t/hooks/intent/timeoutMs: must be within 50…60000")
        XCTAssertEqual(refusal(with("maxWaiting", 0)), "/templates/t/hooks/intent/maxWaiting: must be within 1…10000")
        XCTAssertTrue(refusal(with("secret", "hunter2")).contains("must be whsec_"))
        XCTAssertEqual(refusal(with("url", "ftp://x.example/y")), "/templates/t/hooks/intent/url: must be an http:// or https:// URL")
        XCTAssertTrue(refusal(with("retries", 3)).contains("retries"), refusal(with("retries", 3)))
        XCTAssertTrue(refusal(["before": [:]]).contains("before"), refusal(["before": [:]]))
    }

    func testAnswersAreReadStrictly() throws {
        func verdict(_ text: String) -> String {
            do { return "\(try IntentHook.verdict(from: Array(text.utf8)))" } catch { return "error: \(error)" }
        }
        XCTAssertEqual(try IntentHook.verdict(from: Array(#"{"allow": true}"#.utf8)), .allow(args: nil))
        XCTAssertEqual(try IntentHook.verdict(from: Array(#"{"allow": true, "args": {"value": 4}, "note": 1}"#.utf8)), .allow(args: ["value": 4]))
        XCTAssertEqual(try IntentHook.verdict(from: Array(#"{"allow": false, "code": "full", "message": "The list is full"}"#.utf8)),
                       .deny(code: "full", message: "The list is full"))
        XCTAssertEqual(try IntentHook.verdict(from: Array(#"{"allow": false}"#.utf8)), .deny(code: nil, message: nil))
        XCTAssertEqual(verdict("yes"), "error: the answer is not JSON (unexpected character)")
        XCTAssertEqual(verdict("[]"), "error: the answer is not a JSON object")
        XCTAssertEqual(verdict(#"{"allow": "true"}"#), "error: the answer has no boolean \"allow\"")
        XCTAssertEqual(verdict(#"{"allow": true, "args": [1]}"#), "error: the answer's \"args\" is not an object")
        XCTAssertEqual(verdict(#"{"allow": false, "code": "two words"}"#), "error: the answer's \"code\" must be 1–64 characters of A–Z a–z 0–9 _ - . :")
        XCTAssertEqual(verdict(#"{"allow": false, "message": 5}"#), "error: the answer's \"message\" is not a string")
        let long = String(repeating: "é", count: 2_000)
        guard case let .deny(_, message?) = try IntentHook.verdict(from: Array(#"{"allow": false, "message": "\#(long)"}"#.utf8)) else { return XCTFail() }
        XCTAssertEqual(message.count, IntentHook.maxDenialMessage, "cut, with an ellipsis")
    }

    func testTheCallShowsTheMemberAndTheControlsState() throws {
        var room = Room(name: "r", template: try template(hooks: [:]), epoch: "e1", historyLimit: 8)
        _ = room.join(SessionID("s1"), name: "Ann", roles: ["editor"], user: "user-1")
        _ = try room.apply(control: ControlID("a"), intent: "set", args: ["value": 3], by: SessionID("s1"), requestID: nil, at: Instant(nanoseconds: 0))
        let (body, state) = try XCTUnwrap(room.hookRequest(control: ControlID("a"), intent: "next", args: [:], by: SessionID("s1")))
        XCTAssertEqual(body["type"], "intent.requested")
        XCTAssertEqual(body["member"], ["session": "s1", "name": "Ann", "roles": ["editor"], "sub": "user-1"])
        XCTAssertEqual(body["version"], .int(room.version))
        XCTAssertEqual(body["kind"], "stepper")
        XCTAssertEqual(state["value"], 3)
        XCTAssertEqual(room.controlState(ControlID("a")), state)
        XCTAssertNil(room.hookRequest(control: ControlID("a"), intent: "next", args: [:], by: SessionID("nobody")))
        XCTAssertNil(room.hookRequest(control: ControlID("zz"), intent: "next", args: [:], by: SessionID("s1")))
    }
}
