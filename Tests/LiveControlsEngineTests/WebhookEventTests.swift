import LiveControlsEngine
import LiveControlsProtocol
import XCTest

/// Webhook configuration, the events a room's patches stand for, and Standard Webhooks signatures.
final class WebhookEventTests: XCTestCase {
    let today = CivilDate(year: 2026, month: 2, day: 28)

    func config(_ webhooks: JSONValue, interval: JSONValue? = nil) throws -> ServerConfig {
        var root: JSONObject = ["templates": ["t": ["controls": ["q": ["kind": "stepper"]]]], "webhooks": webhooks]
        if let interval { root["webhookChangeIntervalMs"] = interval }
        return try ServerConfig(json: .object(root), file: "c.json", today: today)
    }

    func testTheStandardWebhooksReferenceSignature() {
        // The example of the Standard Webhooks specification (also what its Python library computes).
        let key = Base64.decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")!
        XCTAssertEqual(WebhookEvent.signature(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestampSeconds: 1_614_265_330,
                                              body: Array(#"{"test": 2432232314}"#.utf8), key: key),
                       "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    func testBase64RoundTripsEveryLength() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            XCTAssertEqual(Base64.decode(Base64.encode(bytes)), bytes)
        }
        XCTAssertEqual(Base64.encode(Array("foobar".utf8)), "Zm9vYmFy")
        XCTAssertEqual(Base64.encode(Array("fo".utf8)), "Zm8=")
        XCTAssertNil(Base64.decode("Zm9v!"))
    }

    func testTimestampsAreISO8601InUTC() {
        XCTAssertEqual(WebhookEvent.iso8601(milliseconds: 0), "1970-01-01T00:00:00.000Z")
        XCTAssertEqual(WebhookEvent.iso8601(milliseconds: 1_614_265_330_007), "2021-02-25T15:02:10.007Z")
        XCTAssertEqual(WebhookEvent.iso8601(milliseconds: 1_795_789_805_123), "2026-11-27T14:30:05.123Z")
    }

    func testEndpointsAreReadAndCheckedFromTheConfig() throws {
        let secret = "whsec_" + Base64.encode(Array(repeating: 7, count: 32))
        let parsed = try config([["url": "https://hooks.example.com/lc", "events": ["form.completed", "room.*"], "secret": .string(secret),
                                  "maxAttempts": 3, "retryMs": 50]], interval: 250)
        let endpoint = try XCTUnwrap(parsed.webhooks.first)
        XCTAssertEqual(endpoint.key, Array(repeating: 7, count: 32))
        XCTAssertEqual(endpoint.maxAttempts, 3)
        XCTAssertEqual(endpoint.timeoutMs, WebhookEndpoint.defaultTimeoutMs)
        XCTAssertEqual(parsed.webhookChangeIntervalMs, 250)
        XCTAssertTrue(endpoint.wants("room.created") && endpoint.wants("form.completed"))
        XCTAssertFalse(endpoint.wants("member.joined"))

        func refused(_ entry: JSONValue, _ path: String) {
            XCTAssertThrowsError(try config([entry])) { XCTAssertEqual(($0 as? ConfigError)?.path, path, "\($0)") }
        }
        refused(["url": "ftp://x", "events": ["*"], "secret": .string(secret)], "/webhooks/0/url")
        refused(["url": "http://x.example", "events": ["room.renamed"], "secret": .string(secret)], "/webhooks/0/events/0")
        refused(["url": "http://x.example", "events": [], "secret": .string(secret)], "/webhooks/0/events")
        refused(["url": "http://x.example", "events": ["*"], "secret": "not-whsec"], "/webhooks/0/secret")
        refused(["url": "http://x.example", "events": ["*"], "secret": "whsec_c2hvcnQ="], "/webhooks/0/secret")
        refused(["url": "http://x.example", "events": ["*"], "secret": .string(secret), "maxAttempts": 0], "/webhooks/0/maxAttempts")
        refused(["url": "http://x.example", "events": ["*"], "secret": .string(secret), "retry": 1], "/webhooks/0/retry")
        XCTAssertThrowsError(try config([["url": "http://a.example", "events": ["*"], "secret": .string(secret)],
                                         ["url": "http://a.example", "events": ["*"], "secret": .string(secret)]]))
    }

    func testPatchesStandForMemberHoldFormAndWizardEvents() throws {
        let demo = ServerConfig.builtin(today: today).templates["demo"]!
        var room = Room(name: "r", template: demo, epoch: "e", historyLimit: 8)
        let joined = try XCTUnwrap(room.join(SessionID("sA"), name: "Ann", roles: ["admin"]).patch)
        XCTAssertEqual(room.webhookDrafts(for: joined), [WebhookDraft(type: "member.joined", data: [
            "room": "r", "epoch": "e", "version": 1, "session": "sA", "name": "Ann", "user": .null])])

        _ = try room.apply(control: ControlID("quantity"), intent: "press", args: ["direction": "next"], by: SessionID("sA"), requestID: nil,
                           at: .milliseconds(0))
        let left = try XCTUnwrap(room.leave(SessionID("sA"), reason: .disconnect).patch)
        XCTAssertEqual(room.webhookDrafts(for: left).map(\.type), ["member.left", "hold.ended"])
        XCTAssertEqual(room.webhookDrafts(for: left).last?.data["reason"], "disconnect")

        let completed = try XCTUnwrap(try room.applyAsServer([
            ServerIntent(control: ControlID("signup"), intent: "set", args: ["element": "account", "field": "email", "value": "a@b.org"]),
            ServerIntent(control: ControlID("signup"), intent: "set", args: ["element": "account", "field": "name", "value": "Ann"]),
            ServerIntent(control: ControlID("signup"), intent: "finish"), ServerIntent(control: ControlID("signup"), intent: "finish"),
            ServerIntent(control: ControlID("signup"), intent: "set", args: ["element": "terms", "field": "accept", "value": true]),
            ServerIntent(control: ControlID("signup"), intent: "finish"),
        ], at: .milliseconds(10)).patch)
        let form = try XCTUnwrap(room.webhookDrafts(for: completed).first)
        XCTAssertEqual(form.type, "form.completed")
        XCTAssertEqual(form.data["data"]?["account"]?["email"], "a@b.org")
        XCTAssertEqual(form.data["cause"]?["kind"], "server")

        let wizard = try XCTUnwrap(try room.applyAsServer([ServerIntent(control: ControlID("onboarding"), intent: "prev")], at: .milliseconds(20)).patch)
        XCTAssertEqual(room.webhookDrafts(for: wizard).map(\.type), ["wizard.exited"])
        XCTAssertEqual(wizard.touched.controls, ["onboarding"])
        XCTAssertFalse(wizard.touched.presence)
        XCTAssertTrue(joined.touched.presence)
    }
}
