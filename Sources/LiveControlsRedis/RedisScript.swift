/// A Lua script for `RedisConnection.eval`. Each connection loads it once (`SCRIPT LOAD`) and then sends
/// `EVALSHA`. Plain value; safe to share between threads.
public struct RedisScript: Sendable, Hashable {
    public let source: String

    public init(_ source: String) {
        self.source = source
    }
}
