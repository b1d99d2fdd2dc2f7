import LiveControlsEngine
@testable import LiveControlsRuntime
import XCTest

/// The ticker's times and a room's deadline after renewals fail, at exact instants (milliseconds from a renewal).
final class LeaseTimingTests: XCTestCase {
    private func at(_ ms: Int) -> Instant { Instant(nanoseconds: UInt64(10_000 + ms) * 1_000_000) }

    func testTimesFromTheDefaultLease() {
        let timing = LeaseTiming(lease: 3_000)
        XCTAssertEqual(timing.period, 1_000)
        XCTAssertEqual(timing.commandTimeout, 1_000)
        XCTAssertEqual(timing.retryDelay, 250)
        XCTAssertEqual(LeaseTiming(lease: 600_000).commandTimeout, 1_000, "at most 1 s")
        XCTAssertEqual(LeaseTiming(lease: 300).commandTimeout, 100, "at least 100 ms")
        XCTAssertEqual(LeaseTiming(lease: 300).retryDelay, 50)
    }

    func testARoomStopsARetryDelayBeforeItsLeaseCanLapse() {
        let timing = LeaseTiming(lease: 3_000)
        // Renewed at 0 (sent then; Redis set the lease later): the next renewal, sent at 1,000, times out at 2,000; the
        // room goes on while retries are made every 250 ms, until 2,750.
        XCTAssertEqual(timing.deadline(confirmed: at(0)), at(2_750))
        // A retry that succeeds, sent at 2,250, moves the deadline on.
        XCTAssertEqual(timing.deadline(confirmed: at(2_250)), at(5_000))
    }

    func testTheTestsOneSecondLease() {
        let timing = LeaseTiming(lease: 1_000)
        XCTAssertEqual(timing.period, 333)
        XCTAssertEqual(timing.commandTimeout, 333)
        XCTAssertEqual(timing.retryDelay, 83)
        XCTAssertEqual(timing.deadline(confirmed: at(0)), at(917))
    }
}
