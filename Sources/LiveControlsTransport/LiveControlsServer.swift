import CLibWebSockets
import Dispatch
import Foundation
import LiveControlsEngine
import LiveControlsProtocol
import LiveControlsRuntime
import LiveControlsSQLite
import Logging
import Synchronization

/// Why the server could not start.
public struct ServerStartError: Error, CustomStringConvertible {
    public var description: String
}

/// The LiveControls server: WebSocket protocol v1 on `/ws`, static files at `/`, `GET /healthz`.
///
/// Thread rules (see docs/ARCHITECTURE.md):
/// - One dedicated service thread runs `lws_service`; it alone touches lws objects, `connections`,
///   `httpResponses`, `apiExchanges` and each `Connection`'s service-thread fields. Everything lws is created and
///   destroyed on it.
/// - Rooms run on their own serial queues (`RoomRuntime`) and reach the service thread only
///   through `Connection` outboxes plus `Hub.wake`, which uses `lws_cancel_service`.
public final class LiveControlsServer: @unchecked Sendable {
    public let options: ServerOptions
    let logger: Logger
    let hub = Hub()
    let serviceThread = ServiceThread()
    let registry: any RoomDirectory
    let startedAt = Date()
    /// The config's dragged controls (ranges, by id): a drag's frames to them cost ¼ message (`DragPace`).
    let draggedControls: Set<String>

    // Service thread only.
    var connections: [SessionID: Connection] = [:]
    var httpResponses: [OpaquePointer: PendingHTTPResponse] = [:]
    /// Server API requests waiting for their body or their reply, by connection.
    var apiExchanges: [OpaquePointer: APIExchange] = [:]
    var nextExchange = 0
    /// HTTP connections that have had a request answered and stay open for the next (service thread): only on these
    /// can a request arrive pipelined (`checkRequest`).
    var servedBefore: Set<OpaquePointer> = []
    /// Bytes of server API bodies being received, over all connections (each counted at its declared length from its
    /// headers until its exchange ends); bounded by `apiBodyBytesInFlight` (service thread).
    var apiBodyBytesReceiving = 0
    var apiBodyBytesByAddress: [String: Int] = [:]
    var draining = false
    /// Complete messages handled in the current `lws_service` pass, and the connection of the last one
    /// (`flushReady`: one message → written at once, its sender last; more → batched by writable callbacks).
    var messagesThisPass = 0
    var senderThisPass: Connection?
    /// Scratch space for batched writes.
    let writeBatch = BatchBuffer()
    /// Large writes' share of each pass (`LiveControlsServer+WriteBudget.swift`). Touched on every write: exclusive by
    /// being the service thread's alone (asserted where it is used), so not checked again at run time — a dynamic
    /// exclusivity check costs ~80 instructions an access (docs/benchmarks/HISTORY.md, "Stop 37").
    @exclusivity(unchecked) var writeTurns = WriteTurns()
    var drainDeadline: DispatchTime = .distantFuture
    /// Past the grace, closes wait for rooms (their durable acks) until this (`ServerOptions.shutdownRoomWaitMilliseconds`).
    var roomWaitDeadline: DispatchTime = .distantFuture
    /// When a draining connection's outbox was last sealed: its last messages and close frame get 200 ms from then.
    var lastSealAt = DispatchTime(uptimeNanoseconds: 0)
    /// Each client address's share of connections and room creations.
    let shares: AddressShares
    /// Sockets lws holds, bounded at accept (service thread; set once the context exists).
    var socketBudget: SocketBudget!
    /// The web root with every symlink resolved: static files must resolve inside it.
    let resolvedWebRoot: String?
    private var context: OpaquePointer?

    private struct Lifecycle {
        var port: Int? = nil
        var startError: String? = nil
        var stopped = false
    }
    private let lifecycle = Mutex(Lifecycle())
    private let started = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Opens the store (`options.dataDirectory`, or memory) and prepares the rooms; throws when the
    /// store cannot be opened.
    public init(options: ServerOptions, logger: Logger) throws {
        precondition(Frame.headroomFitsLWS, "libwebsockets' LWS_PRE is larger than Frame.headroom")
        precondition(FrameHeader.maxLength <= Frame.headroom, "a frame header does not fit in Frame.headroom")
        self.options = options
        self.draggedControls = options.config.draggedControlIDs
        self.logger = logger
        self.shares = AddressShares(limits: options.limits, trustedProxies: options.trustedProxies)
        self.resolvedWebRoot = options.webRoot.flatMap { root in
            realpath(root, nil).map { resolved in
                defer { free(resolved) }
                return String(cString: resolved)
            }
        }
        if let cluster = options.cluster {
            self.registry = ClusterDirectory(options: cluster, config: options.config, maxRooms: options.limits.maxRooms, waker: hub,
                                             logger: logger, roomQueueIntents: options.limits.roomQueueIntents)
            return
        }
        let store: any RoomStore
        if let directory = options.dataDirectory {
            do {
                store = try SQLiteRoomStore(directory: directory)
            } catch {
                throw ServerStartError(description: "cannot open the store in \(directory): \(error)")
            }
        } else {
            store = MemoryRoomStore()
        }
        self.registry = RoomRegistry(config: options.config, maxRooms: options.limits.maxRooms, store: store, waker: hub, logger: logger,
                                     roomQueueIntents: options.limits.roomQueueIntents)
    }

    /// The port actually bound (after `start`).
    public var port: Int? { lifecycle.withLock { $0.port } }

    /// Starts the service thread and returns once the port is bound (or throws why it could not be).
    @discardableResult
    public func start() throws -> Int {
        registry.sessions.closer = self
        do {
            try registry.start()
        } catch {
            throw ServerStartError(description: "cannot recover rooms: \(error)")
        }
        let thread = Thread { [self] in self.serviceThreadMain() }
        thread.name = "livecontrols-lws"
        thread.start()
        started.wait()
        let state = lifecycle.withLock { $0 }
        if let error = state.startError { throw ServerStartError(description: error) }
        return state.port!
    }

    /// Begins a graceful shutdown: every client gets close 1001, then the service thread ends.
    public func shutdown() {
        hub.requestShutdown()
    }

    /// Blocks until the service thread has finished and the context is destroyed.
    public func waitUntilStopped() {
        finished.wait()
        finished.signal()
    }

    // MARK: Service thread

    private func serviceThreadMain() {
        serviceThread.claim()
        let allocations = CAllocations()
        var info = makeContextInfo(allocations)
        LibraryLog.route(to: logger)
        guard let context = lws_create_context(&info) else {
            let why = options.tls == nil ? "address in use or not available" : "address in use, or the TLS certificate or key cannot be loaded"
            lifecycle.withLock { $0.startError = "cannot listen on \(options.host):\(options.port) (\(why))" }
            started.signal()
            finished.signal()
            return
        }
        self.context = context
        let files = SocketBudget.processFiles()
        socketBudget = SocketBudget(openFileLimit: files.limit, openAtStart: files.open, maxConnections: options.limits.maxConnections,
                                    maxHTTP: options.limits.maxHTTPConnections, maxConnectionsPerAddress: options.limits.maxConnectionsPerAddress,
                                    maxHTTPPerAddress: options.limits.maxHTTPConnectionsPerAddress, trustedProxies: options.trustedProxies)
        logger.debug("socket budget", metadata: ["sockets": "\(socketBudget.maxSockets)", "http": "\(socketBudget.maxHTTP)",
                                                 "perAddress": "\(socketBudget.maxPerAddress)"])
        hub.setContext(context)
        let port = Int(lws_get_vhost_listen_port(lws_get_vhost_by_name(context, "default")))
        lifecycle.withLock { $0.port = port }
        started.signal()

        // Once a second the service thread looks for slow consumers that never caught up.
        let sweeper = DispatchSource.makeTimerSource(queue: .global())
        sweeper.schedule(deadline: .now() + .seconds(1), repeating: .seconds(1))
        let hub = self.hub
        sweeper.setEventHandler { @Sendable in hub.requestSweep() }
        sweeper.resume()
        var ticker: DispatchSourceTimer? = nil
        var cpu = ThreadCPUClock()
        while true {
            _ = lws_service(context, 0)
            if hub.hasReady || messagesThisPass > 0 { flushReady() }
            let passMicroseconds = cpu.lap()
            shareWriteBudget(now: cpu.last)
            hub.notePass(microseconds: passMicroseconds, backlog: writeTurns.isBehind(now: Transport.now().nanoseconds))
            if draining {
                if ticker == nil {
                    // lws_service may sleep until the next socket event: poke it while draining.
                    let t = DispatchSource.makeTimerSource(queue: .global())
                    t.schedule(deadline: .now(), repeating: .milliseconds(50))
                    t.setEventHandler { @Sendable in hub.requestShutdown() }
                    t.resume()
                    ticker = t
                }
                if connections.isEmpty { break }
                if DispatchTime.now() >= drainDeadline {
                    let waiting = connections.values.contains { $0.closeBarriers > 0 }
                    if waiting && DispatchTime.now() < roomWaitDeadline {
                        // Rooms still carry out and store what they were applying (a slow store): their acks go
                        // before the close, so wait on (looked at again on the drain ticker's next poke).
                        drainDeadline = .now() + .milliseconds(50)
                    } else if waiting {
                        // A store that did not finish in time (stalled): those closes go now (`lastSealAt`).
                        _ = forceCloses()
                        drainDeadline = .now() + .milliseconds(200)
                    } else if DispatchTime.now() < lastSealAt + .milliseconds(200) {
                        // Closes sealed just now (their rooms finished late, or were forced): their acks and close
                        // frames go out in the next passes.
                        drainDeadline = lastSealAt + .milliseconds(200)
                    } else {
                        break
                    }
                }
            }
        }
        ticker?.cancel()
        sweeper.cancel()
        hub.notePass(microseconds: 0)  // no more passes: no room may wait for one
        hub.setContext(nil)
        for connection in connections.values { connection.abandon() }
        registry.stopAll()
        lws_context_destroy(context)
        self.context = nil
        withExtendedLifetime(allocations) {}
        lifecycle.withLock { $0.stopped = true }
        logger.info("stopped")
        finished.signal()
    }

    /// The name of the vhost's HTTP protocol (lws's protocols[0], the callback mounts' origin). A client may offer it as a
    /// WebSocket subprotocol too: lws would bind the upgrade to it (`LWS_CALLBACK_HTTP_CONFIRM_UPGRADE` refuses that).
    static let httpProtocolName = "http"

    private func makeContextInfo(_ a: CAllocations) -> lws_context_creation_info {
        // Protocols: [0] http (also serves /healthz), [1] livecontrols.v1, [2] terminator.
        let protocols = a.allocate(lws_protocols.self, count: 3)
        protocols[0].name = a.string(Self.httpProtocolName)
        protocols[0].callback = lwsCallback
        protocols[1].name = a.string(protocolName)
        protocols[1].callback = lwsCallback
        protocols[1].per_session_data_size = MemoryLayout<UnsafeMutableRawPointer>.size
        // lws allocates this receive buffer per connection: keep it small (messages larger than it arrive in
        // pieces and are reassembled), which keeps idle connections cheap.
        protocols[1].rx_buffer_size = 1024
        // Without this, lws also caps each write at rx_buffer_size: batched writes need the room.
        protocols[1].tx_packet_size = 256 * 1024

        // Clients that offer no subprotocol bind to the vhost's default protocol: make it ours.
        let pvoDefault = a.allocate(lws_protocol_vhost_options.self)
        pvoDefault.pointee.name = a.string("default")
        pvoDefault.pointee.value = a.string("1")
        let pvo = a.allocate(lws_protocol_vhost_options.self)
        pvo.pointee.name = a.string(protocolName)
        pvo.pointee.value = a.string("")
        pvo.pointee.options = UnsafePointer(pvoDefault)

        // Mounts: /healthz, /readyz, /api and /metrics → our http callback; / → the web root's files.
        let health = a.allocate(lws_http_mount.self)
        health.pointee.mountpoint = a.string("/healthz")
        health.pointee.mountpoint_len = UInt8("/healthz".utf8.count)
        health.pointee.origin = a.string(Self.httpProtocolName)
        shim_mount_set_protocol(health, UInt8(LWSMPRO_CALLBACK.rawValue))
        let metrics = a.allocate(lws_http_mount.self)
        metrics.pointee.mountpoint = a.string("/metrics")
        metrics.pointee.mountpoint_len = UInt8("/metrics".utf8.count)
        metrics.pointee.origin = a.string(Self.httpProtocolName)
        shim_mount_set_protocol(metrics, UInt8(LWSMPRO_CALLBACK.rawValue))
        let ready = a.allocate(lws_http_mount.self)
        ready.pointee.mountpoint = a.string("/readyz")
        ready.pointee.mountpoint_len = UInt8("/readyz".utf8.count)
        ready.pointee.origin = a.string(Self.httpProtocolName)
        shim_mount_set_protocol(ready, UInt8(LWSMPRO_CALLBACK.rawValue))
        // The server API: every method, every path under /api (the router answers 404 for what it does not have).
        let api = a.allocate(lws_http_mount.self)
        api.pointee.mountpoint = a.string("/api")
        api.pointee.mountpoint_len = UInt8("/api".utf8.count)
        api.pointee.origin = a.string(Self.httpProtocolName)
        shim_mount_set_protocol(api, UInt8(LWSMPRO_CALLBACK.rawValue))
        health.pointee.mount_next = UnsafePointer(ready)
        ready.pointee.mount_next = UnsafePointer(api)
        api.pointee.mount_next = UnsafePointer(metrics)
        let mounts = UnsafePointer(health)
        // Every other path: the web root's files, answered by the server itself (`StaticFiles`), or 404.
        let files = a.allocate(lws_http_mount.self)
        files.pointee.mountpoint = a.string("/")
        files.pointee.mountpoint_len = 1
        files.pointee.origin = a.string(Self.httpProtocolName)
        shim_mount_set_protocol(files, UInt8(LWSMPRO_CALLBACK.rawValue))
        metrics.pointee.mount_next = UnsafePointer(files)

        // No lws keepalive (both times 0): lws keeps each connection's validity timer in one sorted list, and every
        // connection's pong or open inserts into it by walking it, O(connections) each, which at 18,000 connections
        // took a tenth of the server's CPU. Idle connections are pinged and dropped by the sweep instead
        // (`LiveControlsServer+Keepalive.swift`).
        let retry = a.allocate(lws_retry_bo_t.self)
        retry.pointee.secs_since_valid_ping = 0
        retry.pointee.secs_since_valid_hangup = 0

        var info = lws_context_creation_info()
        info.retry_and_idle_policy = UnsafePointer(retry)
        info.port = Int32(options.port)
        info.iface = (options.host.isEmpty || options.host == "0.0.0.0") ? nil : a.string(options.host)
        info.protocols = UnsafePointer(protocols)
        info.pvo = UnsafePointer(pvo)
        info.mounts = mounts
        info.vhost_name = a.string("default")
        info.server_string = a.string("livecontrols")
        info.options = UInt64(LWS_SERVER_OPTION_VALIDATE_UTF8)
            | UInt64(LWS_SERVER_OPTION_HTTP_HEADERS_SECURITY_BEST_PRACTICES_ENFORCE)
        if options.host.contains(".") { info.options |= UInt64(LWS_SERVER_OPTION_DISABLE_IPV6) }
        if let tls = options.tls {
            // https and wss on the same port (OpenSSL through libwebsockets).
            info.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
            info.ssl_cert_filepath = a.string(tls.certificate)
            info.ssl_private_key_filepath = a.string(tls.privateKey)
            // HTTP/1.1 only: offered h2, a browser that already has an HTTP/2 connection opens its WebSocket as an HTTP/2
            // stream (RFC 8441's extended CONNECT, which lws 4.1 advertises), and lws 4.1 gives that stream neither the
            // path the server checks nor a tested write path: the WebSocket would never open.
            info.alpn = UnsafePointer(a.string("http/1.1"))
        }
        info.user = Unmanaged.passUnretained(self).toOpaque()
        return info
    }
}


