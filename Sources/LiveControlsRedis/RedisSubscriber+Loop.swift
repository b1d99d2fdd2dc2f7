import CHiredis
#if canImport(Glibc)
import Glibc
#endif

/// The subscriber thread's loop and state. Lives on that thread only (its context included).
struct SubscriberLoop {
    let endpoint: RedisEndpoint
    let channels: [String]
    let patterns: [String]
    let pingInterval: Duration
    /// How long an answer (the subscriptions' confirmation, a PONG) may take before the connection counts as lost.
    let answerTimeout: Duration
    let wakeFD: Int32
    let onMessage: @Sendable (String, [UInt8]) -> Void
    let onConnection: @Sendable (Bool, String?) -> Void
    /// Redis answered a subscription (or a PING) with an error: its text (a user without the right to a channel gets
    /// `NOPERM …`). The connection is dropped and tried again.
    let onRefused: @Sendable (String) -> Void
    let onAttempt: () -> Void
    let isStopped: () -> Bool

    /// True between `onConnection(true)` and the matching `onConnection(false)`.
    private var announced = false

    init(
        endpoint: RedisEndpoint, channels: [String], patterns: [String], pingInterval: Duration, answerTimeout: Duration,
        wakeFD: Int32, onMessage: @escaping @Sendable (String, [UInt8]) -> Void, onConnection: @escaping @Sendable (Bool, String?) -> Void,
        onRefused: @escaping @Sendable (String) -> Void = { _ in }, onAttempt: @escaping () -> Void, isStopped: @escaping () -> Bool
    ) {
        self.endpoint = endpoint
        self.channels = channels
        self.patterns = patterns
        self.pingInterval = pingInterval
        self.answerTimeout = answerTimeout
        self.wakeFD = wakeFD
        self.onMessage = onMessage
        self.onConnection = onConnection
        self.onRefused = onRefused
        self.onAttempt = onAttempt
        self.isStopped = isStopped
    }

    static let firstBackoff = Duration.milliseconds(50)
    static let maxBackoff = Duration.seconds(1)

    /// Connects, subscribes, reads; after a loss waits the backoff and starts again; until stopped.
    mutating func run() {
        var backoff = Self.firstBackoff
        var firstAttempt = true
        while !isStopped() {
            if !firstAttempt {
                guard waitForWake(backoff) else { break }
                backoff = min(backoff * 2, Self.maxBackoff)
            }
            firstAttempt = false
            let (subscribed, why) = session()
            if subscribed { backoff = Self.firstBackoff }
            if announced {
                announced = false
                onConnection(false, why)
            }
        }
        if announced { onConnection(false, RedisSubscriber.stoppedReason) }
    }

    /// Sleeps up to `duration` on the wake pipe. False when woken (stop requested).
    private func waitForWake(_ duration: Duration) -> Bool {
        let deadline = ContinuousClock.now + duration
        while !isStopped() {
            let remaining = deadline - ContinuousClock.now
            if remaining <= .zero { return true }
            var pfd = pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)
            let n = poll(&pfd, 1, Self.pollMilliseconds(remaining))
            if n > 0 { return false }
        }
        return false
    }

    /// One connection: subscribe, then deliver messages and ping until it fails or stop is requested.
    /// Returns whether every subscription was confirmed on it, and why it ended. The context is freed on return.
    private mutating func session() -> (subscribed: Bool, why: String) {
        onAttempt()
        // The connect (TLS and AUTH included) blocks for up to a second; a stop waits for it.
        let context: HiredisContext
        do {
            context = try HiredisContext.connectNonBlocking(endpoint, timeoutMilliseconds: 1000)
        } catch {
            return (false, error.message)
        }
        var session = Session()
        do {
            // One SUBSCRIBE and one PSUBSCRIBE: Redis confirms each channel and pattern separately. With
            // nothing to subscribe to, a PING's answer shows that the connection works.
            if !channels.isEmpty { try context.append([Array("SUBSCRIBE".utf8)] + channels.map { Array($0.utf8) }) }
            if !patterns.isEmpty { try context.append([Array("PSUBSCRIBE".utf8)] + patterns.map { Array($0.utf8) }) }
            session.expected = channels.count + patterns.count
            if session.expected == 0 { try context.append([Array("PING".utf8)]) }
            var writePending = true  // write once the socket is writable
            var awaitingSince: ContinuousClock.Instant? = .now  // SUBSCRIBE or PING sent, answer not read
            var lastRead = ContinuousClock.now

            while !isStopped() {
                let now = ContinuousClock.now
                let remaining = awaitingSince.map { $0 + answerTimeout - now } ?? lastRead + pingInterval - now
                if remaining <= .zero {
                    if let awaitingSince {  // no answer: hung or unreachable
                        let what = session.subscribed ? "PING" : "the subscriptions"
                        return (session.subscribed, "no answer to \(what) for \(Self.milliseconds(now - awaitingSince)) ms")
                    }
                    try context.append([Array("PING".utf8)])
                    writePending = !(try context.flush())
                    awaitingSince = now
                    continue
                }
                var fds = [
                    pollfd(fd: context.fd, events: Int16(POLLIN) | (writePending ? Int16(POLLOUT) : 0), revents: 0),
                    pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
                ]
                let n = poll(&fds, 2, Self.pollMilliseconds(remaining))
                if n < 0 {
                    if errno == EINTR { continue }
                    return (session.subscribed, "poll failed: errno \(errno)")
                }
                if fds[1].revents != 0 { return (session.subscribed, RedisSubscriber.stoppedReason) }
                let revents = fds[0].revents
                if writePending, revents & Int16(POLLOUT | POLLERR | POLLHUP) != 0 {
                    writePending = !(try context.flush())
                }
                guard revents & Int16(POLLIN | POLLERR | POLLHUP) != 0 else { continue }
                let replies = try context.readAvailable()
                lastRead = .now
                for reply in replies {
                    switch session.handle(reply) {
                    case .none:
                        break
                    case .message(let channel, let payload):
                        if session.subscribed { onMessage(channel, payload) } else { session.early.append((channel, payload)) }
                    case .subscribed:
                        awaitingSince = nil
                        announced = true
                        onConnection(true, nil)
                        for (channel, payload) in session.early { onMessage(channel, payload) }
                        session.early = []
                    case .pong:
                        awaitingSince = nil
                    case .failed(let why):
                        if let why, !session.subscribed { onRefused(why) }  // after that, a lost connection like any other
                        return (session.subscribed, why.map { "Redis answered \($0)" } ?? "Redis sent a reply a subscriber never gets")
                    }
                }
            }
        } catch {
            return (session.subscribed, error.message)
        }
        return (session.subscribed, RedisSubscriber.stoppedReason)
    }

    static func milliseconds(_ d: Duration) -> Int64 {
        d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
    }

    static func pollMilliseconds(_ d: Duration) -> Int32 {
        let (seconds, attoseconds) = d.components
        let ms = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000  // round up
        return Int32(clamping: max(1, ms))
    }
}

/// What one connection of the subscriber has seen: the subscription confirmations so far.
struct Session {
    /// Confirmations to read (channels + patterns; 0 means wait for a PONG instead).
    var expected = 0
    var confirmed = 0
    var subscribed = false
    /// Messages that came before the last confirmation: delivered right after `onConnection(true)`.
    var early: [(String, [UInt8])] = []

    enum Event {
        case none
        case message(channel: String, payload: [UInt8])
        /// Every subscription is confirmed now.
        case subscribed
        case pong
        /// A server error (its text), or a reply a subscriber should never get (nil): drop the connection.
        case failed(String?)
    }

    mutating func handle(_ reply: RedisReply) -> Event {
        switch reply {
        case .array(let items):
            switch items.first?.text {
            case "message" where items.count == 3:
                return .message(channel: items[1].text ?? "", payload: items[2].bytes ?? [])
            case "pmessage" where items.count == 4:
                return .message(channel: items[2].text ?? "", payload: items[3].bytes ?? [])
            case "subscribe", "psubscribe":
                confirmed += 1
                return confirm(confirmed == expected)
            case "pong":
                return expected == 0 ? confirm(true) : .pong
            default:
                return .none
            }
        case .status("PONG"):
            return expected == 0 ? confirm(true) : .pong
        case .error(let text):
            return .failed(text)
        default:
            return .failed(nil)
        }
    }

    private mutating func confirm(_ complete: Bool) -> Event {
        guard complete, !subscribed else { return subscribed ? .pong : .none }
        subscribed = true
        return .subscribed
    }
}
