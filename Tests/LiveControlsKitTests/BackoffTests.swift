import XCTest
@testable import LiveControlsKit

@MainActor
final class BackoffTests: XCTestCase {
    func testBackoffDoublesFromTheFirstDelayAndIsCapped() async {
        var configuration = LiveControlsClient.Configuration()
        configuration.reconnectDelay = .milliseconds(100)
        configuration.maxReconnectDelay = .seconds(1)
        let client = LiveControlsClient(url: URL(string: "ws://127.0.0.1:9/ws")!, configuration: configuration)
        for (attempt, nominal) in [(1, 100), (2, 200), (3, 400), (4, 800), (5, 1000), (30, 1000)] {
            let delay = client.backoff(attempt: attempt)
            XCTAssertGreaterThanOrEqual(delay, .milliseconds(nominal) * 0.8, "attempt \(attempt)")
            XCTAssertLessThanOrEqual(delay, .milliseconds(nominal) * 1.2, "attempt \(attempt)")
        }
    }
}
