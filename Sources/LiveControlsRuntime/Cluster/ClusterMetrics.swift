import Prometheus

/// Cluster counters and gauges for `GET /metrics`. Safe from any thread.
///
/// Its own `PrometheusCollectorRegistry`, one per `ClusterDirectory` (so per server), rendered after the
/// `ServerMetrics` one: no family name is in both. The counters are swift-prometheus atomics, like
/// `ServerMetrics`' (no lock per increment).
final class ClusterMetrics: Sendable {
    private let registry = PrometheusCollectorRegistry()
    private let redisUp: Gauge
    private let ownedRooms: Gauge
    private let forwardedTotal: Counter
    private let takeovers: Counter
    private let relinquishedTotal: Counter
    private let timeouts: Counter

    init() {
        redisUp = registry.gauge("livecontrols_cluster_redis_up", "Whether Redis answers this node (1) or not (0).")
        ownedRooms = registry.gauge("livecontrols_cluster_owned_rooms", "Rooms this node owns.")
        forwardedTotal = registry.counter("livecontrols_cluster_forwarded_total", "Requests forwarded to another node.")
        takeovers = registry.counter("livecontrols_cluster_takeovers_total", "Rooms this node took ownership of.")
        relinquishedTotal = registry.counter("livecontrols_cluster_relinquished_total", "Rooms this node stopped owning.")
        timeouts = registry.counter("livecontrols_cluster_request_timeouts_total",
                                    "Forwarded requests the owner did not answer in time.")
    }

    /// A request went to another node's inbox.
    func forwarded() { forwardedTotal.increment() }
    /// This node took a room over (created it, or recovered it from Redis).
    func tookOver() { takeovers.increment() }
    /// This node stopped owning a room (lease lost, failed write, Redis gone, shutdown, handed back idle).
    func relinquished() { relinquishedTotal.increment() }
    /// A forwarded request got no answer in time (the client got `unavailable`).
    func timedOut() { timeouts.increment() }

    /// The exposition's lines (Prometheus text 0.0.4), with the scrape-time gauges set first.
    func lines(redisUp: Bool, ownedRooms: Int) -> [String] {
        self.redisUp.set(to: redisUp ? 1 : 0)
        self.ownedRooms.set(to: Double(ownedRooms))
        var text: [UInt8] = []
        registry.emit(into: &text)
        return text.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
    }
}
