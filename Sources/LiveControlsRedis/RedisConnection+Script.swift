extension RedisConnection {
    /// Runs a Lua script: `EVALSHA` with the SHA from `SCRIPT LOAD`, loaded once per connection.
    /// When Redis answers NOSCRIPT (its script cache is empty after every restart, or after `SCRIPT FLUSH`)
    /// the script runs with `EVAL` instead, which also puts it back in the cache for the next `EVALSHA`.
    /// Server errors (a script that does not compile, `redis.error_reply`) are returned as `.error`.
    public func eval(_ script: RedisScript, keys: [String], args: [[UInt8]]) throws(RedisError) -> RedisReply {
        let tail = [Array(String(keys.count).utf8)] + keys.map { Array($0.utf8) } + args
        let sha: [UInt8]
        switch try loadedSHA(script) {
        case .string(let bytes): sha = bytes
        case let failure: return failure  // SCRIPT LOAD's error
        }
        let reply = try command(bytes: [Array("EVALSHA".utf8), sha] + tail)
        guard case .error(let message) = reply, message.hasPrefix("NOSCRIPT") else { return reply }
        return try command(bytes: [Array("EVAL".utf8), Array(script.source.utf8)] + tail)
    }

    /// The cached SHA as `.string`, else `SCRIPT LOAD`'s reply: `.string(sha)` (then cached) or `.error`.
    private func loadedSHA(_ script: RedisScript) throws(RedisError) -> RedisReply {
        if let sha = scriptSHAs[script] { return .string(Array(sha.utf8)) }
        let reply = try command(["SCRIPT", "LOAD", script.source])
        switch reply {
        case .string(let bytes):
            scriptSHAs[script] = String(decoding: bytes, as: UTF8.self)
            return reply
        case .error:
            return reply
        default:
            throw RedisError(.protocolError, "\(endpoint): SCRIPT LOAD answered \(reply)")
        }
    }
}
