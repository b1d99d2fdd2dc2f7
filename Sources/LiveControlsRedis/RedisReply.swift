/// One reply from Redis (RESP2), copied out of hiredis: plain value, safe to pass between threads.
public enum RedisReply: Sendable, Equatable {
    /// A bulk string (`$…`): any bytes, NULs included.
    case string([UInt8])
    /// A simple string (`+OK`, `+PONG`).
    case status(String)
    /// An integer (`:1`).
    case integer(Int64)
    /// An array (`*…`), e.g. `LRANGE`, `EXEC`, pub/sub messages.
    case array([RedisReply])
    /// A nil bulk string or nil array: a missing key, a lost `SET … NX`, a timed-out `BLPOP`.
    case null
    /// A server error (`-ERR …`, `-WRONGTYPE …`, `-NOSCRIPT …`): the command failed, the connection is fine.
    case error(String)

    /// `.string` decoded as UTF-8 (invalid bytes replaced), or `.status`; otherwise nil.
    public var text: String? {
        switch self {
        case .string(let bytes): String(decoding: bytes, as: UTF8.self)
        case .status(let status): status
        default: nil
        }
    }

    /// The value of `.integer`; otherwise nil.
    public var integer: Int64? {
        if case .integer(let value) = self { value } else { nil }
    }

    /// The bytes of `.string`; otherwise nil.
    public var bytes: [UInt8]? {
        if case .string(let bytes) = self { bytes } else { nil }
    }
}
