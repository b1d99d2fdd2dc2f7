import LiveControlsRedis

/// Cluster mode (`--redis URL`): several nodes share rooms through Redis.
public struct ClusterOptions: Sendable {
    /// The Redis server every node of the cluster uses.
    public var redis: RedisEndpoint
    /// This node's name, unique in the cluster (random when not given).
    public var nodeID: String
    /// How long a room's ownership lease lasts; the owner renews it every third of this. A lost owner is
    /// replaced within about this time.
    public var leaseMilliseconds: Int = 3_000
    /// Prefix of every Redis key and channel, so several clusters can share one Redis.
    public var keyPrefix: String = "lc:"
    /// Replicas that must hold a room's write (Redis `WAIT`) before it is acknowledged to anyone (0: none, the
    /// master's answer suffices). With Sentinel, 1 keeps every acknowledged change through a failover.
    public var waitReplicas: Int = 0
    /// How long a write waits for those replicas before it counts as failed (the room stops; clients rejoin).
    public var waitMilliseconds: Int = 500

    public init(redis: RedisEndpoint, nodeID: String) {
        self.redis = redis
        self.nodeID = nodeID
    }

    /// `redis` for one of this node's connections, named `livecontrols:<node>:<role>` in Redis (`CLIENT LIST`): `store`
    /// (rooms' writes and loads), `control` (leases and upkeep), `subscriber` (patches and requests from other nodes).
    func redis(named role: String) -> RedisEndpoint {
        var endpoint = redis
        endpoint.clientName = "livecontrols:\(nodeID):\(role)"
        return endpoint
    }
}
