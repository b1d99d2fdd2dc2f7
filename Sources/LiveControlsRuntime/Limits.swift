/// What one client, or all of them together, may use.
public struct Limits: Sendable {
    /// Largest message accepted, in bytes; a larger one closes the connection with 1009.
    public var maxMessageBytes: Int = 64 * 1024
    /// Open WebSocket connections; one more is closed with 1013 ("try again later").
    public var maxConnections: Int = 10_000
    /// WebSocket connections one client address may hold at once (0: no limit); one more is closed with 1013.
    public var maxConnectionsPerAddress: Int = 256
    /// Connections that are not (yet) WebSockets — plain HTTP requests, handshakes under way — at once; one more is
    /// closed at accept. Never more than the open-file budget (`SocketBudget`). As many as `maxConnections` by
    /// default: a crowd of clients reconnecting at once after a restart is that many handshakes.
    public var maxHTTPConnections: Int = 10_000
    /// Connections one address may hold beyond its `maxConnectionsPerAddress` WebSockets (HTTP, handshakes); one more is
    /// closed at accept (0, or `maxConnectionsPerAddress` 0: no bound).
    public var maxHTTPConnectionsPerAddress: Int = 64
    /// Rooms the joins from one client address may create per minute, in bursts of as many (0: no limit); past
    /// it a join that would create a room gets `room_limit`.
    public var roomCreationsPerMinute: Int = 60
    /// Loaded rooms; a `join` that would create (or load) one more gets `room_limit`.
    public var maxRooms: Int = 1_000
    /// Seconds a room nobody is in stays loaded (0: forever). Then it is unloaded; the next join loads it back
    /// from the store (`--data-dir`) or, with rooms in memory only, starts it anew. Never the config's rooms.
    public var roomIdleSeconds: Int = 600
    /// Messages a connection may send per second, on average (token bucket refill rate).
    public var messagesPerSecond: Double = 50
    /// Messages a connection may send in a burst (token bucket size).
    public var messageBurst: Double = 100
    /// `rate_limited` refusals a connection may have counted, the count draining at this many per 10 s; a refusal that
    /// takes it above closes the connection with 1008 (`RateLimiter`).
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
    /// Intents that may wait for one room at once; one more is refused with `overloaded` (not queued).
    public var roomQueueIntents: Int = 1_024

    public init() {}
}
