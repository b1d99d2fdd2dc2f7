import LiveControlsRedis
import LiveControlsRedisTestSupport
@testable import LiveControlsRuntime
import XCTest

/// The ownership scripts against a real Redis: a lease is given up only by whoever holds it, and a release that names
/// a fence only for the lease taken with it.
final class ClusterScriptsTests: XCTestCase {
    private var redis: RedisTestServer!
    private var connection: RedisConnection!
    private let lease = "lc:lease:demo", fence = "lc:fence:demo", state = "lc:state:demo"

    override func setUpWithError() throws {
        redis = try RedisTestServer()
        connection = RedisConnection(endpoint: redis.endpoint)
    }

    override func tearDown() {
        connection.close()
        redis = nil
    }

    private func acquire(_ node: String) throws -> Int64 {
        try connection.eval(ClusterScripts.acquire, keys: [lease, fence, state], args: [Array(node.utf8), Array("60000".utf8)]).integer ?? -1
    }

    private func release(_ node: String, fence token: Int64?) throws -> Int64 {
        try connection.eval(ClusterScripts.release, keys: [lease, fence],
                            args: [Array(node.utf8), Array((token.map(String.init) ?? "").utf8)]).integer ?? -1
    }

    private var holder: String? { (try? connection.command(["GET", lease]))?.text }

    func testAReleaseQueuedByAnEndedOwnershipLeavesTheLeaseTakenAgain() throws {
        let first = try acquire("n0")
        XCTAssertEqual(try release("n0", fence: nil), 1, "a release without a fence gives up this node's lease")
        let second = try acquire("n0")
        XCTAssertGreaterThan(second, first)
        // The first ownership's release, queued behind its writes, arrives now: the lease is the second's.
        XCTAssertEqual(try release("n0", fence: first), 0)
        XCTAssertEqual(holder, "n0")
        XCTAssertEqual(try release("n0", fence: second), 1)
        XCTAssertNil(holder)
    }

    func testOnlyTheHolderReleases() throws {
        let token = try acquire("n1")
        XCTAssertEqual(try release("n0", fence: nil), 0)
        XCTAssertEqual(try release("n0", fence: token), 0)
        XCTAssertEqual(holder, "n1")
    }
}
