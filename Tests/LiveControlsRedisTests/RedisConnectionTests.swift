import LiveControlsRedis
import LiveControlsRedisTestSupport
import XCTest

final class RedisConnectionTests: XCTestCase {
    private var server: RedisTestServer!
    private var redis: RedisConnection!

    override func setUpWithError() throws {
        server = try RedisTestServer()
        redis = RedisConnection(endpoint: server.endpoint)
    }

    override func tearDown() {
        redis?.close()
        redis = nil
        server = nil
    }

    func testConnectsLazilyOnTheFirstCommand() throws {
        XCTAssertFalse(redis.isConnected)
        XCTAssertEqual(try redis.command(["PING"]), .status("PONG"))
        XCTAssertTrue(redis.isConnected)
        redis.close()
        XCTAssertFalse(redis.isConnected)
        XCTAssertEqual(try redis.command(["PING"]), .status("PONG"))
    }

    func testBinaryValuesWithNULBytesRoundTrip() throws {
        let key: [UInt8] = [0x6B, 0x00, 0xFF, 0x0A]
        let value: [UInt8] = [0, 1, 2, 0, 255, 13, 10, 0] + Array(repeating: 0, count: 1000)
        XCTAssertEqual(try redis.command(bytes: [Array("SET".utf8), key, value]), .status("OK"))
        XCTAssertEqual(try redis.command(bytes: [Array("GET".utf8), key]).bytes, value)
        XCTAssertEqual(try redis.command(bytes: [Array("STRLEN".utf8), key]).integer, Int64(value.count))
        XCTAssertEqual(try redis.command(bytes: [Array("SET".utf8), Array("empty".utf8), []]), .status("OK"))
        XCTAssertEqual(try redis.command(["GET", "empty"]), .string([]))
    }

    func testIntegerNullErrorAndArrayReplies() throws {
        XCTAssertEqual(try redis.command(["INCRBY", "n", "41"]), .integer(41))
        XCTAssertEqual(try redis.command(["INCR", "n"]).integer, 42)
        XCTAssertEqual(try redis.command(["GET", "missing"]), .null)
        XCTAssertEqual(try redis.command(["SET", "n", "x", "NX"]), .null)  // a lost SET NX
        XCTAssertEqual(try redis.command(["RPUSH", "list", "a", "b", "c"]), .integer(3))
        XCTAssertEqual(try redis.command(["LRANGE", "list", "0", "-1"]), .array([.string([97]), .string([98]), .string([99])]))
        XCTAssertEqual(try redis.command(["MGET", "list", "missing", "n"]), .array([.null, .null, .string(Array("42".utf8))]))
        guard case .error(let message) = try redis.command(["LPUSH", "n", "x"]) else { return XCTFail("no error") }
        XCTAssertTrue(message.hasPrefix("WRONGTYPE"), message)
        guard case .error(let unknown) = try redis.command(["NOSUCHCOMMAND"]) else { return XCTFail("no error") }
        XCTAssertTrue(unknown.hasPrefix("ERR"), unknown)
        XCTAssertTrue(redis.isConnected, "a server error leaves the connection usable")
        XCTAssertEqual(try redis.command(["GET", "n"]).text, "42")
        XCTAssertEqual(try redis.command(["PING"]).text, "PONG")
    }

    func testEmptyCommandThrowsProtocolError() {
        XCTAssertThrowsError(try redis.command([])) { XCTAssertEqual(($0 as? RedisError)?.kind, .protocolError) }
        XCTAssertThrowsError(try redis.pipeline([[]])) { XCTAssertEqual(($0 as? RedisError)?.kind, .protocolError) }
        XCTAssertEqual(try redis.pipeline([]), [])
    }

    func testPipelineReturnsEveryReplyInOrder() throws {
        var commands: [[[UInt8]]] = []
        var expected: [RedisReply] = []
        for i in 0..<1000 {
            commands.append(["RPUSH", "order", String(i)].map { Array($0.utf8) })
            expected.append(.integer(Int64(i + 1)))
            if i == 500 {
                commands.append([Array("INCR".utf8), Array("order".utf8)])  // a server error mid-batch
                expected.append(.error("WRONGTYPE Operation against a key holding the wrong kind of value"))
            }
        }
        commands.append(["LINDEX", "order", "999"].map { Array($0.utf8) })
        expected.append(.string(Array("999".utf8)))
        XCTAssertEqual(try redis.pipeline(commands), expected)
    }

    func testEvalUsesTheScriptCacheAndRecoversFromNoScript() throws {
        let script = RedisScript("return redis.call('INCRBY', KEYS[1], ARGV[1])")
        XCTAssertEqual(try redis.eval(script, keys: ["counter"], args: [Array("5".utf8)]), .integer(5))
        let sha = try XCTUnwrap(try redis.command(["SCRIPT", "LOAD", script.source]).text)
        XCTAssertEqual(try redis.command(["SCRIPT", "EXISTS", sha]), .array([.integer(1)]))

        XCTAssertEqual(try redis.command(["SCRIPT", "FLUSH"]), .status("OK"))  // as after a Redis restart
        XCTAssertEqual(try redis.eval(script, keys: ["counter"], args: [Array("2".utf8)]), .integer(7))
        XCTAssertEqual(try redis.command(["SCRIPT", "EXISTS", sha]), .array([.integer(1)]), "EVAL cached it again")
        XCTAssertEqual(try redis.eval(script, keys: ["counter"], args: [Array("1".utf8)]), .integer(8))

        try server.restart()  // empty script cache, and the connection is dead
        XCTAssertThrowsError(try redis.command(["PING"]))
        redis.reconnectIntervalMilliseconds = 0
        XCTAssertEqual(try redis.eval(script, keys: ["counter"], args: [Array("3".utf8)]), .integer(3))
    }

    func testEvalReturnsScriptErrorsAsReplies() throws {
        guard case .error(let syntax) = try redis.eval(RedisScript("return +"), keys: [], args: []) else {
            return XCTFail("a script that does not compile is a server error")
        }
        XCTAssertTrue(syntax.contains("Error compiling script"), syntax)
        let raising = RedisScript("return redis.error_reply('NOPE no lease')")
        XCTAssertEqual(try redis.eval(raising, keys: [], args: []), .error("NOPE no lease"))
        let binary = RedisScript("return ARGV[1]")
        XCTAssertEqual(try redis.eval(binary, keys: [], args: [[0, 1, 0]]), .string([0, 1, 0]))
    }

    func testSelectsTheDatabaseOnEveryConnect() throws {
        let db3 = RedisConnection(endpoint: RedisEndpoint(host: "127.0.0.1", port: server.port, database: 3))
        XCTAssertEqual(try db3.command(["SET", "where", "three"]), .status("OK"))
        XCTAssertEqual(try redis.command(["GET", "where"]), .null)
        db3.close()
        XCTAssertEqual(try db3.command(["GET", "where"]).text, "three")
        XCTAssertEqual(try redis.command(["SELECT", "3"]), .status("OK"))
        XCTAssertEqual(try redis.command(["GET", "where"]).text, "three")
    }

    func testNamesEveryConnectionAndGoesOnUnnamedWhereNamingIsDenied() throws {
        var named = server.endpoint
        named.clientName = "livecontrols:n1:store"
        let connection = RedisConnection(endpoint: named)
        XCTAssertEqual(try connection.command(["CLIENT", "GETNAME"]).text, "livecontrols:n1:store")
        connection.close()
        XCTAssertEqual(try connection.command(["CLIENT", "GETNAME"]).text, "livecontrols:n1:store", "named again on reconnect")

        // An ACL user that may not use CLIENT: the connection still works, unnamed.
        XCTAssertEqual(try redis.command(["ACL", "SETUSER", "limited", "on", ">pw", "~*", "+@all", "-client"]), .status("OK"))
        var limited = named
        limited.username = "limited"
        limited.password = "pw"
        let denied = RedisConnection(endpoint: limited)
        XCTAssertEqual(try denied.command(["SET", "k", "v"]), .status("OK"))
        XCTAssertTrue(try redis.command(["CLIENT", "LIST"]).text?.split(separator: "\n")
            .contains { $0.contains("user=limited") && $0.contains("name= ") } == true, "unnamed")
    }

    func testConnectionRefusedFailsFastWithinTheReconnectIntervalThenRecovers() throws {
        server.stop()
        redis.reconnectIntervalMilliseconds = 60_000
        XCTAssertThrowsError(try redis.command(["PING"])) { error in
            XCTAssertEqual((error as? RedisError)?.kind, .connection)
            XCTAssertTrue("\(error)".contains("refused"), "\(error)")
        }
        try server.start()
        // Redis is back, but the interval has not passed: no connect is tried, the command fails at once.
        let (error, seconds) = timed { Result { try redis.command(["PING"]) } }
        XCTAssertLessThan(seconds, 0.05)
        guard case .failure(let failure) = error else { return XCTFail("connected within the reconnect interval") }
        XCTAssertEqual((failure as? RedisError)?.kind, .connection)
        XCTAssertFalse(redis.isConnected)

        redis.reconnectIntervalMilliseconds = 20
        waitUntil("a reconnect after the interval") { (try? redis.command(["PING"])) == .status("PONG") }
        XCTAssertTrue(redis.isConnected)
    }

    func testServerRestartFailsOneCommandThenReconnectsOnTheSamePort() throws {
        XCTAssertEqual(try redis.command(["SET", "k", "v"]), .status("OK"))
        try server.restart()
        // The old context sees the closed socket (or a broken pipe; SIGPIPE is ignored).
        XCTAssertThrowsError(try redis.pipeline([[Array("PING".utf8)], [Array("PING".utf8)]])) {
            XCTAssertEqual(($0 as? RedisError)?.kind, .connection)
        }
        XCTAssertFalse(redis.isConnected)
        waitUntil("a reconnect") { (try? redis.command(["PING"])) == .status("PONG") }
        XCTAssertEqual(try redis.command(["GET", "k"]), .null, "no persistence: the restart emptied Redis")
    }

    func testCommandTimeoutIsHonouredAndStillAfterAReconnect() throws {
        let slow = RedisConnection(endpoint: server.endpoint, timeoutMilliseconds: 200)
        slow.reconnectIntervalMilliseconds = 0
        for attempt in 1...2 {  // the second BLPOP runs on a new context
            let (result, seconds) = timed { Result { try slow.command(["BLPOP", "nothing", "5"]) } }
            guard case .failure(let error) = result else { return XCTFail("BLPOP returned \(result)") }
            XCTAssertEqual((error as? RedisError)?.kind, .connection, "attempt \(attempt)")
            XCTAssertGreaterThanOrEqual(seconds, 0.15, "attempt \(attempt)")
            XCTAssertLessThan(seconds, 1.0, "attempt \(attempt)")
            XCTAssertFalse(slow.isConnected)
        }
        // After a server restart too.
        try server.restart()
        _ = try? slow.command(["PING"])
        XCTAssertEqual(try slow.command(["PING"]), .status("PONG"))
        let (_, seconds) = timed { Result { try slow.command(["BLPOP", "nothing", "5"]) } }
        XCTAssertLessThan(seconds, 1.0)
    }

    func testHungServerTimesOutCommands() throws {
        let owner = RedisConnection(endpoint: server.endpoint, timeoutMilliseconds: 300)
        XCTAssertEqual(try owner.command(["PING"]), .status("PONG"))
        server.pause()
        defer { server.resume() }
        let (result, seconds) = timed { Result { try owner.command(["PING"]) } }
        guard case .failure = result else { return XCTFail("a frozen server answered") }
        XCTAssertLessThan(seconds, 1.0)
    }
}
