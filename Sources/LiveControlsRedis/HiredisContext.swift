import CHiredis
#if canImport(Glibc)
import Glibc
#endif

/// Owns one `redisContext` and frees it on deinit.
///
/// Thread rule: a hiredis context is not thread-safe. This class is not Sendable; its owner
/// (`RedisConnection`, or the subscriber thread) uses it from one thread at a time only.
final class HiredisContext {
    let pointer: UnsafeMutablePointer<redisContext>
    let endpoint: RedisEndpoint

    private init(pointer: UnsafeMutablePointer<redisContext>, endpoint: RedisEndpoint) {
        self.pointer = pointer
        self.endpoint = endpoint
    }

    deinit { redisFree(pointer) }

    /// A blocking connection: the connect, then every read and write, bounded by `timeoutMilliseconds`
    /// (`redisSetTimeout`), with TCP keep-alive. Selects `endpoint.database` when it is not 0, and names the connection
    /// `endpoint.clientName`.
    /// In sentinel mode the sentinels are asked first, and the server reached must say it is the master.
    static func connect(_ configured: RedisEndpoint, timeoutMilliseconds: Int) throws(RedisError) -> HiredisContext {
        let endpoint = try configured.currentMaster(timeoutMilliseconds: timeoutMilliseconds)
        let tv = timeval(milliseconds: timeoutMilliseconds)
        guard let raw = redisConnectWithTimeout(endpoint.host, Int32(clamping: endpoint.port), tv) else {
            throw RedisError(.connection, "\(endpoint): out of memory")
        }
        let context = HiredisContext(pointer: raw, endpoint: endpoint)
        try context.check()
        // redisConnectWithTimeout bounds only the connect; commands need their own timeout, and keep-alive.
        guard redisSetTimeout(raw, tv) == REDIS_OK else { throw context.failure() }
        guard redisEnableKeepAlive(raw) == REDIS_OK else { throw context.failure() }
        if let tls = endpoint.tls { try context.startTLS(tls) }
        if let command = endpoint.authCommand {
            if case .error(let message) = try context.command(command) {
                throw RedisError(.connection, "\(endpoint): AUTH failed: \(message)")
            }
        }
        if endpoint.database != 0 {
            let reply = try context.command([Array("SELECT".utf8), Array(String(endpoint.database).utf8)])
            if case .error(let message) = reply {
                throw RedisError(.connection, "\(endpoint): SELECT \(endpoint.database): \(message)")
            }
        }
        if let name = endpoint.clientName {
            // Only for operators: an error reply (an ACL that denies `CLIENT`) leaves the connection unnamed.
            _ = try context.command([Array("CLIENT".utf8), Array("SETNAME".utf8), Array(name.utf8)])
        }
        if endpoint.masterName != nil {
            do {
                try context.checkMaster()
            } catch {
                configured.passOverSentinel()
                throw error
            }
        }
        return context
    }

    /// A connection for a `poll()` loop: made as `connect` makes one (TLS, `AUTH`, the master check), each step
    /// bounded by `timeoutMilliseconds`, then switched to non-blocking reads and writes.
    static func connectNonBlocking(_ configured: RedisEndpoint, timeoutMilliseconds: Int) throws(RedisError) -> HiredisContext {
        let context = try connect(configured, timeoutMilliseconds: timeoutMilliseconds)
        guard lc_redis_make_nonblocking(context.pointer) == 0 else {
            throw RedisError(.connection, "\(context.endpoint): cannot make the socket non-blocking")
        }
        return context
    }

    var fd: Int32 { pointer.pointee.fd }

    /// Bounds every later read and write by `milliseconds` (`redisSetTimeout`).
    func setTimeout(milliseconds: Int) throws(RedisError) {
        guard redisSetTimeout(pointer, timeval(milliseconds: milliseconds)) == REDIS_OK else { throw failure() }
    }

    /// The context's error as a `.connection` error, prefixed with the endpoint.
    func failure() -> RedisError {
        let text = withUnsafeBytes(of: pointer.pointee.errstr) {
            String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
        }
        let code = pointer.pointee.err
        return RedisError(.connection, "\(endpoint): \(text.isEmpty ? "error \(code)" : text)")
    }

    func check() throws(RedisError) {
        if pointer.pointee.err != 0 { throw failure() }
    }

    /// One command, blocking. Throws `.connection` when the context failed (it is dead afterwards).
    func command(_ args: [[UInt8]]) throws(RedisError) -> RedisReply {
        guard !args.isEmpty else { throw RedisError(.protocolError, "empty command") }
        guard let raw = withArgv(args, { redisCommandArgv(pointer, $0, $1, $2) }) else { throw failure() }
        return RedisReply(consuming: raw)
    }

    /// Queues a command in the output buffer (no I/O).
    func append(_ args: [[UInt8]]) throws(RedisError) {
        guard !args.isEmpty else { throw RedisError(.protocolError, "empty command") }
        guard withArgv(args, { redisAppendCommandArgv(pointer, $0, $1, $2) }) == REDIS_OK else { throw failure() }
    }

    /// The next reply; in a blocking context flushes the output buffer and reads until it has one.
    func getReply() throws(RedisError) -> RedisReply {
        var raw: UnsafeMutableRawPointer?
        guard redisGetReply(pointer, &raw) == REDIS_OK else { throw failure() }
        guard let raw else { throw RedisError(.protocolError, "\(endpoint): no reply") }
        return RedisReply(consuming: raw)
    }

    /// Non-blocking: writes what the socket takes. Returns true when the output buffer is empty.
    func flush() throws(RedisError) -> Bool {
        var done: Int32 = 0
        guard redisBufferWrite(pointer, &done) == REDIS_OK else { throw failure() }
        return done != 0
    }

    /// Non-blocking: one `read(2)` into the reader, then every complete reply it holds.
    func readAvailable() throws(RedisError) -> [RedisReply] {
        guard redisBufferRead(pointer) == REDIS_OK else { throw failure() }
        var replies: [RedisReply] = []
        while true {
            var raw: UnsafeMutableRawPointer?
            guard redisGetReplyFromReader(pointer, &raw) == REDIS_OK else { throw failure() }
            guard let raw else { return replies }
            replies.append(RedisReply(consuming: raw))
        }
    }
}

/// Binary-safe argv for hiredis's `…Argv` functions: every argument with its length, NULs included.
/// hiredis copies the arguments during the call, so the buffers live only for `body`. `args` is not empty.
func withArgv<R>(
    _ args: [[UInt8]],
    _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> R
) -> R {
    let lens = args.map(\.count)
    let buf = UnsafeMutableRawPointer.allocate(byteCount: max(1, lens.reduce(0, +)), alignment: 1)
    defer { buf.deallocate() }
    let argv = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: max(1, args.count))
    defer { argv.deallocate() }
    var offset = 0
    for (i, arg) in args.enumerated() {
        arg.withUnsafeBytes { if let p = $0.baseAddress { (buf + offset).copyMemory(from: p, byteCount: arg.count) } }
        argv[i] = UnsafePointer((buf + offset).assumingMemoryBound(to: CChar.self))
        offset += arg.count
    }
    return lens.withUnsafeBufferPointer { body(Int32(args.count), argv, $0.baseAddress!) }
}

extension timeval {
    init(milliseconds: Int) {
        let ms = max(1, milliseconds)  // 0 would mean "no timeout" to SO_RCVTIMEO
        self.init(tv_sec: ms / 1000, tv_usec: (ms % 1000) * 1000)
    }
}
