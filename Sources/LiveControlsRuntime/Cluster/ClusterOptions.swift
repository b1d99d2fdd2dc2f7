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

    public init(redis: RedisEndpoint, nodeID: String) {
        self.redis = redis
        self.nodeID = nodeID
    }
}
