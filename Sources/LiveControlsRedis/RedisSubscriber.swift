import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A pub/sub subscriber with its own thread and its own hiredis context.
///
/// Thread rules: `start()` and `stop()` may be called from any thread. The context lives on the subscriber
/// thread only; `onMessage` and `onConnection` run on that thread, one at a time, in order: keep them short
/// (hand the work to your own queue). `stop()` must not be called from inside a callback (it would wait
/// for its own thread). The subscriber thread holds the object alive until `stop()`: always call it.
///
/// The thread `poll()`s the (non-blocking) context and a wake pipe. It sends `PING` when nothing arrived
/// for `pingIntervalMilliseconds`, and drops the connection when the `PONG`, or the confirmation of the
/// subscriptions, does not come within `answerTimeoutMilliseconds` (a hung server), or on any error. It then reconnects with
/// a backoff of 50 ms doubling to 1 s and subscribes to every channel and pattern again.
///
/// - `onMessage(channel, payload)`: every `message` and `pmessage` (with the channel the message was
///   published to, not the pattern), in the order Redis sent them. Pub/sub is at-most-once: what is
///   published while the subscriber reconnects is lost.
/// - `onConnection(true)` once every subscription is confirmed (after each (re)connect), before the
///   messages of that connection; `onConnection(false, why)` once when that connection is lost (not again while
///   reconnecting fails), with what ended it (`no answer to PING for 1002 ms`, an error's text).
/// - `onRefused(message)`: Redis answered the subscriptions with an error (`NOPERM …` for an ACL user without the
///   channels); the subscriber reconnects and tries again as after a lost connection.
///
/// Call `RedisProcess.ignoreSIGPIPE()` at startup.
public final class RedisSubscriber: Sendable {
    public let endpoint: RedisEndpoint
    public let channels: [String]
    public let patterns: [String]
    public let pingIntervalMilliseconds: Int
    /// What `onConnection(false, _)` gives when the connection ended because `stop()` was called.
    public static let stoppedReason = "stopped"
    public let answerTimeoutMilliseconds: Int
    private let onMessage: @Sendable (_ channel: String, _ payload: [UInt8]) -> Void
    private let onConnection: @Sendable (_ connected: Bool, _ lostBecause: String?) -> Void
    private let onRefused: @Sendable (_ message: String) -> Void

    /// Started/stopped flags and the wake pipe, all behind the one lock, so stop() never writes to a pipe
    /// that was closed. The pipe is closed in deinit, when no thread can use it any more.
    private let lifecycle = Mutex(Lifecycle())
    /// Connection attempts so far (tests wait on it instead of guessing how long a retry takes).
    let connectAttempts = Atomic<Int>(0)
    /// Entered when the thread is started, left when it has ended and freed its context.
    private let finished = DispatchGroup()

    private struct Lifecycle {
        var started = false
        var stopped = false
        var wakeRead: Int32 = -1
        var wakeWrite: Int32 = -1
    }

    public init(
        endpoint: RedisEndpoint, channels: [String], patterns: [String], pingIntervalMilliseconds: Int = 1000,
        answerTimeoutMilliseconds: Int? = nil,
        onMessage: @escaping @Sendable (_ channel: String, _ payload: [UInt8]) -> Void,
        onConnection: @escaping @Sendable (_ connected: Bool, _ lostBecause: String?) -> Void,
        onRefused: @escaping @Sendable (_ message: String) -> Void = { _ in }
    ) {
        self.endpoint = endpoint
        self.channels = channels
        self.patterns = patterns
        self.pingIntervalMilliseconds = max(1, pingIntervalMilliseconds)
        self.answerTimeoutMilliseconds = max(1, answerTimeoutMilliseconds ?? pingIntervalMilliseconds)
        self.onMessage = onMessage
        self.onConnection = onConnection
        self.onRefused = onRefused
    }

    deinit {
        lifecycle.withLock { state in
            if state.wakeRead >= 0 { Glibc.close(state.wakeRead) }
            if state.wakeWrite >= 0 { Glibc.close(state.wakeWrite) }
        }
    }

    /// Starts the subscriber thread (once; later calls, and calls after `stop()`, do nothing).
    public func start() {
        let wakeRead: Int32? = lifecycle.withLock { state in
            guard !state.started, !state.stopped else { return nil }
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else { preconditionFailure("RedisSubscriber: pipe() failed, errno \(errno)") }
            for fd in fds {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                _ = fcntl(fd, F_SETFL, O_NONBLOCK)
            }
            state.started = true
            state.wakeRead = fds[0]
            state.wakeWrite = fds[1]
            finished.enter()  // under the lock: a stop() that sees `started` also waits for the thread
            return fds[0]
        }
        guard let wakeRead else { return }
        let thread = Thread { [self] in
            var loop = SubscriberLoop(
                endpoint: endpoint, channels: channels, patterns: patterns,
                pingInterval: .milliseconds(pingIntervalMilliseconds), answerTimeout: .milliseconds(answerTimeoutMilliseconds), wakeFD: wakeRead,
                onMessage: onMessage, onConnection: onConnection, onRefused: onRefused,
                onAttempt: { [self] in connectAttempts.add(1, ordering: .relaxed) },
                isStopped: { [self] in lifecycle.withLock { $0.stopped } })
            loop.run()
            finished.leave()
        }
        thread.name = "redis-subscriber"
        thread.start()
    }

    /// Wakes the thread through the pipe, waits until it has ended and freed its context. Idempotent;
    /// returns at once when the subscriber was never started.
    public func stop() {
        lifecycle.withLock { state in
            guard !state.stopped else { return }
            state.stopped = true
            if state.wakeWrite >= 0 {
                var byte: UInt8 = 1
                _ = Glibc.write(state.wakeWrite, &byte, 1)
            }
        }
        finished.wait()
    }
}
