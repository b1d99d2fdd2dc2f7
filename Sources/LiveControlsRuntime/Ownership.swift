import Dispatch

/// Thread ownership, checked in code: each method that must run on a room's queue (or another serial
/// queue) says so with `assertOnQueue`. Debug builds (`swift build`, which CI and the tests run) trap on
/// a violation; release builds compile the check away, so the hot paths pay nothing.
@inline(__always)
package func assertOnQueue(_ queue: DispatchQueue) {
    #if DEBUG
    dispatchPrecondition(condition: .onQueue(queue))
    #endif
}

/// The opposite: code that waits for `queue` (`queue.sync`) must never run on it.
@inline(__always)
package func assertNotOnQueue(_ queue: DispatchQueue) {
    #if DEBUG
    dispatchPrecondition(condition: .notOnQueue(queue))
    #endif
}
