@testable import LiveControlsRuntime
import XCTest

/// `GET /metrics`' text as swift-prometheus renders it: exact counters, a lateness histogram over every tick
/// since start, gauges set at scrape time, and one registry per instance.
final class ServerMetricsTests: XCTestCase {
    /// Sample name (with labels) → value; fails on a sample that appears twice.
    func samples(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> [String: String] {
        var samples: [String: String] = [:]
        for sample in text.split(separator: "\n") where !sample.hasPrefix("#") {
            let parts = sample.split(separator: " ")
            XCTAssertEqual(parts.count, 2, "\(sample)", file: file, line: line)
            XCTAssertNil(samples.updateValue(String(parts[1]), forKey: String(parts[0])), "\(sample) twice", file: file, line: line)
        }
        return samples
    }

    func testCountersCountEachCallExactly() {
        let metrics = ServerMetrics()
        metrics.intent(refused: false)
        metrics.intent(refused: false)
        metrics.intent(refused: true)
        metrics.patch()
        metrics.patch()
        metrics.roomLoaded()
        metrics.roomUnloaded()
        metrics.roomUnloaded()
        let text = metrics.exposition(connections: 0, rooms: 0, uptimeSeconds: 0)
        let values = samples(text)
        XCTAssertEqual(values["livecontrols_intents_total"], "3")
        XCTAssertEqual(values["livecontrols_intents_refused_total"], "1")
        XCTAssertEqual(values["livecontrols_patches_total"], "2")
        XCTAssertEqual(values["livecontrols_rooms_loaded_total"], "1")
        XCTAssertEqual(values["livecontrols_rooms_unloaded_total"], "2")
        XCTAssertEqual(values["livecontrols_hold_ticks_total"], "0")
        XCTAssertTrue(text.contains("# TYPE livecontrols_intents_total counter\n"))
        XCTAssertTrue(text.contains("# HELP livecontrols_intents_total Intents received.\n"))
    }

    func testHoldTickLatenessIsAHistogramOfEveryTick() {
        let metrics = ServerMetrics()
        metrics.tick(lateNanoseconds: 30_000)          // 30 µs: the first bucket
        metrics.tick(lateNanoseconds: 120_000)         // 120 µs
        metrics.tick(lateNanoseconds: 800_000)         // 800 µs
        metrics.tick(lateNanoseconds: 2_000_000_000)   // 2 s: past the last bound, +Inf only
        let text = metrics.exposition(connections: 0, rooms: 0, uptimeSeconds: 0)
        let values = samples(text)
        let name = "livecontrols_hold_tick_lateness_seconds"
        XCTAssertTrue(text.contains("# TYPE \(name) histogram\n"))
        XCTAssertEqual(values["livecontrols_hold_ticks_total"], "4")
        XCTAssertEqual(values["\(name)_count"], "4")
        XCTAssertEqual(values["\(name)_sum"], "2.00095")
        let expected: [(le: String, count: String)] = [
            ("0.00005", "1"), ("0.0001", "1"), ("0.00015", "2"), ("0.0002", "2"), ("0.0003", "2"), ("0.0005", "2"),
            ("0.00075", "2"), ("0.001", "3"), ("0.0025", "3"), ("0.005", "3"), ("0.01", "3"), ("0.025", "3"),
            ("0.05", "3"), ("0.1", "3"), ("0.25", "3"), ("0.5", "3"), ("1.0", "3"), ("+Inf", "4"),
        ]
        for (le, count) in expected {
            XCTAssertEqual(values["\(name)_bucket{le=\"\(le)\"}"], count, "le=\(le)")
        }
        XCTAssertEqual(values.keys.filter { $0.hasPrefix("\(name)_bucket") }.count, expected.count)
        XCTAssertEqual(ServerMetrics.latenessBuckets.count + 1, expected.count)
    }

    func testGaugesShowWhatTheScrapePassed() {
        let metrics = ServerMetrics()
        XCTAssertEqual(samples(metrics.exposition(connections: 3, rooms: 2, uptimeSeconds: 61))["livecontrols_connections"], "3.0")
        let values = samples(metrics.exposition(connections: 1, rooms: 5, uptimeSeconds: 62))
        XCTAssertEqual(values["livecontrols_connections"], "1.0")
        XCTAssertEqual(values["livecontrols_rooms"], "5.0")
        XCTAssertEqual(values["livecontrols_uptime_seconds"], "62.0")
        XCTAssertTrue(metrics.exposition(connections: 0, rooms: 0, uptimeSeconds: 0).contains("# TYPE livecontrols_rooms gauge\n"))
    }

    func testEachInstanceCountsOnItsOwn() {
        let first = ServerMetrics()
        let second = ServerMetrics()
        first.patch()
        first.tick(lateNanoseconds: 1_000)
        let values = samples(second.exposition(connections: 0, rooms: 0, uptimeSeconds: 0))
        XCTAssertEqual(values["livecontrols_patches_total"], "0")
        XCTAssertEqual(values["livecontrols_hold_tick_lateness_seconds_count"], "0")
        XCTAssertEqual(samples(first.exposition(connections: 0, rooms: 0, uptimeSeconds: 0))["livecontrols_patches_total"], "1")
    }

    func testCountersLoseNothingUnderConcurrentIncrements() {
        let metrics = ServerMetrics()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for i in 0..<10_000 {
                metrics.intent(refused: i % 10 == 0)
                metrics.patch()
            }
        }
        let values = samples(metrics.exposition(connections: 0, rooms: 0, uptimeSeconds: 0))
        XCTAssertEqual(values["livecontrols_intents_total"], "80000")
        XCTAssertEqual(values["livecontrols_intents_refused_total"], "8000")
        XCTAssertEqual(values["livecontrols_patches_total"], "80000")
    }

    func testClusterLinesCountAndShowTheScrapeTimeGauges() {
        let cluster = ClusterMetrics()
        cluster.forwarded()
        cluster.forwarded()
        cluster.tookOver()
        cluster.relinquished()
        cluster.timedOut()
        let lines = cluster.lines(redisUp: true, ownedRooms: 4)
        XCTAssertFalse(lines.contains(""), "no empty lines")
        let values = samples(lines.joined(separator: "\n"))
        XCTAssertEqual(values["livecontrols_cluster_forwarded_total"], "2")
        XCTAssertEqual(values["livecontrols_cluster_takeovers_total"], "1")
        XCTAssertEqual(values["livecontrols_cluster_relinquished_total"], "1")
        XCTAssertEqual(values["livecontrols_cluster_request_timeouts_total"], "1")
        XCTAssertEqual(values["livecontrols_cluster_redis_up"], "1.0")
        XCTAssertEqual(values["livecontrols_cluster_owned_rooms"], "4.0")
        XCTAssertEqual(samples(cluster.lines(redisUp: false, ownedRooms: 0).joined(separator: "\n"))["livecontrols_cluster_redis_up"], "0.0")
    }
}
