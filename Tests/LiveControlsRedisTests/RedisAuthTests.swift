@testable import LiveControlsRedis
import LiveControlsRedisTestSupport
import Synchronization
import XCTest

/// A Redis with `requirepass`: the connection and the subscriber authenticate on every (re)connect; a wrong
/// password is a connection failure, never a silently unauthenticated session.
final class RedisAuthTests: XCTestCase {
    func testCommandsAuthenticateAndAWrongPasswordFails() throws {
        let server = try RedisTestServer(password: "pa ss")
        let good = RedisConnection(endpoint: server.endpoint)
        XCTAssertEqual(try good.command(["SET", "k", "v"]), .status("OK"))
        XCTAssertEqual(try good.command(["GET", "k"]).text, "v")

        var anonymous = server.endpoint
        anonymous.password = nil
        let refused = try RedisConnection(endpoint: anonymous).command(["GET", "k"])
        guard case let .error(message) = refused else { return XCTFail("no password: \(refused)") }
        XCTAssertTrue(message.hasPrefix("NOAUTH"), message)

        var wrong = server.endpoint
        wrong.password = "nope"
        let bad = RedisConnection(endpoint: wrong)
        XCTAssertThrowsError(try bad.command(["GET", "k"])) { error in
            XCTAssertEqual((error as? RedisError)?.kind, .connection)
            XCTAssertTrue("\(error)".contains("AUTH failed"), "\(error)")
            XCTAssertFalse("\(error)".contains("nope"), "the password is not in the message")
        }
    }

    func testTheSubscriberAuthenticatesAndAWrongPasswordNeverSubscribes() throws {
        let server = try RedisTestServer(password: "s3cret")
        let events = SubscriberEvents()
        let subscriber = events.subscriber(server.endpoint, channels: ["c"])
        subscriber.start()
        defer { subscriber.stop() }
        waitUntil("subscribed") { events.connections == [true] }
        XCTAssertEqual(try RedisConnection(endpoint: server.endpoint).command(["PUBLISH", "c", "hello"]).integer, 1)
        waitUntil("the message") { events.messages.map(\.payload) == ["hello"] }

        var wrong = server.endpoint
        wrong.password = "nope"
        let other = SubscriberEvents()
        let refused = other.subscriber(wrong, channels: ["c"], pingIntervalMilliseconds: 100)
        refused.start()
        defer { refused.stop() }
        // The good subscriber sees the publication below; the refused one is never subscribed to get it.
        XCTAssertEqual(try RedisConnection(endpoint: server.endpoint).command(["PUBLISH", "c", "again"]).integer, 1)
        waitUntil("the second message") { events.messages.count == 2 }
        XCTAssertFalse(other.connections.contains(true))
        XCTAssertTrue(other.messages.isEmpty)
    }
}
