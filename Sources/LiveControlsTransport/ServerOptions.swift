import Foundation
import LiveControlsEngine
import LiveControlsRuntime

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
    /// How long a shutdown's closes may wait, past the grace, for rooms still carrying out and storing what they were
    /// applying (their acks go before the close): a store that is slow, not stalled, gets this long to finish.
    /// `livecontrols serve` sets it to `--shutdown-timeout` less 1.5 s.
    public var shutdownRoomWaitMilliseconds: Int = 8_500
    public var limits = Limits()
    /// Reverse proxies whose `X-Forwarded-For` names the client address (`AddressShares`).
    public var trustedProxies: [AddressPattern] = []
    /// Whether `GET /metrics` needs the server API's credential (the API key or an admin token), as the API does.
    public var metricsNeedCredential = false
    /// The largest request body the server API reads (a larger one is refused with 413 before it is read).
    public var apiMaxBodyBytes: Int = 1 << 20
    /// Server API bodies being received at once, in bytes over all connections (each counted at its Content-Length),
    /// and a quarter of it from one client address; past either a request with a body is refused with 503 before its
    /// body is read, so slow or unfinished uploads hold a bounded amount of memory and one client cannot hold it all.
    public var apiBodyBytesInFlight: Int = 32 << 20
    /// Tokens, roles and allowed origins.
    public var auth = AuthPolicy()
    /// PEM certificate and key: serve https/wss instead of http/ws on the same port.
    public var tls: (certificate: String, privateKey: String)? = nil
    /// Cluster mode: rooms are shared with other nodes through Redis (then `dataDirectory` is not used).
    public var cluster: ClusterOptions? = nil

    public init() {}
}
