import ArgumentParser
import LiveControlsRuntime
import LiveControlsTransport

/// `--max-*`, rate and timeout flags; defaults come from `Limits`.
struct LimitFlags: ParsableArguments {
    @Option(help: "Largest accepted message in bytes; larger ones close the connection with 1009.")
    var maxMessageBytes = Limits().maxMessageBytes

    @Option(help: "Most open WebSocket connections; more are closed with 1013.")
    var maxConnections = Limits().maxConnections

    @Option(help: "Most loaded rooms; a join that would create or load more gets room_limit.")
    var maxRooms = Limits().maxRooms

    @Option(help: "Seconds a room nobody is in stays loaded (0: forever); then it is unloaded (a join loads it back from --data-dir, or starts it anew without one). Never the config's rooms on one node; in cluster mode their owner hands them back too (the state stays in Redis).")
    var roomIdleSeconds = Limits().roomIdleSeconds

    @Option(help: "Messages per second each connection may send (token bucket rate).")
    var rate = Limits().messagesPerSecond

    @Option(help: "Messages a connection may send in a burst (token bucket size).")
    var burst = Limits().messageBurst

    @Option(help: "Frames queued for one client before it is treated as a slow consumer.")
    var outboxMessages = Limits().outboxMessages

    @Option(help: "Bytes queued for one client before it is treated as a slow consumer.")
    var outboxBytes = Limits().outboxBytes

    @Option(help: "Milliseconds a slow consumer may take to catch up before it is dropped (it reads nothing, so no close frame reaches it).")
    var slowConsumerTimeoutMs = Limits().slowConsumerTimeoutMilliseconds

    @Option(help: "Intents that may wait for one room at once; more are refused with `overloaded` (not queued, not applied).")
    var roomQueue = Limits().roomQueueIntents

    @Option(help: "Seconds without a frame from a connection before it is pinged.")
    var pingInterval = Limits().pingIntervalSeconds

    @Option(help: "Most WebSocket connections one client address may hold at once (0: no limit); more are closed with 1013. Behind a proxy, see --trusted-proxy.")
    var maxConnectionsPerAddress = Limits().maxConnectionsPerAddress

    @Option(name: .customLong("max-http-connections"), help: "Most connections that are not (yet) WebSockets — HTTP requests, handshakes under way — at once; more are closed at accept. Never more than the open-file limit allows.")
    var maxHTTPConnections = Limits().maxHTTPConnections

    @Option(name: .customLong("max-http-connections-per-address"), help: "Connections one address may hold beyond its --max-connections-per-address WebSockets (0: no bound; none either when --max-connections-per-address is 0); more are closed at accept.")
    var maxHTTPConnectionsPerAddress = Limits().maxHTTPConnectionsPerAddress

    @Option(help: "Rooms the joins from one client address may create per minute, in bursts of as many (0: no limit); past it such a join gets room_limit.")
    var roomCreationsPerMinute = Limits().roomCreationsPerMinute

    @Option(name: .customLong("trusted-proxy"), help: "An address or CIDR network (repeatable) of a reverse proxy in front of the server: for connections from it, the client address is the last one of its X-Forwarded-For header.")
    var trustedProxies: [String] = []

    @Option(help: "Seconds without a frame (message or pong) from a connection before it is dropped.")
    var idleTimeout = Limits().idleTimeoutSeconds

    func validate() throws {
        guard maxMessageBytes >= 256 else { throw ValidationError("--max-message-bytes must be at least 256") }
        guard maxConnections >= 1, maxRooms >= 1 else { throw ValidationError("--max-connections and --max-rooms must be at least 1") }
        guard rate > 0, burst >= 1 else { throw ValidationError("--rate must be > 0 and --burst ≥ 1") }
        guard outboxMessages >= 1, outboxBytes >= 1024 else { throw ValidationError("--outbox-messages must be ≥ 1 and --outbox-bytes ≥ 1024") }
        guard maxHTTPConnections >= 1, maxHTTPConnectionsPerAddress >= 0 else {
            throw ValidationError("--max-http-connections must be at least 1 and --max-http-connections-per-address ≥ 0")
        }
        guard maxConnectionsPerAddress >= 0, roomCreationsPerMinute >= 0 else {
            throw ValidationError("--max-connections-per-address and --room-creations-per-minute must be ≥ 0 (0: no limit)")
        }
        for proxy in trustedProxies where AddressPattern(proxy) == nil {
            throw ValidationError("--trusted-proxy \(proxy): not an IPv4 or IPv6 address or CIDR network (10.0.0.0/8)")
        }
        guard roomQueue >= 1 else { throw ValidationError("--room-queue must be at least 1") }
        guard roomIdleSeconds >= 0 else { throw ValidationError("--room-idle-seconds must be ≥ 0 (0: never unload)") }
        guard slowConsumerTimeoutMs >= 1 else { throw ValidationError("--slow-consumer-timeout-ms must be ≥ 1") }
        guard pingInterval >= 1, idleTimeout > pingInterval else { throw ValidationError("--idle-timeout must be greater than --ping-interval (≥ 1)") }
    }

    var limits: Limits {
        var l = Limits()
        l.maxMessageBytes = maxMessageBytes
        l.maxConnections = maxConnections
        l.maxRooms = maxRooms
        l.roomIdleSeconds = roomIdleSeconds
        l.messagesPerSecond = rate
        l.messageBurst = burst
        l.outboxMessages = outboxMessages
        l.outboxBytes = outboxBytes
        l.slowConsumerTimeoutMilliseconds = slowConsumerTimeoutMs
        l.pingIntervalSeconds = pingInterval
        l.idleTimeoutSeconds = idleTimeout
        l.roomQueueIntents = roomQueue
        l.maxConnectionsPerAddress = maxConnectionsPerAddress
        l.roomCreationsPerMinute = roomCreationsPerMinute
        l.maxHTTPConnections = maxHTTPConnections
        l.maxHTTPConnectionsPerAddress = maxHTTPConnectionsPerAddress
        return l
    }
}
