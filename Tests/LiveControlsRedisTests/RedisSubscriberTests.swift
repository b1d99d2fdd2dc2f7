@testable import LiveControlsRedis
import LiveControlsRedisTestSupport
import Synchronization
import XCTest

/// What a subscriber reported, in order, from its thread.
final class SubscriberEvents: Sendable {
    private let state = Mutex<(messages: [(channel: String, payload: String)], connections: [Bool], losses: [String])>(([], [], []))

    var messages: [(channel: String, payload: String)] { state.withLock { $0.messages } }
    var connections: [Bool] { state.withLock { $0.connections } }
    /// Why each lost connection ended.
    var losses: [String] { state.withLock { $0.losses } }

    func subscriber(
        _ endpoint: RedisEndpoint, channels: [String], patterns: [String] = [], pingIntervalMilliseconds: Int = 1000,
        answerTimeoutMilliseconds: Int? = nil
    ) -> RedisSubscriber {
        RedisSubscriber(
            endpoint: endpoint, channels: channels, patterns: patterns, pingIntervalMilliseconds: pingIntervalMilliseconds,
            answerTimeoutMilliseconds: answerTimeoutMilliseconds,
            onMessage: { channel, payload in
                self.state.withLock { $0.messages.append((channel, String(decoding: payload, as: UTF8.self))) }
            },
            onConnection: { connected, why in
                self.state.withLock {
                    $0.connections.append(connected)
                    if !connected { $0.losses.append(why ?? "") }
                }
            })
    }
}

final class RedisSubscriberTests: XCTestCase {
    private var server: RedisTestServer!
    private var publisher: RedisConnection!

    override func setUpWithError() throws {
        server = try RedisTestServer()
        publisher = RedisConnection(endpoint: server.endpoint)
        publisher.reconnectIntervalMilliseconds = 0
    }

    override func tearDown() {
        publisher = nil
        server = nil
    }

    func testChannelAndPatternMessagesArriveInPublishOrder() throws {
        let events = SubscriberEvents()
        let subscriber = events.subscriber(server.endpoint, channels: ["room:a", "room:b"], patterns: ["news.*"])
        subscriber.start()
        defer { subscriber.stop() }
        waitUntil("subscribed") { events.connections == [true] }

        var expected: [(channel: String, payload: String)] = []
        var commands: [[[UInt8]]] = []
        for i in 0..<1000 {
            let channel = ["room:a", "news.\(i % 7)", "room:b", "other"][i % 4]
            commands.append(["PUBLISH", channel, "m\(i)"].map { Array($0.utf8) })
            if channel != "other" { expected.append((channel, "m\(i)")) }
        }
        _ = try publisher.pipeline(Array(commands[..<500]))
        _ = try publisher.pipeline(Array(commands[500...]))
        waitUntil("\(expected.count) messages") { events.messages.count >= expected.count }
        let got = events.messages
        XCTAssertEqual(got.map(\.channel), expected.map(\.channel), "pmessage gives the channel, not the pattern")
        XCTAssertEqual(got.map(\.payload), expected.map(\.payload))
        XCTAssertEqual(events.connections, [true])
    }

    func testBinaryPayloadsAreDeliveredIntact() throws {
        let received = Mutex<[[UInt8]]>([])
        let connected = expectation(description: "subscribed")
        let subscriber = RedisSubscriber(
            endpoint: server.endpoint, channels: ["bin"], patterns: [],
            onMessage: { _, payload in received.withLock { $0.append(payload) } },
            onConnection: { up, _ in if up { connected.fulfill() } })
        subscriber.start()
        defer { subscriber.stop() }
        wait(for: [connected], timeout: 5)
        let payload: [UInt8] = [0, 255, 0, 10, 13] + Array(repeating: 7, count: 100_000)
        XCTAssertEqual(try publisher.command(bytes: [Array("PUBLISH".utf8), Array("bin".utf8), payload]), .integer(1))
        waitUntil("the payload") { !received.withLock { $0.isEmpty } }
        XCTAssertEqual(received.withLock { $0 }, [payload])
    }

    func testResubscribesEverythingAfterARedisRestart() throws {
        let events = SubscriberEvents()
        let subscriber = events.subscriber(server.endpoint, channels: ["room:a"], patterns: ["news.*"])
        subscriber.start()
        defer { subscriber.stop() }
        waitUntil("subscribed") { events.connections == [true] }

        try server.restart()
        waitUntil("lost and subscribed again") { events.connections == [true, false, true] }
        XCTAssertEqual(try publisher.command(["PUBLISH", "room:a", "after"]), .integer(1))
        XCTAssertEqual(try publisher.command(["PUBLISH", "news.x", "pattern after"]), .integer(1))
        waitUntil("both messages") { events.messages.count == 2 }
        XCTAssertEqual(events.messages.map(\.payload), ["after", "pattern after"])
        XCTAssertEqual(events.connections, [true, false, true])
    }

    func testReportsTheLossOnceWhileRedisStaysDown() throws {
        let events = SubscriberEvents()
        let subscriber = events.subscriber(server.endpoint, channels: ["room:a"])
        subscriber.start()
        defer { subscriber.stop() }
        waitUntil("subscribed") { events.connections == [true] }
        server.stop()
        let before = subscriber.connectAttempts.load(ordering: .relaxed)
        waitUntil("three failed reconnects") { subscriber.connectAttempts.load(ordering: .relaxed) >= before + 3 }
        XCTAssertEqual(events.connections, [true, false])
        try server.start()
        waitUntil("subscribed again") { events.connections == [true, false, true] }
    }

    func testNoPongFromAHungServerReconnectsAndResubscribes() throws {
        let events = SubscriberEvents()
        let subscriber = events.subscriber(server.endpoint, channels: ["room:a"], pingIntervalMilliseconds: 100)
        subscriber.start()
        defer { subscriber.stop() }
        waitUntil("subscribed") { events.connections == [true] }
        server.pause()
        waitUntil("no PONG noticed") { events.connections == [true, false] }
        XCTAssertTrue(events.losses[0].hasPrefix("no answer to PING for "), events.losses[0])
        server.resume()
        waitUntil("subscribed again") { events.connections == [true, false, true] }
        waitUntil("the publish arrives") {
            _ = try? publisher.command(["PUBLISH", "room:a", "thawed"])
            return events.messages.contains { $0.payload == "thawed" }
        }
    }

    /// PINGs go out after 50 ms of silence, but the connection counts as lost only after 5 s without an answer: a
    /// server that stops answering for 600 ms (a fork, a busy machine) keeps its subscriber (with the answer
    /// time-out equal to the ping interval, as before, it reconnected and every message meanwhile was lost).
    func testAPauseShorterThanTheAnswerTimeOutKeepsTheConnection() throws {
        let events = SubscriberEvents()
        let subscriber = events.subscriber(server.endpoint, channels: ["room:a"], pingIntervalMilliseconds: 50,
                                           answerTimeoutMilliseconds: 5_000)
        subscriber.start()
        defer { subscriber.stop() }
        waitUntil("subscribed") { events.connections == [true] }
        server.pause()
        Thread.sleep(forTimeInterval: 0.6)  // the pause itself: twelve ping intervals without an answer
        server.resume()
        waitUntil("the publish arrives") {
            _ = try? publisher.command(["PUBLISH", "room:a", "after the pause"])
            return events.messages.contains { $0.payload == "after the pause" }
        }
        XCTAssertEqual(events.connections, [true])
        XCTAssertEqual(subscriber.connectAttempts.load(ordering: .relaxed), 1)
    }

    func testStopReturnsPromptlyWhenConnected() throws {
        let events = SubscriberEvents()
        let subscriber = events.subscriber(server.endpoint, channels: ["room:a"])
        subscriber.start()
        waitUntil("subscribed") { events.connections == [true] }
        let (_, seconds) = timed { subscriber.stop() }
        XCTAssertLessThan(seconds, 1.0)
        waitUntil("Redis sees the connection closed") {
            (try? publisher.command(["PUBLISH", "room:a", "late"])) == .integer(0)
        }
        subscriber.stop()  // idempotent
        XCTAssertEqual(events.connections, [true, false])
    }

    func testStopReturnsPromptlyWhenRedisIsDown() throws {
        server.stop()
        let events = SubscriberEvents()
        let subscriber = events.subscriber(server.endpoint, channels: ["room:a"])
        subscriber.start()
        waitUntil("a few failed connects") { subscriber.connectAttempts.load(ordering: .relaxed) >= 4 }
        let (_, seconds) = timed { subscriber.stop() }
        XCTAssertLessThan(seconds, 1.0)
        XCTAssertEqual(events.connections, [])
    }

    func testStopBeforeStartAndStartAfterStopDoNothing() {
        let events = SubscriberEvents()
        let subscriber = events.subscriber(server.endpoint, channels: ["room:a"])
        subscriber.stop()
        subscriber.start()
        subscriber.stop()
        XCTAssertEqual(subscriber.connectAttempts.load(ordering: .relaxed), 0)
    }

    func testWithNothingToSubscribeAPongConfirmsTheConnection() {
        let events = SubscriberEvents()
        let subscriber = events.subscriber(server.endpoint, channels: [], pingIntervalMilliseconds: 50)
        subscriber.start()
        defer { subscriber.stop() }
        waitUntil("connected") { events.connections == [true] }
        let attempts = subscriber.connectAttempts.load(ordering: .relaxed)
        // Idle pings (every 50 ms) keep the connection: no reconnects while the server answers.
        waitUntil("five PINGs answered") { Self.pingCalls(publisher) >= 5 }
        XCTAssertEqual(subscriber.connectAttempts.load(ordering: .relaxed), attempts)
        XCTAssertEqual(events.connections, [true])
    }

    /// How many PINGs Redis has run (`INFO commandstats`: `cmdstat_ping:calls=N,…`).
    private static func pingCalls(_ redis: RedisConnection) -> Int {
        guard let info = (try? redis.command(["INFO", "commandstats"]))?.text,
              let line = info.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("cmdstat_ping:calls=") })
        else { return 0 }
        return Int(line.dropFirst("cmdstat_ping:calls=".count).prefix { $0.isNumber }) ?? 0
    }
}
