import Foundation
import Observation
import XCTest
import LiveControlsKit

struct TimedOut: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Waits until `condition` holds, re-checking it on every change of the observable state it reads (no polling,
/// no sleeps); throws after `timeout`.
@MainActor
func eventually(_ what: String, timeout: Duration = .seconds(10), _ condition: @escaping @MainActor () -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { throw TimedOut(what: what) }
        let once = Once()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            once.continuation = continuation
            withObservationTracking { _ = condition() } onChange: { Task { @MainActor in once.fire() } }
            once.timer = Task { @MainActor in
                try? await Task.sleep(until: deadline)
                once.fire()
            }
        }
    }
}

@MainActor
private final class Once {
    var continuation: CheckedContinuation<Void, Never>?
    var timer: Task<Void, Never>?

    func fire() {
        timer?.cancel()
        continuation?.resume()
        continuation = nil
    }
}

/// Expects `operation` to be refused by the server with `code`.
@MainActor
func expectRefusal(_ code: ErrorCode, _ what: String = "", file: StaticString = #filePath, line: UInt = #line,
                   _ operation: () async throws -> Void) async {
    do {
        try await operation()
        XCTFail("\(what): expected \(code.rawValue), it succeeded", file: file, line: line)
    } catch let error as LiveControlsError {
        XCTAssertEqual(error.code?.rawValue, code.rawValue, "\(what): \(error)", file: file, line: line)
    } catch {
        XCTFail("\(what): expected \(code.rawValue), got \(error)", file: file, line: line)
    }
}
