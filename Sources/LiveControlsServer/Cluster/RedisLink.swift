import Dispatch
import LiveControlsRedis
import Synchronization

/// The node's Redis command connection.
///
/// Thread rules: the `RedisConnection` is touched only on `queue` (a serial queue): every owned room's
/// writes and replies, lease renewals and forwarded requests go through it in submission order, which is
/// what orders a room's replies after the patches they follow. Calls block that queue for at most the
/// connection timeout; while Redis is down they fail at once (the connection's reconnect interval).
final class RedisLink: @unchecked Sendable {
    let queue = DispatchQueue(label: "livecontrols.redis")
    private let connection: RedisConnection
    /// Whether the last command reached Redis, and since when it has without a break.
    private let reachable = Mutex<(up: Bool, since: DispatchTime)>((true, .now()))

    init(endpoint: RedisEndpoint, timeoutMilliseconds: Int) {
        connection = RedisConnection(endpoint: endpoint, timeoutMilliseconds: timeoutMilliseconds)
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

    /// Queue only: PUBLISH; the number of subscribers that received it.
    func publish(_ channel: String, _ payload: [UInt8]) throws(RedisError) -> Int {
        let reply = try run { c throws(RedisError) in try c.command(bytes: [Array("PUBLISH".utf8), Array(channel.utf8), payload]) }
        if case let .error(message) = reply { throw RedisError(.protocolError, message) }
        return Int(reply.integer ?? 0)
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
