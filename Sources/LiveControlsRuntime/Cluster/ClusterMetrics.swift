import Synchronization

/// Cluster counters for `GET /metrics`. Safe from any thread.
final class ClusterMetrics: Sendable {
    private struct Counts {
        var forwarded = 0
        var takeovers = 0
        var relinquished = 0
        var timeouts = 0
    }
    private let counts = Mutex(Counts())

    /// A request went to another node's inbox.
    func forwarded() { counts.withLock { $0.forwarded += 1 } }
    /// This node took a room over (created it, or recovered it from Redis).
    func tookOver() { counts.withLock { $0.takeovers += 1 } }
    /// This node stopped owning a room (lease lost, failed write, Redis gone, shutdown, handed back idle).
    func relinquished() { counts.withLock { $0.relinquished += 1 } }
    /// A forwarded request got no answer in time (the client got `unavailable`).
    func timedOut() { counts.withLock { $0.timeouts += 1 } }

    func lines(redisUp: Bool, ownedRooms: Int) -> [String] {
        let c = counts.withLock { $0 }
        return [
            "# HELP livecontrols_cluster_redis_up Whether Redis answers this node (1) or not (0).", "# TYPE livecontrols_cluster_redis_up gauge",
            "livecontrols_cluster_redis_up \(redisUp ? 1 : 0)",
            "# HELP livecontrols_cluster_owned_rooms Rooms this node owns.", "# TYPE livecontrols_cluster_owned_rooms gauge",
            "livecontrols_cluster_owned_rooms \(ownedRooms)",
            "# HELP livecontrols_cluster_forwarded_total Requests forwarded to another node.", "# TYPE livecontrols_cluster_forwarded_total counter",
            "livecontrols_cluster_forwarded_total \(c.forwarded)",
            "# HELP livecontrols_cluster_takeovers_total Rooms this node took ownership of.", "# TYPE livecontrols_cluster_takeovers_total counter",
            "livecontrols_cluster_takeovers_total \(c.takeovers)",
            "# HELP livecontrols_cluster_relinquished_total Rooms this node stopped owning.", "# TYPE livecontrols_cluster_relinquished_total counter",
            "livecontrols_cluster_relinquished_total \(c.relinquished)",
            "# HELP livecontrols_cluster_request_timeouts_total Forwarded requests the owner did not answer in time.",
            "# TYPE livecontrols_cluster_request_timeouts_total counter",
            "livecontrols_cluster_request_timeouts_total \(c.timeouts)",
        ]
    }
}
