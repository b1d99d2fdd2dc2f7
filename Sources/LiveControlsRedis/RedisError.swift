/// A failure of the Redis client: what kind, and a message for people.
///
/// A server-side error (`-ERR …`, `-NOSCRIPT …`) is not a `RedisError`: it is the reply `.error(message)`.
/// Plain value; safe to pass between threads.
public struct RedisError: Error, Sendable, CustomStringConvertible, Equatable {
    public enum Kind: Sendable, Equatable {
        /// `RedisEndpoint(url:)` could not read the URL.
        case invalidURL
        /// No connection, or the connection failed (refused, timed out, closed by the server, broken pipe).
        /// The connection reconnects on a later command.
        case connection
        /// The client could not form or read a command or reply (an empty command, an unreadable reply).
        case protocolError
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { "Redis \(kind): \(message)" }
}
