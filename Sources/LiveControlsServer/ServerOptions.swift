import LiveControlsEngine

/// How the server listens and what limits it enforces. Defaults suit local use.
public struct ServerOptions: Sendable {
    /// Address to bind; `0.0.0.0` (or empty) listens on every interface.
    public var host: String = "127.0.0.1"
    /// TCP port; 0 picks a free one (read it back from `LiveControlsServer.port`).
    public var port: Int = 8080
    /// Directory served at `/`; nil serves no static files.
    public var webRoot: String? = "web"
    /// Largest message accepted, in bytes; a larger one closes the connection with 1009.
    public var maxMessageBytes: Int = 64 * 1024
    /// Rooms, templates and history size.
    public var config: ServerConfig = .builtin()
    /// How long a graceful shutdown waits for clients to take their close frames.
    public var shutdownGraceMilliseconds: Int = 2_000

    public init() {}
}
