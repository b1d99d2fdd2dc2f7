import Dispatch
import Foundation
import LiveControlsEngine
import LiveControlsProtocol
import LiveControlsRedis
import Logging
import Synchronization

/// Cluster mode's rooms: any node accepts any client for any room; each room has one owner node at a time.
///
/// - The owner holds the lease `lease:<room>` (fencing token from `fence:<room>`), runs the engine `Room` in
///   a `RoomRuntime` whose store is a `RedisRoomStore`: each patch is written to Redis and published in one
///   fenced script, before any ack. It renews its leases every third of the lease time and stops acting for
///   a room the moment a write fails, Redis says its lease was lost, or a renewal failed and a retry could no longer
///   come before the lease lapses (`LeaseTiming`).
/// - Every node keeps a `ClusterRoom` per room its connections use: it forwards their requests to the owner
///   (through the owner's inbox channel, or directly when the owner is this node) and delivers what the
///   owner publishes.
/// - A room without a live owner is taken over by the next node that needs it (a request, or the ticker for
///   rooms with sessions here): it acquires the lease, loads the state from Redis, ends the holds the lost
///   owner ran (reason `failover`) and drops the members of nodes that are gone.
///
/// Thread rules: ownership changes (acquire, load, relinquish) run on the link queue; leases are renewed on
/// the control link's queue, with its own Redis connection, so a backlog of room traffic can never starve a
/// renewal. `rooms`, `owned`, `owners` and the subscriber flag are behind mutexes (read from the subscriber
/// thread, the service thread and the room queues).
package final class ClusterDirectory: RoomDirectory, @unchecked Sendable {
    /// How a join may create the room, if it turns out not to exist: the template asked for, and why not.
    struct Creation: Sendable {
        var template: String?
        var refusal: ProtocolError?
        /// Asked when the room is created (`takeCreation` of the join), on the node that creates it.
        var take: (@Sendable () -> ProtocolError?)? = nil
    }

    struct Owned {
        let runtime: RoomRuntime
        let store: RedisRoomStore
        /// When the lease was last confirmed: the send time of its acquisition or of the last renewal that succeeded
        /// (`LeaseTiming.deadline`).
        var leaseConfirmed: Instant
    }

    /// A lease acquired: its fencing token, and when it was asked for.
    struct Lease {
        let fence: Int64
        let asked: Instant
    }

    let options: ClusterOptions
    let config: ServerConfig
    let keys: ClusterKeys
    /// Room traffic (writes, replies, forwarded requests) and ownership changes.
    let link: RedisLink
    /// Liveness and lease renewals only.
    let control: RedisLink
    let waker: any SubscriberWaker
    package let metrics = ServerMetrics()
    package let sessions = SessionCloserSlot()
    let clusterMetrics = ClusterMetrics()
    let scheduler: any RoomScheduler
    let logger: Logger
    let maxRooms: Int
    /// Sends the webhook events of the rooms this node owns (nil: none configured); their outbox is in Redis.
    package let webhooks: WebhookDispatcher?
    let webhookOutbox: RedisWebhookStore
    /// Intents that may wait for one owned room (`Limits.roomQueueIntents`).
    let roomQueueIntents: Int
    /// Asks the app's backend about hooked intents of the rooms this node owns (nil when no template has a hook).
    let hooks: IntentHookClient?
    var nodeID: String { options.nodeID }
    var replyTimeoutMilliseconds: Int { options.leaseMilliseconds + 1_000 }

    let rooms = Mutex<[String: ClusterRoom]>([:])
    let owned = Mutex<[String: Owned]>([:])
    /// The owner of each room, as last seen.
    let owners = Mutex<[String: String]>([:])
    /// Whether the link queue has a maintenance pass waiting (member drops, takeovers, timeouts).
    let maintenancePending = Mutex(false)
    /// Server API requests waiting for their answer, by token.
    let adminWaiters = Mutex<[Int: AdminWaiter]>([:])
    private let tokens = Mutex(0)
    let subscriberUp = Mutex(false)
    /// The node is stopping (SIGTERM's `beginShutdown`, or `stopAll`): it takes no room's lease any more — a room it
    /// took back during its own shutdown would leave with it, its lease held, and the next owner would wait for the
    /// lease to lapse (issue 42).
    let stopping = Atomic<Bool>(false)
    /// Signalled when the subscriber first connects (`start` waits for it).
    let firstSubscription = DispatchSemaphore(value: 0)
    let subscribedOnce = Atomic<Bool>(false)
    /// The subscriptions' last refusal logged (`subscriberRefused`), nil once they succeed.
    let subscriberRefusal = Mutex<String?>(nil)
    private var subscriber: RedisSubscriber?
    private var ticker: (any RoomTimer)?
    /// The ticker's period, its commands' time-out and its retries.
    let leaseTiming: LeaseTiming
    /// Stops each owned room at its deadline (`LeaseTiming.deadline`) unless a renewal moved it on, whatever the control
    /// queue is doing (a renewal may wait on a stalled Redis). Armed, for the earliest deadline, only on `watchdogQueue`
    /// (`checkLeases`).
    var watchdog: (any RoomTimer)?
    let watchdogQueue = DispatchQueue(label: "livecontrols.cluster.lease-watchdog")
    /// Control link queue only: when the ticker fires next (deadlines on a fixed grid, so ticks do not drift).
    private var nextTick = Instant(nanoseconds: 0)
    /// Link queue only: when the next look for orphaned webhook outboxes is due (`sweepOrphanedOutboxes`).
    var nextOutboxSweep = Instant(nanoseconds: 0)
    /// Control link queue only: an outage of Redis was logged (once, until it answers again).
    var redisLostLogged = false
    /// Control link queue only: a renewal failed and rooms were kept for its retry (logged once, until one succeeds).
    var renewalRetrying = false
    /// Control link queue only, sentinel mode: the master the control connection reached last (logged when it changes).
    var lastMaster: String?

    package init(options: ClusterOptions, config: ServerConfig, maxRooms: Int, waker: any SubscriberWaker,
         scheduler: any RoomScheduler = TimerThreadScheduler.shared, logger: Logger, webhookTransport: (any WebhookTransport)? = nil,
         hookTransport: (any HookTransport)? = nil, roomQueueIntents: Int = Limits().roomQueueIntents) {
        self.roomQueueIntents = roomQueueIntents
        self.hooks = IntentHookClient.make(for: config, transport: hookTransport, metrics: metrics)
        self.options = options
        self.config = config
        self.maxRooms = maxRooms
        self.keys = ClusterKeys(prefix: options.keyPrefix)
        let timeout = min(1_000, max(100, options.leaseMilliseconds / 3))
        self.link = RedisLink(endpoint: options.redis(named: "store"), timeoutMilliseconds: timeout, waitReplicas: options.waitReplicas,
                              waitMilliseconds: options.waitMilliseconds)
        self.leaseTiming = LeaseTiming(lease: options.leaseMilliseconds)
        // A retry of a failed renewal may connect again (the connection's own pause after a failure is no longer).
        self.control = RedisLink(endpoint: options.redis(named: "control"), timeoutMilliseconds: leaseTiming.commandTimeout,
                                 reconnectIntervalMilliseconds: min(200, leaseTiming.retryDelay))
        self.waker = waker
        self.scheduler = scheduler
        var logger = logger
        logger[metadataKey: "node"] = "\(options.nodeID)"
        self.logger = logger
        let outbox = RedisWebhookStore(link: link, keys: keys)
        self.webhookOutbox = outbox
        self.webhooks = config.webhooks.isEmpty ? nil : WebhookDispatcher(
            endpoints: config.webhooks, changeIntervalMs: config.webhookChangeIntervalMs, store: outbox,
            transport: webhookTransport ?? CurlWebhookTransport(), scheduler: scheduler, metrics: metrics, logger: logger,
            wallClock: { Int((Date().timeIntervalSince1970 * 1000).rounded(.down)) })
        outbox.ownedRooms = { [unowned self] in owned.withLock { Array($0.keys) } }
    }

    func nextToken() -> Int { tokens.withLock { $0 += 1; return $0 } }

    // MARK: RoomDirectory

    package var count: Int { rooms.withLock { Set($0.keys) }.union(owned.withLock { Set($0.keys) }).count }

    /// Control link queue: the next tick, a period after the last deadline (or after now, when far behind); a retry
    /// of a failed renewal sooner (`LeaseTiming.retryDelay`).
    private func armNextTick(retry: Bool) {
        assertOnQueue(control.queue)
        let now = scheduler.now()
        if retry {
            nextTick = Instant(nanoseconds: now.nanoseconds + UInt64(leaseTiming.retryDelay) * 1_000_000)
        } else {
            let period = UInt64(leaseTiming.period) * 1_000_000
            nextTick = Instant(nanoseconds: nextTick.nanoseconds + period)
            if nextTick < now { nextTick = Instant(nanoseconds: now.nanoseconds + period) }
        }
        ticker?.schedule(at: nextTick)
    }

    package func start() throws {
        RedisProcess.ignoreSIGPIPE()
        try webhooks?.start()
        let subscriber = RedisSubscriber(
            endpoint: options.redis(named: "subscriber"), channels: [keys.inbox(nodeID)], patterns: [keys.patchPattern],
            // A PING after a third of the lease (at most 1 s) of silence; the connection counts as lost only when Redis has
            // not answered a PING for a whole lease (as long as an owner may go without renewing): each loss makes
            // every member here resync and every waiting request `unavailable`, which a pause of a few hundred ms
            // (a busy machine, a Redis fork) is not worth.
            pingIntervalMilliseconds: min(1_000, max(100, options.leaseMilliseconds / 3)),
            answerTimeoutMilliseconds: options.leaseMilliseconds,
            onMessage: { [unowned self] channel, payload in self.received(channel: channel, payload: payload) },
            onConnection: { [unowned self] up, why in self.subscriberChanged(up: up, lostBecause: why) },
            onRefused: { [unowned self] message in self.subscriberRefused(message) })
        self.subscriber = subscriber
        subscriber.start()
        // Serve only once subscribed (bounded by a lease: a Redis down at start leaves the node up but not ready): a
        // request sent before would have its answer published where this node does not listen yet, so the first
        // subscription fails every request waiting here (`redisReconnected`) — a join right after the start line got
        // `unavailable`, and /healthz said `degraded` (issue 42).
        _ = firstSubscription.wait(timeout: .now() + .milliseconds(options.leaseMilliseconds))
        // Every third of the lease, on the control link's queue, through the scheduler (a manual clock in tests).
        let ticker = scheduler.makeTimer(on: control.queue) { [unowned self] in
            self.armNextTick(retry: !self.tick())
        }
        self.ticker = ticker
        watchdog = scheduler.makeTimer(on: watchdogQueue) { [unowned self] in self.checkLeases() }
        control.queue.async { [self] in
            nextTick = scheduler.now()
            ticker.schedule(at: nextTick)
        }
        logger.notice("cluster mode", metadata: ["redis": "\(options.redis)", "leaseMs": "\(options.leaseMilliseconds)"])
    }

    package func beginShutdown() {
        stopping.store(true, ordering: .releasing)
        // Hooked intents still waiting are refused before connections close (`RoomRuntime.beginShutdownOfHooks`).
        for owner in owned.withLock({ Array($0.values) }) { owner.runtime.beginShutdownOfHooks() }
    }

    package func stopAll() {
        stopping.store(true, ordering: .releasing)
        ticker?.cancel()
        control.queue.sync {}  // a tick under way ends first
        watchdog?.cancel()
        watchdogQueue.sync {}  // a look under way ends first (one asked later finds a cancelled timer)
        let handedBack = owned.withLock { $0 }
        // First the rooms stop acting: a request that reaches one from now on is refused (`unavailable`, retry),
        // and every reply they sent is in the link's pipeline before what follows.
        for owner in handedBack.values {
            owner.runtime.relinquish()
            owner.runtime.queue.sync {}
        }
        link.queue.sync {
            // Hand every room back at once, so other nodes take over without waiting for the lease to lapse.
            for (name, owner) in handedBack {
                owner.runtime.stop()
                owner.store.stop()
                releaseLeaseAfterItsWrites(name, fence: owner.store.fence)
            }
            owned.withLock { $0.removeAll() }
            // Sessions here are gone too: owners elsewhere may drop them now rather than a lease later.
            _ = try? link.run { c throws(RedisError) in try c.command(["DEL", keys.alive(nodeID)]) }
        }
        // Every node with requests on their way here fails them now (`unavailable`, retry) and asks Redis for the
        // owner again, instead of waiting a lease for answers that will not come. Through the pipeline, so after
        // every reply this node sent: nothing it answered is failed.
        for name in handedBack.keys { link.publish(keys.patches(name), ClusterEnvelope.release(owner: nodeID)) }
        link.waitUntilSent()
        // What it had not sent stays in the rooms' outboxes in Redis: their next owners send it.
        webhooks?.stop()
        hooks?.stop()
        subscriberUp.withLock { $0 = false }  // its stop is no lost connection: nothing to warn about
        subscriber?.stop()
        link.close()
        control.close()
    }

    package func room(named name: String, template: String?,
              mayCreate: @escaping @Sendable (_ template: String?, _ defaultTemplate: String) -> ProtocolError?,
              takeCreation: @escaping @Sendable () -> ProtocolError?) throws(ProtocolError) -> any RoomEndpoint {
        // Whether this join may create the room is known now; whether it must is known only to Redis. A room of
        // the config exists from the start on a single node; here the first node to need it creates it.
        var creation = Creation(template: nil, refusal: config.creationRefusal(room: name, template: template, mayCreate: mayCreate),
                                take: takeCreation)
        if creation.refusal == nil {
            do throws(ProtocolError) { creation.template = try config.recipe(forRoom: name, template: template).name } catch { creation.refusal = error }
        }
        let result: Result<ClusterRoom, ProtocolError> = rooms.withLock { rooms in
            if let existing = rooms[name] { return .success(existing) }
            guard rooms.count < maxRooms else {
                return .failure(ProtocolError(.roomLimit, "this node already serves \(maxRooms) rooms", room: name))
            }
            let room = ClusterRoom(name: name, directory: self)
            rooms[name] = room
            return .success(room)
        }
        return ClusterRoomHandle(room: try result.get(), creation: creation)
    }

    /// The once-a-second sweep (service thread). This node's view of a room (`ClusterRoom`) that no session here
    /// has used for `idleSeconds` is dropped; a room this node owns that no member anywhere has been in for as
    /// long is handed back: the runtime retires, the lease is released, the state stays in Redis, and the next
    /// node that needs the room takes it over from there (same epoch and version).
    package func unloadIdleRooms(idleSeconds: Int) {
        guard idleSeconds > 0 else { return }
        let now = scheduler.now().nanoseconds
        let idle = UInt64(idleSeconds) * 1_000_000_000
        guard now > idle else { return }
        let cutoff = now - idle
        // Joins are dispatched from this thread, so none can fall between a room's last check and its removal.
        rooms.withLock { rooms in
            for (name, room) in rooms {
                guard let since = room.idleSince, since.nanoseconds <= cutoff, room.retireIfUnused(idleSince: cutoff) else { continue }
                rooms[name] = nil
                forgetOwner(name)  // asked again next time: the owner may hand it back meanwhile
                metrics.roomUnloaded()
                logger.debug("room view dropped: no session here used it for the idle time", metadata: ["room": "\(name)"])
            }
        }
        for (name, mine) in owned.withLock({ $0 }) {
            guard let since = mine.runtime.emptySince, since.nanoseconds <= cutoff else { continue }
            // Checked and retired on the room's own queue, which then takes `owned` (room queue → `owned`: nothing
            // holds `owned` while it waits for a room queue, which runs on the bounded pool). A request dispatched
            // to the runtime before this block took the lock finds it retired and is refused with `notOwner`.
            mine.runtime.queue.async { [self] in
                let released = owned.withLock { owned -> Bool in
                    guard owned[name]?.runtime === mine.runtime, mine.runtime.retireOnQueueIfUnused(emptySince: cutoff) != nil else {
                        return false
                    }
                    owned[name] = nil
                    return true
                }
                guard released else { return }
                link.queue.async { [self] in
                    forgetOwner(name)
                    mine.store.stop()
                    releaseLeaseAfterItsWrites(name, fence: mine.store.fence)
                    clusterMetrics.relinquished()
                    logger.info("room handed back: nobody was in it for the idle time", metadata: ["room": "\(name)"])
                }
            }
        }
    }

    package func metricLines() -> [String] {
        clusterMetrics.lines(redisUp: health().ready, ownedRooms: owned.withLock { $0.count })
    }
}
