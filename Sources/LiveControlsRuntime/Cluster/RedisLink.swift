import Dispatch
import LiveControlsRedis
import Synchronization

/// The node's Redis command connection.
///
/// Thread rules: the `RedisConnection` is touched only on `queue` (a serial queue). Two kinds of work use it:
/// - **Pipelined commands** (`submit`): room writes, replies, forwarded requests. They wait in `batch` (behind a
///   mutex, any thread may submit) and leave in submission order, up to `maxBatch` in one round trip; each
///   drain is one work item on `queue`, so a backlog never holds up the ticker for more than one batch.
/// - **Exchanges** (`run`, on `queue` only): ownership steps — lease acquisition and renewal, loading a room.
/// Calls block `queue` for at most the connection timeout; while Redis is down they fail at once.
final class RedisLink: @unchecked Sendable {
    let queue = DispatchQueue(label: "livecontrols.redis")
    private let connection: RedisConnection
    /// Whether the last command reached Redis, and since when it has without a break.
    private let reachable = Mutex<(up: Bool, since: DispatchTime)>((true, .now()))
    static let maxBatch = 256

    private struct Pending {
        let command: [[UInt8]]
        /// A write whose success must be on `waitReplicas` replicas before it counts (`WAIT`).
        let durable: Bool
        /// Checked when the command is about to be sent: true drops it (a reply of a room whose write failed).
        let skip: (@Sendable () -> Bool)?
        let completion: (@Sendable (Result<RedisReply, RedisError>) -> Void)?
    }
    private struct Batch {
        var commands: [Pending] = []
        var head = 0
        var drainScheduled = false
    }
    private let batch = Mutex(Batch())

    /// Replicas that must have a durable write before it succeeds (`WAIT`; 0: none), and how long to wait for them.
    let waitReplicas: Int
    let waitMilliseconds: Int

    init(endpoint: RedisEndpoint, timeoutMilliseconds: Int, reconnectIntervalMilliseconds: Int = 200, waitReplicas: Int = 0,
         waitMilliseconds: Int = 500) {
        connection = RedisConnection(endpoint: endpoint, timeoutMilliseconds: timeoutMilliseconds)
        connection.reconnectIntervalMilliseconds = reconnectIntervalMilliseconds
        self.waitReplicas = waitReplicas
        self.waitMilliseconds = waitMilliseconds
    }

    /// Whether the last command reached Redis (any thread).
    var isReachable: Bool { reachable.withLock { $0.up } }

    /// Whether Redis has answered every command for at least this long.
    func reachableFor(milliseconds: Int) -> Bool {
        reachable.withLock { $0.up && DispatchTime.now().uptimeNanoseconds >= $0.since.uptimeNanoseconds + UInt64(milliseconds) * 1_000_000 }
    }

    /// Queue only: runs one exchange with Redis and records whether Redis answered.
    func run<T>(_ body: (RedisConnection) throws(RedisError) -> T) throws(RedisError) -> T {
        dispatchPrecondition(condition: .onQueue(queue))
        do {
            let value = try body(connection)
            reachable.withLock { if !$0.up { $0 = (true, .now()) } }
            return value
        } catch {
            if error.kind == .connection { reachable.withLock { $0.up = false } }
            throw error
        }
    }

    /// Any thread: sends `command` after every command submitted before it; `completion` (on the link queue)
    /// gets its reply, or the connection error that lost it.
    func submit(_ command: [[UInt8]], durable: Bool = false, skip: (@Sendable () -> Bool)? = nil,
                completion: (@Sendable (Result<RedisReply, RedisError>) -> Void)? = nil) {
        let schedule = batch.withLock { b in
            b.commands.append(Pending(command: command, durable: durable, skip: skip, completion: completion))
            guard !b.drainScheduled else { return false }
            b.drainScheduled = true
            return true
        }
        if schedule { queue.async { self.drain() } }
    }

    /// Queue only: sends the next batch (up to `maxBatch` commands), then schedules itself again if more wait.
    /// With `waitReplicas`, a batch holding durable writes goes in two pipelines: first its durable writes and one
    /// `WAIT` (so one round trip to the replicas covers all of them), then everything else in it — replies and
    /// publications that show those writes leave only once the replicas have them, and not at all for a room
    /// whose write failed (`skip`).
    private func drain() {
        let taken: [Pending] = batch.withLock { b in
            let end = min(b.commands.count, b.head + Self.maxBatch)
            let slice = Array(b.commands[b.head..<end])
            b.head = end
            if b.head == b.commands.count {
                b.commands.removeAll(keepingCapacity: b.commands.count < 4_096)
                b.head = 0
                b.drainScheduled = false
            } else if b.head >= 4_096 {
                b.commands.removeFirst(b.head)
                b.head = 0
            }
            return slice
        }
        if waitReplicas > 0, taken.contains(where: \.durable) {
            send(taken.filter(\.durable), waiting: true)
            send(taken.filter { !$0.durable }, waiting: false)
        } else if !taken.isEmpty {
            send(taken, waiting: false)
        }
        if batch.withLock({ $0.drainScheduled && $0.head < $0.commands.count }) { queue.async { self.drain() } }
    }

    /// Queue only: one pipeline of `pendings` (those whose `skip` says so are not sent), with a `WAIT` after them
    /// when `waiting`; completions get their replies — durable ones a failure unless enough replicas answered.
    private func send(_ pendings: [Pending], waiting: Bool) {
        var sent: [Pending] = []
        for pending in pendings {
            if pending.skip?() ?? false {
                pending.completion?(.failure(RedisError(.protocolError, "not sent: an earlier write of the room failed")))
            } else {
                sent.append(pending)
            }
        }
        guard !sent.isEmpty else { return }
        var commands = sent.map(\.command)
        if waiting { commands.append([Array("WAIT".utf8), Array(String(waitReplicas).utf8), Array(String(waitMilliseconds).utf8)]) }
        let wanted = waitReplicas
        var shortfall: RedisError? = nil
        let result: Result<[RedisReply], RedisError>
        do {
            result = .success(try run { c throws(RedisError) in
                let replies = try c.pipeline(commands, timeoutMilliseconds: waiting ? waitMilliseconds + 1_000 : nil)
                if waiting {
                    // Only an integer of at least N counts: an error (a user without WAIT's permission) is no proof.
                    switch replies.last {
                    case let .integer(n)? where n >= wanted: break
                    case let .integer(n)?:
                        shortfall = RedisError(.connection, "only \(n) of \(wanted) replicas had the write within \(waitMilliseconds) ms")
                        c.close()  // perhaps no longer the master: ask again (the sentinels, in sentinel mode)
                    case let .error(message)?:
                        shortfall = RedisError(.protocolError, "WAIT failed: \(message)")
                    default:
                        shortfall = RedisError(.protocolError, "WAIT gave no count")
                    }
                }
                return replies
            })
        } catch {
            result = .failure(error)
        }
        for (index, pending) in sent.enumerated() {
            switch result {
            case let .success(replies):
                if pending.durable, let shortfall {
                    pending.completion?(.failure(shortfall))
                } else {
                    pending.completion?(index < replies.count ? .success(replies[index]) : .failure(RedisError(.protocolError, "reply missing")))
                }
            case let .failure(error): pending.completion?(.failure(error))
            }
        }
    }

    /// Queue only: sends everything submitted so far before the caller's next exchange (`run`) — for a read that
    /// must see the pipelined writes before it.
    func flushPipeline() {
        dispatchPrecondition(condition: .onQueue(queue))
        while batch.withLock({ $0.head < $0.commands.count }) { drain() }
    }

    /// Any thread: PUBLISH, pipelined; `receivers` gets how many subscribers received it.
    func publish(_ channel: String, _ payload: [UInt8], receivers: (@Sendable (Result<Int, RedisError>) -> Void)? = nil) {
        submit([Array("PUBLISH".utf8), Array(channel.utf8), payload], completion: { result in
            receivers?(result.flatMap { reply in
                if case let .error(message) = reply { return .failure(RedisError(.protocolError, message)) }
                return .success(Int(reply.integer ?? 0))
            })
        })
    }

    /// Any thread: EVAL of `script` (its text: Redis caches it compiled), pipelined.
    func eval(_ script: RedisScript, keys: [String], args: [[UInt8]], durable: Bool = false, skip: (@Sendable () -> Bool)? = nil,
              completion: @escaping @Sendable (Result<RedisReply, RedisError>) -> Void) {
        var command: [[UInt8]] = [Array("EVAL".utf8), Array(script.source.utf8), Array(String(keys.count).utf8)]
        command += keys.map { Array($0.utf8) }
        command += args
        submit(command, durable: durable, skip: skip, completion: completion)
    }

    /// Any thread but the link queue: returns once every command submitted before the call has been sent (and
    /// answered, or failed).
    func waitUntilSent() {
        assertNotOnQueue(queue)
        for _ in 0..<100_000 {
            queue.sync {}
            if batch.withLock({ $0.head == $0.commands.count }) { return }
        }
    }

    func close() {
        queue.sync { connection.close() }
    }
}

/// Why a cluster store write failed.
enum ClusterStoreError: Error, CustomStringConvertible {
    /// The room's fencing token moved on: another node owns the room now.
    case fencedOut
    /// An earlier write of this ownership failed; nothing after it is written.
    case stopped
    case redis(RedisError)

    var description: String {
        switch self {
        case .fencedOut: return "fenced out: another node owns the room now"
        case .stopped: return "an earlier write failed; this node no longer writes for the room"
        case let .redis(error): return "Redis: \(error)"
        }
    }
}
