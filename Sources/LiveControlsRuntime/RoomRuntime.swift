import Dispatch
import LiveControlsEngine
import LiveControlsProtocol
import Logging
import Synchronization

/// The owner of one live room: its serial queue, its timers, its subscribers and its persistence.
///
/// Thread rules: every stored `var` is touched only on `queue` (the extensions in RoomRuntime+Cluster.swift,
/// RoomRuntime+Members.swift and RoomRuntime+Unloading.swift included). Intents, joins, leaves and timer
/// firings are all enqueued on `queue`, so they are totally ordered and the engine's `Room` value
/// needs no lock. Each patch is encoded once and the same `Frame` goes to every subscriber.
///
/// Durability: each patch is written to the store; nothing that shows a version (patch, snapshot,
/// ack) leaves the room before that version is durable. Outgoing actions wait, in order, in `held`.
///
/// Subscribers are whoever listens (`RoomSubscriber`): the runtime never knows what transport they use. Those
/// whose `deliver` asks for it are woken through `waker` (the transport's hub), one call per fan-out.
///
/// Cluster mode (`localDelivery == false`): the runtime is the room's owner on this node. Its store
/// (`RedisRoomStore`) publishes each patch to every node with the fenced write, so the runtime keeps no
/// local subscribers; its members are `RemoteSession`s (each on a `node`) and replies travel back through Redis.
final class RoomRuntime: RoomEndpoint, @unchecked Sendable {
    let name: String
    let queue: DispatchQueue
    let waker: any SubscriberWaker
    let scheduler: any RoomScheduler
    let logger: Logger
    let metrics: ServerMetrics
    let store: any RoomStore
    let historyLimit: Int

    var room: Room
    /// False in cluster mode: the store publishes patches and no local connection subscribes here.
    let localDelivery: Bool
    /// Called on the queue once, when a store write failed: the runtime has stopped by then. Cluster mode: the
    /// owner hands the room back (fenced out, or Redis lost). One node: the registry forgets the room, so the
    /// next join loads it from the store as it last was.
    var onStoreFailure: (@Sendable (any Error) -> Void)?
    /// Set once the room stopped (a failed store write) or was unloaded: a transport whose subscriber still
    /// holds this endpoint joins the room anew instead (any thread).
    let closedFlag = Atomic<Bool>(false)
    /// Set when a store write failed in cluster mode: the room no longer acts.
    var abandoned = false
    /// Set when the registry unloaded the room (`retireIfUnused`): it takes no more requests.
    var retired = false
    /// Set when the server API deleted the room (`delete`, on the queue, once the store's deletion is queued): its
    /// members were told and left; it takes no more requests. Readable from any thread (`isDeleted`).
    let deletedFlag = Atomic<Bool>(false)
    /// Since when nobody has been in the room (nanoseconds of `scheduler.now()`), 0 while someone is. Written on
    /// the queue, read by the registry's sweep from any thread.
    let emptySinceNanos: Atomic<UInt64>
    /// Blocks `submit` queued and that have not finished yet (and 1 while the queue is paused, `+Pacing`). The service
    /// thread runs a small room's intent inline (`queue.sync`) only while this is 0: room queues share a pool as wide
    /// as the CPUs, and waiting there behind queued work (a store's `markDurable`, a join, or a block that then pauses
    /// the queue) would stall every connection.
    let queuedBlocks = Atomic<Int>(0)
    /// The timer thread is about to run a firing inline (`runInline`): no pause may suspend the queue meanwhile.
    let inlineTimers = Atomic<Int>(0)
    /// Senders waiting for the intent queue to drain to half (`whenQueueDrains`), and whether there are any (read
    /// first, so the common intent takes no lock).
    let drainWaiters = Mutex<[@Sendable () -> Void]>([])
    let hasDrainWaiters = Atomic<Bool>(false)
    /// The queue is suspended while the transport catches up (`paceIfTransportBehind`).
    let pacing = Atomic<Bool>(false)
    /// Intents waiting on the queue (at most `maxQueuedIntents`; more are refused with `overloaded`).
    let queuedIntents = Atomic<Int>(0)
    /// The server is shutting down (`RoomDirectory.beginShutdown`): a leave only takes its member out (no patch).
    let shuttingDown = Atomic<Bool>(false)
    /// `Limits.roomQueueIntents`.
    let maxQueuedIntents: Int
    /// Subscribers of this process that take the room's patches (one node).
    var subscribers: [SessionID: any RoomSubscriber] = [:] {
        didSet {
            if hasCrowd != crowded.load(ordering: .relaxed) { crowded.store(hasCrowd, ordering: .relaxed) }
        }
    }
    /// More than `inlineSubscriberLimit` subscribers: a fan-out is a crowd's (runs on the queue, paces, marks its frames
    /// `toMany`). On the queue; `isCrowded` is the same, readable off it.
    var hasCrowd: Bool { subscribers.count > inlineSubscriberLimit }
    private let crowded = Atomic<Bool>(false)
    var isCrowded: Bool { crowded.load(ordering: .relaxed) }
    /// What snapshots at the current version share (`RoomRuntime+Snapshots.swift`); dropped with each patch.
    var snapshots: SnapshotCache?
    /// Cluster mode: every member, each with the `node` its connection is on.
    var remoteMembers: [SessionID: any RoomSubscriber] = [:]
    /// Cluster mode: how many members each node has (a copy readable off the queue).
    let nodeCounts = Mutex<[String: Int]>([:])
    var timers: [ControlID: any RoomTimer] = [:]
    /// The deadline each control's timer is armed for (to measure how late it fires).
    var armedDeadlines: [ControlID: Instant] = [:]
    /// The highest version known to be durable.
    var durable: Int
    /// Outgoing actions waiting for their version to be durable, in order.
    /// `dropped` runs instead of `action` when the room stops before `version` is durable (a server API reply, which
    /// must be answered whatever happens).
    var held: [(version: Int, action: () -> Void, dropped: (() -> Void)?)] = []
    var heldHead = 0

    /// Where the room's webhook events go (nil: no webhooks configured, and nothing is spent on them).
    let webhooks: WebhookDispatcher?
    /// Changes not yet told in a `room.changed` event, and whether the timer that tells them is armed (queue only).
    var unannounced: UnannouncedChanges?
    var announcing = false
    /// Events on their way to the dispatcher, in the room's order: each goes once it is ready (its change durable, or
    /// its own store entry committed) and everything before it has gone (queue only; `RoomRuntime+Webhooks.swift`).
    var webhookOutbox: [WebhookOutboxEntry] = []
    /// Cluster mode: the room stopped acting here; its events are in Redis, for its next owner to send.
    var webhookOutboxClosed = false
    var nextOutboxID = 0
    /// A stored room re-created in a new epoch: its old epoch's unannounced changes, told in the reset write.
    var pendingChangesOfEarlierEpoch: PendingWebhook?

    /// Presence gathering (`RoomRuntime+Presence.swift`): when the last presence patch went, the acks of the updates
    /// gathered since, and whether the timer that sends them is armed (queue only).
    var lastPresencePatch: Instant?
    var gatheredPresenceAcks: [(any RoomSubscriber, RequestID)] = []
    var presenceFlushArmed = false

    /// The template's intent hook, and who calls it (`RoomRuntime+Hooks.swift`); nil: no intent waits for a backend.
    let hook: IntentHook?
    let hookClient: IntentHookClient?
    /// Cluster mode: how long a member's node waits for the answer to a forwarded intent (less a margin); a hooked
    /// intent older than that is not applied (its node has answered `unavailable`). Nil on one node.
    var hookDeadlineMs: Int?
    /// Hooked intents waiting for the backend, in arrival order (queue only; at most `hook.maxWaiting`).
    var waitingIntents: [WaitingIntent] = []
    var nextHookSerial = 0
    /// Cluster mode: publishes a broadcast's message to every node's members of the room but `except`, after the
    /// write of `version` (set by the directory; `RoomRuntime+Broadcast.swift`).
    var clusterBroadcast: (@Sendable (_ message: [UInt8], _ except: SessionID?, _ epoch: String, _ version: Int) -> Void)?

    init(room: Room, store: any RoomStore, historyLimit: Int, waker: any SubscriberWaker, metrics: ServerMetrics,
         scheduler: any RoomScheduler, logger: Logger, localDelivery: Bool = true, webhooks: WebhookDispatcher? = nil,
         maxQueuedIntents: Int = Limits().roomQueueIntents, hook: IntentHook? = nil, hookClient: IntentHookClient? = nil) {
        self.hook = hookClient == nil ? nil : hook
        self.hookClient = hookClient
        self.maxQueuedIntents = maxQueuedIntents
        self.localDelivery = localDelivery
        self.webhooks = webhooks
        self.metrics = metrics
        self.name = room.name
        self.room = room
        self.room.adopt(clock: scheduler.wallClock)
        self.store = store
        self.historyLimit = historyLimit
        self.waker = waker
        self.scheduler = scheduler
        var logger = logger
        logger[metadataKey: "room"] = "\(room.name)"
        self.logger = logger
        self.queue = DispatchQueue(label: "livecontrols.room.\(room.name)", target: .global())
        self.durable = room.version
        self.emptySinceNanos = Atomic(max(1, scheduler.now().nanoseconds))
    }

    // MARK: Requests (any thread)

    /// Queues `work` on the room's queue, counted in `queuedBlocks` until it starts.
    func submit(_ work: @escaping @Sendable () -> Void) {
        queuedBlocks.add(1, ordering: .sequentiallyConsistent)  // seen by the timer thread's `runInline` (x86: the same lock add)
        queue.async {
            work()
            self.paceIfTransportBehind()
            self.queuedBlocks.subtract(1, ordering: .relaxed)  // after: nobody `sync`s into a block that may pause
        }
    }

    /// A new room (or a new epoch of a recovered one): write all of it. `written` runs on the queue once the
    /// write is durable (nil) or failed.
    func persistReset(written: (@Sendable ((any Error)?) -> Void)? = nil) {
        submit {
            var write = self.room.storeReset(deltas: self.store.takesControlDeltas)
            guard let entry = self.attachCreationEvents(to: &write) else { return self.persist(write, written: written) }
            self.persist(write) { error in
                // Sent once this write is stored (a new room's version 0 counts as durable before it is).
                self.submit { if error == nil { self.outboxEntryReady(entry) } else { self.dropOutboxEntry(entry) } }
                written?(error)
            }
        }
    }

    /// A recovered room: nobody is connected, so every stored member leaves (reason `restart`).
    func dropMembersAfterRestart() {
        submit {
            for update in self.room.dropMembersAfterRestart() { self.carryOut(update) }
            self.armLoadedTimers()
        }
    }

    func join(_ subscriber: any RoomSubscriber, _ request: JoinRequest) {
        submit { self.handleJoin(subscriber, request) }
    }

    func leave(_ subscriber: any RoomSubscriber, id: RequestID?, reason: HoldEndReason) {
        submit {
            if (self.abandoned && self.localDelivery) || self.isDeleted {
                // Everyone left when the room stopped: this leave is already done. Answered at once (versions past
                // the last durable one will never be), and nothing else is said (no second `unavailable`).
                if reason == .leave, subscriber.deliver(Frame.make(.left(room: self.name, id: id))) { self.waker.wake(subscriber) }
                return
            }
            guard !self.refusedAsAbandoned(subscriber, id: id) else { return }
            // Its gathered presence update is applied (and acked) first, as it would have been had it not left.
            if self.room.hasGatheredPresence(of: subscriber.session) { self.commitGatheredPresence() }
            self.subscribers[subscriber.session] = nil
            self.setRemote(subscriber.session, nil)
            if self.shuttingDown.load(ordering: .relaxed) {
                // Everyone is being closed: nobody needs this leave's patch. The stored state keeps the member, as
                // after a crash: loading the room drops it (`dropMembersAfterRestart`).
                if reason == .leave { self.send(.left(room: self.name, id: id), to: subscriber) }
                return
            }
            self.dropWaitingIntents(of: subscriber.session, told: reason != .disconnect)  // (leave, expired: the connection is open)
            self.carryOut(self.room.leave(subscriber.session, reason: reason))
            self.noteIfEmpty()
            if reason == .leave { self.send(.left(room: self.name, id: id), to: subscriber) }
        }
    }

    /// With `inline` (the transport's service thread, for a room it saw as small), the intent runs right
    /// here: `sync` executes on the calling thread when the queue is idle (and waits its turn otherwise, so
    /// the room's total order holds), and the waker then only notes the subscribers — no thread hop either
    /// way. Not when work is already queued for the room: the intent goes behind it, and the caller moves on.
    ///
    /// Backpressure: at most `maxQueuedIntents` intents wait for the room; one more is refused at once with
    /// `overloaded` (not queued, not applied), so a flood costs bounded memory and a bounded wait, and intents of
    /// connections that closed meanwhile are dropped when their turn comes.
    func intent(_ subscriber: any RoomSubscriber, _ request: IntentRequest, inline: Bool) -> Int? {
        guard inline, queuedBlocks.load(ordering: .relaxed) == 0 else {
            queueRequest(from: subscriber, id: request.id) { self.handleIntent(subscriber, request) }
            return nil
        }
        assertNotOnQueue(queue)
        return queue.sync { () -> Int in
            self.handleIntent(subscriber, request)
            return self.subscribers.count
        }
    }

    // MARK: On the queue

    private func handleIntent(_ subscriber: any RoomSubscriber, _ request: IntentRequest) {
        assertOnQueue(queue)
        guard !refusedAsAbandoned(subscriber, id: request.id) else { return }
        rejoinIfUnknown(subscriber)
        if let hook, hook.covers(ControlID(request.control), request.intent) { return awaitHook(subscriber, request, hook) }
        applyIntent(subscriber, request, args: request.args)
    }

    /// Applies a member's intent (with `args`: the client's, or a hook's), and acks it or sends its error.
    func applyIntent(_ subscriber: any RoomSubscriber, _ request: IntentRequest, args: JSONObject) {
        do {
            let update = try room.apply(control: ControlID(request.control), intent: request.intent, args: args,
                                        by: subscriber.session, requestID: request.id, at: scheduler.now())
            carryOut(update)
            metrics.intent(refused: false)
            send(.ack(id: request.id, room: name, version: room.version), to: subscriber)
        } catch {
            metrics.intent(refused: true)
            send(.error(ProtocolError(error.code, error.message, id: request.id, room: name)), to: subscriber)
        }
    }

    private func handleJoin(_ subscriber: any RoomSubscriber, _ request: JoinRequest) {
        assertOnQueue(queue)
        guard !refusedAsAbandoned(subscriber, id: request.id) else { return }
        // Known before the join is written, so the store records the member's node.
        if !localDelivery { setRemote(subscriber.session, subscriber) }
        var resumed: Bool? = nil
        if let since = request.since {
            if since.epoch == room.epoch, since.version > room.resumeFloor ?? -1,
               let missed = room.history.changes(after: since.version, current: room.version),
               room.resumes(from: since.session.map(SessionID.init), missed: missed) {
                subscribe(subscriber)
                send(.resumed(room: name, epoch: room.epoch, from: since.version, version: room.version, id: request.id), to: subscriber)
                let viewer = Viewer(session: subscriber.session, roles: request.roles)
                for patch in missed { send(patch.isShared ? patchMessage(patch) : patchMessage(patch, for: viewer), to: subscriber) }
                carryOut(room.join(subscriber.session, name: request.name, roles: request.roles, user: request.user))
                tellUndoable(toJoined: subscriber)
                return
            }
            resumed = false
        }
        carryOut(room.join(subscriber.session, name: request.name, roles: request.roles, user: request.user))
        subscribe(subscriber)
        send(snapshot(id: request.id, resumed: resumed, for: room.viewer(of: subscriber.session)), to: subscriber)
        tellUndoable(toJoined: subscriber)
    }

    func subscribe(_ subscriber: any RoomSubscriber) {
        emptySinceNanos.store(0, ordering: .relaxed)
        if localDelivery {
            subscribers[subscriber.session] = subscriber
        } else {
            setRemote(subscriber.session, subscriber)
        }
    }

    /// After a failed store write (cluster mode) the room answers `unavailable` until its owner drops it; a
    /// retired room (unloaded) answers it too — no request should reach one, a join again reloads the room.
    func refusedAsAbandoned(_ subscriber: any RoomSubscriber, id: RequestID?) -> Bool {
        if isDeleted {
            let error = ProtocolError(.notJoined, "room \(name) was deleted; you are no longer in it (join it again to start it anew)", id: id, room: name)
            if subscriber.deliver(Frame.make(.error(error))) { waker.wake(subscriber) }
            return true
        }
        guard abandoned || retired else { return false }
        if retired, !localDelivery {
            // Cluster: handed back (idle) just after this request was dispatched here. Its node forgets this owner
            // and asks Redis again.
            let frame = Frame.make(.error(ProtocolError(.unavailable, "room \(name) is changing owner; retry in a moment", id: id, room: name)))
            if subscriber.deliverNotOwner(frame) { waker.wake(subscriber) }
            return true
        }
        let why = retired ? "room \(name) was unloaded; join it again"
            : localDelivery ? "room \(name) stopped: saving a change failed; join the room again" : "room \(name) is changing owner; retry in a moment"
        if retired { logger.warning("request reached an unloaded room") }
        if subscriber.deliver(Frame.make(.error(ProtocolError(.unavailable, why, id: id, room: name)))) { waker.wake(subscriber) }
        return true
    }
}
