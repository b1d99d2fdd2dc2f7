@testable import LiveControlsTransport
import LiveControlsEngine
import XCTest

/// The keepalive's decisions on a manual clock (ping after 30 s of silence, drop after 60 s): exact instants.
final class KeepaliveTests: XCTestCase {
    func sweep(_ k: inout Keepalive, at seconds: Int) -> Keepalive.Action {
        k.sweep(now: .milliseconds(seconds * 1000), pingIntervalMilliseconds: 30_000, idleTimeoutMilliseconds: 60_000)
    }

    func testASilentConnectionIsPingedOnceThenDroppedAtTheIdleTimeout() {
        var k = Keepalive(now: .milliseconds(0))
        XCTAssertEqual(sweep(&k, at: 29), .none)
        XCTAssertEqual(sweep(&k, at: 30), .ping)
        XCTAssertTrue(k.pingDue)
        XCTAssertEqual(sweep(&k, at: 31), .none, "one ping per silence")
        XCTAssertEqual(sweep(&k, at: 59), .none)
        XCTAssertEqual(sweep(&k, at: 60), .drop)
    }

    func testAnyFrameHeardRestartsTheSilence() {
        var k = Keepalive(now: .milliseconds(0))
        XCTAssertEqual(sweep(&k, at: 30), .ping)
        k.heard = true  // the pong (or any message)
        XCTAssertEqual(sweep(&k, at: 31), .none)
        XCTAssertFalse(k.heard)
        XCTAssertEqual(sweep(&k, at: 60), .none, "silent 29 s since it was heard")
        XCTAssertEqual(sweep(&k, at: 61), .ping, "a new silence gets its own ping")
        XCTAssertEqual(sweep(&k, at: 91), .drop)
    }

    func testALateSweepPingsBeforeItDrops() {
        // The sweep runs about once a second: one that first looks at a silent connection past the idle timeout
        // pings it, and drops it only once it has had idleTimeout − pingInterval to answer.
        var k = Keepalive(now: .milliseconds(0))
        XCTAssertEqual(sweep(&k, at: 61), .ping)
        XCTAssertEqual(sweep(&k, at: 62), .none)
        XCTAssertEqual(sweep(&k, at: 90), .none)
        XCTAssertEqual(sweep(&k, at: 91), .drop)
    }

    func testAClientThatKeepsSendingIsNeverPinged() {
        var k = Keepalive(now: .milliseconds(0))
        for second in 1...300 {
            k.heard = true
            XCTAssertEqual(sweep(&k, at: second), .none)
        }
    }

    func testAConnectionStillClosingAfterTheIdleTimeoutIsDropped() {
        var k = Keepalive(now: .milliseconds(0))
        XCTAssertEqual(k.sweepClosing(now: .milliseconds(5_000), idleTimeoutMilliseconds: 60_000), .none)
        XCTAssertEqual(k.sweepClosing(now: .milliseconds(64_999), idleTimeoutMilliseconds: 60_000), .none)
        XCTAssertEqual(k.sweepClosing(now: .milliseconds(65_000), idleTimeoutMilliseconds: 60_000), .drop)
    }
}
