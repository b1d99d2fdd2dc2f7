import Foundation
import LiveControlsEngine

/// How the server listens and what limits it enforces. Defaults suit local use; docs/PROTOCOL.md lists them.
public struct ServerOptions: Sendable {
    /// Address to bind; `0.0.0.0` (or empty) listens on every interface.
    public var host: String = "127.0.0.1"
    /// TCP port; 0 picks a free one (read it back from `LiveControlsServer.start()`).
    public var port: Int = 8080
    /// Directory served at `/`; nil serves no static files.
    public var webRoot: String? = "web"
    /// Rooms, templates and history size.
    public var config: ServerConfig = .builtin(today: .today(fromUnixSeconds: Int(time(nil))))
    /// Where rooms persist; nil keeps them in memory only.
    public var dataDirectory: String? = nil
    /// How long a graceful shutdown waits for clients to take their close frames.
    public var shutdownGraceMilliseconds: Int = 2_000
    public var limits = Limits()
    /// Tokens, roles and allowed origins.
    public var auth = AuthPolicy()
    /// PEM certificate and key: serve https/wss instead of http/ws on the same port.
    public var tls: (certificate: String, privateKey: String)? = nil
    /// Cluster mode: rooms are shared with other nodes through Redis (then `dataDirectory` is not used).
    public var cluster: ClusterOptions? = nil

    public init() {}
}

/// What one client, or all of them together, may use.
public struct Limits: Sendable {
    /// Largest message accepted, in bytes; a larger one closes the connection with 1009.
    public var maxMessageBytes: Int = 64 * 1024
    /// Open WebSocket connections; one more is closed with 1013 ("try again later").
    public var maxConnections: Int = 10_000
    /// Loaded rooms; a `join` that would create (or load) one more gets `room_limit`.
    public var maxRooms: Int = 1_000
    /// Seconds a room nobody is in stays loaded (0: forever). Then it is unloaded; the next join loads it back
    /// from the store (`--data-dir`) or, with rooms in memory only, starts it anew. Never the config's rooms.
    public var roomIdleSeconds: Int = 600
    /// Messages a connection may send per second, on average (token bucket refill rate).
    public var messagesPerSecond: Double = 50
    /// Messages a connection may send in a burst (token bucket size).
    public var messageBurst: Double = 100
    /// Consecutive `rate_limited` refusals after which the connection is closed with 1008.
    public var rateLimitStrikes: Int = 50
    /// Frames queued for one connection before it counts as a slow consumer.
    public var outboxMessages: Int = 1_024
    /// Bytes queued for one connection before it counts as a slow consumer.
    public var outboxBytes: Int = 4 * 1024 * 1024
    /// A slow consumer that has not caught up within this time is closed with 1008.
    public var slowConsumerTimeoutMilliseconds: Int = 30_000
    /// Idle seconds before the server pings a connection.
    public var pingIntervalSeconds: Int = 30
    /// Seconds without a pong (or any traffic) before the connection is dropped.
    public var idleTimeoutSeconds: Int = 60

    public init() {}
}
