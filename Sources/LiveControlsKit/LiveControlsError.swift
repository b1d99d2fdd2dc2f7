@_exported import LiveControlsProtocol

/// Why a LiveControlsKit call failed.
///
/// A refusal by the server carries the protocol's `code` (docs/PROTOCOL.md lists each): match it with
/// ``code`` — `catch let error as LiveControlsError where error.code == .atBound`. The other cases are the
/// client's: the connection, a time-out, a protocol violation.
public enum LiveControlsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server refused the request with an `error` message; nothing changed.
    case refused(Refusal)
    /// The connection could not be opened (the server is not there, the handshake failed, TLS was refused).
    case connectFailed(String)
    /// The connection was lost before the reply came: the request may or may not have taken effect (the room's
    /// state after the reconnect shows it).
    case connectionLost(String)
    /// The client is not connected right now (connecting, reconnecting or closed); the request was not sent.
    case notConnected
    /// No reply within the configured time; the request may or may not have taken effect.
    case timedOut
    /// The server sent something the protocol does not allow; the client resynchronises or reconnects.
    case protocolViolation(String)

    /// An `error` message from the server.
    public struct Refusal: Sendable, Equatable {
        /// The code as sent (also codes newer than this SDK).
        public var rawCode: String
        /// For people; may change between releases.
        public var message: String
        /// The room the refusal is about, when the server named one.
        public var room: String?
        /// `denied`: the app's backend's own code for why, when it gave one.
        public var reason: String?
        /// The `conflict` of an undo or redo: who changed that part since (`session`, `name`, `user`), when a member did.
        public var by: JSONObject?

        public init(rawCode: String, message: String, room: String? = nil, reason: String? = nil, by: JSONObject? = nil) {
            self.rawCode = rawCode
            self.message = message
            self.room = room
            self.reason = reason
            self.by = by
        }

        /// The code as one this SDK knows; nil for a code newer than it.
        public var code: ErrorCode? { ErrorCode(rawValue: rawCode) }
    }

    /// The protocol's error code of a server refusal; nil for the client's own failures.
    public var code: ErrorCode? {
        if case let .refused(refusal) = self { return refusal.code }
        return nil
    }

    public var description: String {
        switch self {
        case let .refused(r): return "\(r.rawCode): \(r.message)"
        case let .connectFailed(why): return "cannot connect: \(why)"
        case let .connectionLost(why): return "connection lost before the reply: \(why)"
        case .notConnected: return "not connected"
        case .timedOut: return "no reply in time"
        case let .protocolViolation(why): return "protocol violation: \(why)"
        }
    }
}
