import Dispatch
import LiveControlsEngine
import LiveControlsProtocol
import Logging

/// The owner of one live room: its serial queue, its timers, its subscribers and its persistence.
///
/// Thread rules: every stored `var` is touched only on `queue`. Intents, joins, leaves and timer
/// firings are all enqueued on `queue`, so they are totally ordered and the engine's `Room` value
/// needs no lock. Each patch is encoded once and the same `Frame` goes to every subscriber.
///
/// Durability: each patch is written to the store; nothing that shows a version (patch, snapshot,
/// ack) leaves the room before that version is durable. Outgoing actions wait, in order, in `held`.
final class RoomRuntime: @unchecked Sendable {
    let name: String
    let queue: DispatchQueue
    let hub: Hub
    let clock: @Sendable () -> Instant
    let logger: Logger
    let metrics: ServerMetrics
    private let store: any RoomStore
    private let historyLimit: Int

    var room: Room
    private var subscribers: [SessionID: Connection] = [:]
    var timers: [ControlID: DispatchSourceTimer] = [:]
    /// The deadline each control's timer is armed for (to measure how late it fires).
    var armedDeadlines: [ControlID: Instant] = [:]
    /// The highest version known to be durable.
    private var durable: Int
    /// Outgoing actions waiting for their version to be durable, in order.
    private var held: [(version: Int, action: () -> Void)] = []
    private var heldHead = 0

    init(room: Room, store: any RoomStore, historyLimit: Int, hub: Hub, metrics: ServerMetrics,
         clock: @escaping @Sendable () -> Instant, logger: Logger) {
        self.metrics = metrics
        self.name = room.name
        self.room = room
        self.store = store
        self.historyLimit = historyLimit
        self.hub = hub
        self.clock = clock
        var logger = logger
        logger[metadataKey: "room"] = "\(room.name)"
        self.logger = logger
        self.queue = DispatchQueue(label: "livecontrols.room.\(room.name)")
        self.durable = room.version
    }

    // MARK: Requests (any thread)

    /// A new room (or a new epoch of a recovered one): write all of it.
    func persistReset() {
        queue.async { self.persist(self.room.storeReset()) }
    }

    /// A recovered room: nobody is connected, so every stored member leaves (reason `restart`).
    func dropMembersAfterRestart() {
        queue.async {
            for update in self.room.dropMembersAfterRestart() { self.carryOut(update) }
        }
    }

    func join(_ connection: Connection, _ request: JoinRequest) {
        queue.async { self.handleJoin(connection, request) }
    }

    /// A second `join` of a joined room: a fresh snapshot (how a client resyncs after a gap).
    func resync(_ connection: Connection, id: RequestID?) {
        queue.async { self.send(self.snapshot(id: id, resumed: nil), to: connection) }
    }

    /// The connection overflowed and has caught up: queue a fresh snapshot, ending its resync.
    func resyncAfterOverflow(_ connection: Connection) {
        queue.async {
            guard self.subscribers[connection.session] === connection else {
                connection.cancelResync(room: self.name)
                return
            }
            let frame = Frame(self.snapshot(id: nil, resumed: nil))
            self.deliver(after: self.room.version) {
                if connection.enqueueResync(frame, room: self.name) { self.hub.wake(connection) }
            }
        }
    }

    func leave(_ connection: Connection, id: RequestID?, reason: HoldEndReason) {
        queue.async {
            self.subscribers[connection.session] = nil
            self.carryOut(self.room.leave(connection.session, reason: reason))
            if reason == .leave { self.send(.left(room: self.name, id: id), to: connection) }
        }
    }

    func intent(_ connection: Connection, _ request: IntentRequest) {
        // Called on the lws service thread. In a small room the intent runs right here: `sync` executes
        // on the calling thread when the queue is idle (and waits its turn otherwise, so the room's
        // total order holds), and `Hub.wake` then asks lws for the writable callbacks directly — no
        // thread hop either way. A large room's fan-out is real work: it goes to the room's queue, in
        // parallel with the service thread's writing. Each connection remembers which rooms were large
        // (service-thread state) and looks again every 64th intent.
        let inlineIntentLimit = 128
        connection.intentsSent &+= 1
        if connection.largeRooms.contains(name) && connection.intentsSent % 64 != 0 {
            queue.async { self.handleIntent(connection, request) }
            return
        }
        let subscriberCount = queue.sync { () -> Int in
            self.handleIntent(connection, request)
            return self.subscribers.count
        }
        if subscriberCount > inlineIntentLimit {
            connection.largeRooms.insert(name)
        } else {
            connection.largeRooms.remove(name)
        }
    }

    // MARK: On the queue

    private func handleIntent(_ connection: Connection, _ request: IntentRequest) {
        do {
            let update = try room.apply(control: ControlID(request.control), intent: request.intent, args: request.args,
                                        by: connection.session, requestID: request.id, at: clock())
            carryOut(update)
            metrics.intent(refused: false)
            send(.ack(id: request.id, room: name, version: room.version), to: connection)
        } catch {
            metrics.intent(refused: true)
            send(.error(ProtocolError(error.code, error.message, id: request.id, room: name)), to: connection)
        }
    }

    private func handleJoin(_ connection: Connection, _ request: JoinRequest) {
        var resumed: Bool? = nil
        if let since = request.since {
            if since.epoch == room.epoch, let missed = room.history.changes(after: since.version, current: room.version) {
                subscribers[connection.session] = connection
                send(.resumed(room: name, epoch: room.epoch, from: since.version, version: room.version, id: request.id), to: connection)
                for patch in missed { send(patchMessage(patch), to: connection) }
                carryOut(room.join(connection.session, name: request.name))
                return
            }
            resumed = false
        }
        carryOut(room.join(connection.session, name: request.name))
        subscribers[connection.session] = connection
        send(snapshot(id: request.id, resumed: resumed), to: connection)
    }

    private func snapshot(id: RequestID?, resumed: Bool?) -> ServerMessage {
        .snapshot(room: name, epoch: room.epoch, version: room.version, state: room.render(), id: id, resumed: resumed)
    }

    private func patchMessage(_ patch: Patch) -> ServerMessage {
        .patch(room: name, epoch: room.epoch, version: patch.version, ops: patch.ops, cause: patch.cause)
    }

    /// Persists and broadcasts the patch (encoded once, to the subscribers of this moment) and
    /// carries out the timer effects.
    func carryOut(_ update: RoomUpdate) {
        if let patch = update.patch {
            metrics.patch()
            persist(room.storeWrite(for: patch, keepHistory: historyLimit))
            let frame = Frame(patchMessage(patch))
            let targets = Array(subscribers.values)
            deliver(after: patch.version) {
                var toWake: [Connection] = []
                toWake.reserveCapacity(targets.count)
                for connection in targets where connection.enqueue(frame) { toWake.append(connection) }
                self.hub.wake(toWake)
            }
        }
        for effect in update.timers { arm(effect.control, at: effect.deadline) }
    }

    /// Sends a reply once the room's current version is durable (and after everything held before it).
    private func send(_ message: ServerMessage, to connection: Connection) {
        let frame = Frame(message)
        deliver(after: room.version) {
            if connection.enqueue(frame) { self.hub.wake(connection) }
        }
    }

    // MARK: Durability

    private func persist(_ write: StoreWrite) {
        let version = write.version
        if store.isSynchronous {
            store.write(write) { [logger] error in if let error { logger.error("store write failed: \(error)") } }
            markDurable(version)
            return
        }
        store.write(write) { [weak self] error in
            guard let self else { return }
            if let error { self.logger.error("store write failed; clients are told of the change anyway: \(error)") }
            self.queue.async { self.markDurable(version) }
        }
    }

    private func deliver(after version: Int, _ action: @escaping () -> Void) {
        if heldHead == held.count && version <= durable {
            action()
        } else {
            held.append((version, action))
        }
    }

    private func markDurable(_ version: Int) {
        durable = max(durable, version)
        while heldHead < held.count, held[heldHead].version <= durable {
            let action = held[heldHead].action
            heldHead += 1
            action()
        }
        if heldHead == held.count {
            held.removeAll(keepingCapacity: true)
            heldHead = 0
        }
    }
}
