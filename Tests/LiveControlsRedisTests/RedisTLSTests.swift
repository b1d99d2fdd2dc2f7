@testable import LiveControlsRedis
import LiveControlsRedisTestSupport
import XCTest

/// Redis over TLS (`rediss://`): commands and the subscriber work through it; the server's certificate is always
/// checked (its CA, and the name of the host connected to or `serverName`); a server asking for a client
/// certificate gets one; plain and TLS never mix silently; bad certificate files are reported before any connect.
final class RedisTLSTests: XCTestCase {
    func testCommandsAndTheSubscriberWorkOverTLS() throws {
        let certificates = try TestCertificates()
        let server = try RedisTestServer(password: "tls pass", tls: certificates)
        let connection = RedisConnection(endpoint: server.endpoint)
        XCTAssertEqual(try connection.command(["SET", "k", "v"]), .status("OK"))
        XCTAssertEqual(try connection.command(["GET", "k"]).text, "v")

        let events = SubscriberEvents()
        let subscriber = events.subscriber(server.endpoint, channels: ["c"])
        subscriber.start()
        defer { subscriber.stop() }
        waitUntil("subscribed over TLS") { events.connections == [true] }
        // Bigger than one TLS record (16 KiB): the non-blocking reader puts records back together.
        let big = String(repeating: "x", count: 200_000)
        XCTAssertEqual(try connection.command(["PUBLISH", "c", "hello"]).integer, 1)
        XCTAssertEqual(try connection.command(["PUBLISH", "c", big]).integer, 1)
        waitUntil("both messages") { events.messages.map(\.payload) == ["hello", big] }
    }

    func testTheServerCertificateMustChainToTheCAAndNameTheHost() throws {
        let certificates = try TestCertificates()
        let server = try RedisTestServer(tls: certificates)

        var systemTrust = server.endpoint
        systemTrust.tls?.caCertificateFile = nil  // the test CA is in no system store
        assertRefused(systemTrust, because: "certificate was refused")

        var otherName = server.endpoint
        otherName.tls?.serverName = "redis.example"
        assertRefused(otherName, because: "hostname mismatch (checked for redis.example)")

        var byName = server.endpoint
        byName.host = "localhost"  // the certificate's DNS name
        XCTAssertEqual(try RedisConnection(endpoint: byName).command(["PING"]), .status("PONG"))
        var named = server.endpoint
        named.tls?.serverName = "localhost"
        XCTAssertEqual(try RedisConnection(endpoint: named).command(["PING"]), .status("PONG"))
    }

    func testAServerAskingForAClientCertificateGetsOne() throws {
        let certificates = try TestCertificates()
        let server = try RedisTestServer(tls: certificates, clientCertificates: true)
        XCTAssertEqual(try RedisConnection(endpoint: server.endpoint).command(["PING"]), .status("PONG"))

        var anonymous = server.endpoint
        anonymous.tls?.certificateFile = nil
        anonymous.tls?.keyFile = nil
        XCTAssertThrowsError(try RedisConnection(endpoint: anonymous, timeoutMilliseconds: 1000).command(["PING"])) { error in
            XCTAssertEqual((error as? RedisError)?.kind, .connection, "\(error)")
        }
    }

    func testPlainAndTLSNeverMix() throws {
        let certificates = try TestCertificates()
        let tlsServer = try RedisTestServer(tls: certificates)
        var plain = tlsServer.endpoint
        plain.tls = nil
        let (result, seconds) = timed { Result { try RedisConnection(endpoint: plain, timeoutMilliseconds: 1000).command(["PING"]) } }
        XCTAssertThrowsError(try result.get())
        XCTAssertLessThan(seconds, 3, "bounded by the timeout")

        let plainServer = try RedisTestServer()
        var tls = plainServer.endpoint
        tls.tls = RedisTLS(caCertificateFile: certificates.caCertificate)
        assertRefused(tls, because: "TLS")
    }

    func testBadCertificateFilesAreReportedBeforeAnyConnect() throws {
        let certificates = try TestCertificates()
        XCTAssertThrowsError(try RedisTLS(caCertificateFile: "/nonexistent/ca.pem").check()) { error in
            XCTAssertTrue("\(error)".contains("cannot read the CA certificates in /nonexistent/ca.pem"), "\(error)")
        }
        let mismatched = RedisTLS(certificateFile: certificates.clientCertificate, keyFile: certificates.serverKey)
        XCTAssertThrowsError(try mismatched.check()) { error in
            XCTAssertTrue("\(error)".contains("does not match"), "\(error)")
        }
        XCTAssertThrowsError(try RedisTLS(caCertificateFile: certificates.serverKey).check())  // a key, not certificates
        XCTAssertNoThrow(try RedisTLS(caCertificateFile: certificates.caCertificate, certificateFile: certificates.clientCertificate,
                                      keyFile: certificates.clientKey).check())
    }

    private func assertRefused(_ endpoint: RedisEndpoint, because reason: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try RedisConnection(endpoint: endpoint, timeoutMilliseconds: 1000).command(["PING"]), file: file, line: line) { error in
            XCTAssertEqual((error as? RedisError)?.kind, .connection, file: file, line: line)
            XCTAssertTrue("\(error)".contains(reason), "\(error)", file: file, line: line)
        }
    }
}
