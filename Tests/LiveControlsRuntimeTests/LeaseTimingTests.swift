import LiveControlsEngine
@testable import LiveControlsRuntime
import XCTest

/// The ticker's rule for a renewal that failed, at exact instants (milliseconds from a confirmed renewal).
final class LeaseTimingTests: XCTestCase {
    private func at(_ ms: Int) -> Instant { Instant(nanoseconds: UInt64(10_000 + ms) * 1_000_000) }

    func testTimesFromTheDefaultLease() {
        let timing = LeaseTiming(lease: 3_000)
        XCTAssertEqual(timing.period, 1_000)
        XCTAssertEqual(timing.commandTimeout, 750, "shorter than the period: a failed renewal leaves time for a retry")
        XCTAssertEqual(timing.retryDelay, 250)
        XCTAssertEqual(LeaseTiming(lease: 600_000).commandTimeout, 1_000, "at most 1 s")
        XCTAssertEqual(LeaseTiming(lease: 300).commandTimeout, 100, "at least 100 ms")
    }

    func testOneFailedRenewalIsRetriedBeforeTheLeaseLapses() {
        let timing = LeaseTiming(lease: 3_000)
        // Renewed at 0; the next renewal is sent at 1,000 and times out at 1,750: its retry at 2,000 is answered by
        // 2,750, before the lease (3,000) lapses.
        XCTAssertTrue(timing.outlasts(confirmed: at(0), now: at(1_750)))
        // The retry times out too (2,750): another retry could come only after the lease ends.
        XCTAssertFalse(timing.outlasts(confirmed: at(0), now: at(2_750)))
        // The last instant a failure still waits for a retry: 3,000 − 250 − 750.
        XCTAssertTrue(timing.outlasts(confirmed: at(0), now: at(1_999)))
        XCTAssertFalse(timing.outlasts(confirmed: at(0), now: at(2_000)))
    }

    func testTheTestsOneSecondLeaseToleratesOneFailure() {
        let timing = LeaseTiming(lease: 1_000)
        XCTAssertEqual(timing.period, 333)
        XCTAssertEqual(timing.commandTimeout, 250)
        XCTAssertEqual(timing.retryDelay, 83)
        XCTAssertTrue(timing.outlasts(confirmed: at(0), now: at(333 + 250)))
        XCTAssertFalse(timing.outlasts(confirmed: at(0), now: at(333 + 250 + 83 + 250)))
    }

    func testTheShortestLeaseGivesRoomsUpAtTheFirstFailure() {
        // 300 ms: renewals every 100 ms, commands of up to 100 ms, retries after 50: no time for a retry.
        let timing = LeaseTiming(lease: 300)
        XCTAssertFalse(timing.outlasts(confirmed: at(0), now: at(100 + 100)))
    }
}
