import Foundation

/// What LiveControlsKit needs from a WebSocket library: open a connection, send text, read text, close.
///
/// The default is ``NIOWebSocketTransport`` (hummingbird-project/swift-websocket on SwiftNIO), which runs on
/// Linux and Apple platforms. An app can plug in its own, for example one on `URLSessionWebSocketTask`.
public protocol WebSocketTransport: Sendable {
    /// Opens a WebSocket to `url` with these extra request headers and returns once the handshake is done.
    /// Throws when the server cannot be reached or refuses the upgrade.
    func connect(to url: URL, headers: [String: String]) async throws -> any WebSocketConnection
}

/// One open WebSocket.
public protocol WebSocketConnection: Sendable {
    /// The next text message, waiting for it; nil once ``close()`` was called. Throws ``WebSocketClosed`` when the
    /// server closed the connection or it broke. A transport reads from the network only as fast as this is
    /// called (a few messages ahead at most), so a client that falls behind becomes a slow consumer for the server
    /// (which then sends it a fresh snapshot) instead of buffering without bound.
    func receive() async throws -> String?
    /// Sends one text message. Throws when the connection is gone.
    func send(_ text: String) async throws
    /// Closes the connection (close code 1000) and ends ``messages``.
    func close() async
}

/// The connection ended without the client closing it.
public struct WebSocketClosed: Error, Sendable, Equatable, CustomStringConvertible {
    /// The close code the server sent (1001 going away, 1008 policy — a slow consumer or a rate limit, …), or nil
    /// when the connection ended without a close frame (RFC 6455's 1006).
    public var code: Int?
    /// The close reason, or a description of the failure.
    public var reason: String

    public init(code: Int?, reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String {
        code.map { "connection closed by the server (\($0))" + (reason.isEmpty ? "" : ": \(reason)") }
            ?? "connection lost" + (reason.isEmpty ? "" : ": \(reason)")
    }
}
