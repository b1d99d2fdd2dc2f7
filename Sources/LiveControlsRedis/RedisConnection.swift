/// One Redis command connection (one hiredis context), blocking.
///
/// Thread rule: not thread-safe, and deliberately not Sendable. Use each connection from one thread or one
/// serial queue only; give every thread its own connection.
///
/// Connects lazily on the first command. Every connect and every command is bounded by
/// `timeoutMilliseconds` (`redisSetTimeout`, re-applied with keep-alive on every reconnect). After a
/// connection-level failure (refused, timed out, closed, broken pipe: thrown as `.connection`) the context is
/// dropped and a later command connects again, but not within `reconnectIntervalMilliseconds` of the last
/// failure: meanwhile commands throw `.connection` at once, so callers fail fast while Redis is down.
/// A command that failed at connection level may or may not have run on the server.
///
/// Call `RedisProcess.ignoreSIGPIPE()` at startup: otherwise a write to a vanished server kills the process.
public final class RedisConnection {
    public let endpoint: RedisEndpoint
    public let timeoutMilliseconds: Int
    /// The least time between a connection-level failure and the next connect attempt. Default 200 ms.
    public var reconnectIntervalMilliseconds: Int = 200

    /// The live context; nil before the first command, after a failure and after `close()`.
    private var context: HiredisContext?
    /// When the last connection-level failure happened, and what it was (repeated while failing fast).
    private var lastFailure: (at: ContinuousClock.Instant, error: RedisError)?
    /// SHA1 of each script loaded on this connection (`SCRIPT LOAD`). See `RedisConnection+Script.swift`.
    var scriptSHAs: [RedisScript: String] = [:]

    public init(endpoint: RedisEndpoint, timeoutMilliseconds: Int = 1000) {
        self.endpoint = endpoint
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    /// True while a context is connected (as far as the last command knows).
    public var isConnected: Bool { context != nil }

    /// The server connected to now (in sentinel mode, the master the sentinels named); nil while not connected.
    public var server: RedisEndpoint? { context?.endpoint }

    public func command(_ args: [String]) throws(RedisError) -> RedisReply {
        try command(bytes: args.map { Array($0.utf8) })
    }

    /// One command with binary-safe arguments. A server error is returned as `.error`, not thrown.
    public func command(bytes args: [[UInt8]]) throws(RedisError) -> RedisReply {
        guard !args.isEmpty else { throw RedisError(.protocolError, "empty command") }
        let context = try connected()
        do {
            return try Self.checkWritable(context.command(args), context)
        } catch {
            throw failed(error)
        }
    }

    /// Sends all commands (N appends, one write), then reads the N replies, returned in order. Server
    /// errors come back as `.error` replies; a connection-level failure throws and loses the whole batch.
    /// `timeoutMilliseconds` bounds this batch's reads instead of the connection's timeout (a `WAIT` may take
    /// longer than a command).
    public func pipeline(_ commands: [[[UInt8]]], timeoutMilliseconds: Int? = nil) throws(RedisError) -> [RedisReply] {
        guard !commands.isEmpty else { return [] }
        guard !commands.contains(where: \.isEmpty) else { throw RedisError(.protocolError, "empty command") }
        let context = try connected()
        do {
            if let timeoutMilliseconds { try context.setTimeout(milliseconds: timeoutMilliseconds) }
            for command in commands { try context.append(command) }
            var replies: [RedisReply] = []
            replies.reserveCapacity(commands.count)
            for _ in commands { replies.append(try context.getReply()) }
            if timeoutMilliseconds != nil { try context.setTimeout(milliseconds: self.timeoutMilliseconds) }
            for reply in replies { _ = try Self.checkWritable(reply, context) }
            return replies
        } catch {
            throw failed(error)
        }
    }

    /// Drops the context (closes the socket). A later command connects again, at once.
    public func close() {
        context = nil
        lastFailure = nil
    }

    /// The live context, connecting first when there is none (and the reconnect interval allows).
    private func connected() throws(RedisError) -> HiredisContext {
        if let context { return context }
        if let lastFailure {
            let waited = ContinuousClock.now - lastFailure.at
            let interval = Duration.milliseconds(reconnectIntervalMilliseconds)
            if waited < interval {
                throw RedisError(.connection, "\(lastFailure.error.message) (next reconnect in \(Self.ms(interval - waited)) ms)")
            }
        }
        do {
            let context = try HiredisContext.connect(endpoint, timeoutMilliseconds: timeoutMilliseconds)
            self.context = context
            lastFailure = nil
            return context
        } catch {
            throw failed(error)
        }
    }

    /// Any failure after I/O began leaves the context unusable (dead, or out of step with its replies):
    /// drop it. Only connection-level failures start the reconnect interval.
    private func failed(_ error: RedisError) -> RedisError {
        context = nil
        if error.kind == .connection { lastFailure = (ContinuousClock.now, error) }
        return error
    }

    /// A `READONLY` error means the server was a master and is a replica now (a failover), `NOREPLICAS` that it
    /// has lost its replicas (`min-replicas-to-write`; perhaps cut off while the sentinels promote another): the
    /// connection is treated as lost, so the next command connects again — in sentinel mode, to the master the
    /// sentinels name then.
    private static func checkWritable(_ reply: RedisReply, _ context: HiredisContext) throws(RedisError) -> RedisReply {
        if case let .error(message) = reply, message.hasPrefix("READONLY") || message.hasPrefix("NOREPLICAS")
            || message.contains("-READONLY") || message.contains("-NOREPLICAS") || message.contains(" READONLY ") {
            throw RedisError(.connection, "\(context.endpoint.host):\(context.endpoint.port) cannot take writes now (a failover?): \(message)")
        }
        return reply
    }

    private static func ms(_ d: Duration) -> Int64 {
        d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
    }
}
