import Foundation
import ArgumentParser
import LiveControlsRedis
import LiveControlsRuntime
import LiveControlsTransport

/// `--redis` (and its TLS settings), `--node-id`, `--lease-ms`: cluster mode.
struct ClusterFlags: ParsableArguments {
    @Option(help: "Cluster mode: share rooms with other nodes through this Redis (redis://[[user]:password@]host[:port][/db]; the password may come from LIVECONTROLS_REDIS_PASSWORD instead), or through the master that Redis Sentinel names (redis-sentinel://[[user]:password@]sentinel1[:26379][,sentinel2…]/MASTER[/db]: every connect asks the sentinels, so a failover is followed; sentinels with a password of their own take it from LIVECONTROLS_REDIS_SENTINEL_PASSWORD, and an ACL user from LIVECONTROLS_REDIS_SENTINEL_USERNAME). rediss:// and rediss-sentinel:// connect over TLS (see --redis-tls-…). Without it the server runs alone.")
    var redis: String?

    @Option(help: "Cluster mode over TLS (rediss:// or rediss-sentinel://): the CA certificates (PEM) that Redis's certificate must chain to; without it, the system's trust store.")
    var redisTlsCaCertFile: String?

    @Option(help: "Cluster mode over TLS: this node's client certificate (PEM), for a Redis with tls-auth-clients; needs --redis-tls-key-file.")
    var redisTlsCertFile: String?

    @Option(help: "Cluster mode over TLS: the private key (PEM) of --redis-tls-cert-file.")
    var redisTlsKeyFile: String?

    @Option(help: "Cluster mode over TLS: the name Redis's certificate must carry (and the SNI sent), instead of the host connected to (with Sentinel: the addresses the sentinels name).")
    var redisTlsServerName: String?

    @Option(help: "Cluster mode: replicas that must hold each room write (Redis WAIT) before it is acknowledged; 0 acknowledges on the master's answer. With Sentinel, 1 keeps every acknowledged change through a failover.")
    var redisWaitReplicas = 0

    @Option(help: "Cluster mode: milliseconds a write waits for --redis-wait-replicas before it fails (the room stops and its clients join again).")
    var redisWaitMs = 500

    @Option(help: "Cluster mode: this node's id, unique in the cluster (letters, digits, '_', '-', '.'); random when not given.")
    var nodeID: String?

    @Option(help: "Cluster mode: milliseconds a room's ownership lease lasts; a lost owner is replaced within about 1⅓ of it (the lease runs out, then the next upkeep).")
    var leaseMs = 3_000

    @Option(help: "Cluster mode: prefix of every Redis key and channel (several clusters can share one Redis).")
    var redisPrefix = "lc:"

    func validate() throws {
        if let nodeID, nodeID.isEmpty || nodeID.count > 64 || !nodeID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "_-.".contains($0)) }) {
            throw ValidationError("--node-id must be 1…64 of A-Z a-z 0-9 _ - .")
        }
        guard (300...600_000).contains(leaseMs) else { throw ValidationError("--lease-ms must be between 300 and 600000") }
        if redis != nil { _ = try endpoint() }
        guard (0...16).contains(redisWaitReplicas) else { throw ValidationError("--redis-wait-replicas must be between 0 and 16") }
        guard (10...60_000).contains(redisWaitMs) else { throw ValidationError("--redis-wait-ms must be between 10 and 60000") }
        guard !redisPrefix.contains(where: { $0 == "\t" || $0 == "\n" || $0 == " " }) else {
            throw ValidationError("--redis-prefix may not contain spaces, tabs or newlines")
        }
    }

    /// `--redis`, with the password from LIVECONTROLS_REDIS_PASSWORD when the URL has none (so it stays out of
    /// the command line, which `ps` shows). The error messages never show a password.
    private func endpoint() throws -> RedisEndpoint {
        var endpoint: RedisEndpoint
        do { endpoint = try RedisEndpoint(url: redis ?? "") } catch { throw ValidationError("--redis: \(error)") }
        if endpoint.password == nil, let password = ProcessInfo.processInfo.environment["LIVECONTROLS_REDIS_PASSWORD"], !password.isEmpty {
            endpoint.password = password
        }
        if endpoint.username != nil && endpoint.password == nil {
            throw ValidationError("--redis: the user \(endpoint.username!) needs a password (in the URL or in LIVECONTROLS_REDIS_PASSWORD)")
        }
        let environment = ProcessInfo.processInfo.environment
        let sentinelUser = environment["LIVECONTROLS_REDIS_SENTINEL_USERNAME"].flatMap { $0.isEmpty ? nil : $0 }
        let sentinelPassword = environment["LIVECONTROLS_REDIS_SENTINEL_PASSWORD"].flatMap { $0.isEmpty ? nil : $0 }
        if endpoint.masterName != nil {
            if sentinelUser != nil && sentinelPassword == nil {
                throw ValidationError("LIVECONTROLS_REDIS_SENTINEL_USERNAME needs LIVECONTROLS_REDIS_SENTINEL_PASSWORD")
            }
            endpoint.sentinelUsername = sentinelUser
            endpoint.sentinelPassword = sentinelPassword
        }
        let tlsFlags = [redisTlsCaCertFile, redisTlsCertFile, redisTlsKeyFile, redisTlsServerName]
        if endpoint.tls == nil {
            guard tlsFlags.allSatisfy({ $0 == nil }) else {
                throw ValidationError("--redis-tls-… options need a TLS URL in --redis (rediss:// or rediss-sentinel://)")
            }
            return endpoint
        }
        guard (redisTlsCertFile == nil) == (redisTlsKeyFile == nil) else {
            throw ValidationError("--redis-tls-cert-file and --redis-tls-key-file go together")
        }
        if let name = redisTlsServerName, name.isEmpty || name.contains(where: \.isWhitespace) {
            throw ValidationError("--redis-tls-server-name must be a host name or address")
        }
        let tls = RedisTLS(caCertificateFile: redisTlsCaCertFile, certificateFile: redisTlsCertFile,
                           keyFile: redisTlsKeyFile, serverName: redisTlsServerName)
        do { try tls.check() } catch { throw ValidationError("--redis: \(error.message)") }
        endpoint.tls = tls
        return endpoint
    }

    /// Nil without `--redis`.
    func options(randomID: () -> String) throws -> ClusterOptions? {
        guard redis != nil else { return nil }
        var options = ClusterOptions(redis: try endpoint(), nodeID: nodeID ?? randomID())
        options.leaseMilliseconds = leaseMs
        options.keyPrefix = redisPrefix
        options.waitReplicas = redisWaitReplicas
        options.waitMilliseconds = redisWaitMs
        return options
    }
}
