import Dispatch
import LiveControlsEngine
import LiveControlsProtocol
import Logging

/// The owner of one live room: its serial queue, its timers and its subscribers.
///
/// Thread rules: every stored `var` is touched only on `queue`. Intents, joins, leaves and timer
/// firings are all enqueued on `queue`, so they are totally ordered and the engine's `Room` value
/// needs no lock. Each patch is encoded once and the same `Frame` goes to every subscriber.
final class RoomRuntime: @unchecked Sendable {
    let name: String
    private let queue: DispatchQueue
    private let hub: Hub
    private let clock: @Sendable () -> Instant
    private let logger: Logger

    private var room: Room
    private var subscribers: [SessionID: Connection] = [:]
    private var timers: [ControlID: DispatchSourceTimer] = [:]

    init(room: Room, hub: Hub, clock: @escaping @Sendable () -> Instant, logger: Logger) {
        self.name = room.name
        self.room = room
        self.hub = hub
        self.clock = clock
        var logger = logger
        logger[metadataKey: "room"] = "\(room.name)"
        self.logger = logger
        self.queue = DispatchQueue(label: "livecontrols.room.\(room.name)")
    }

    // MARK: Requests (any thread)

    func join(_ connection: Connection, _ request: JoinRequest) {
        queue.async { self.handleJoin(connection, request) }
    }

    /// A second `join` of a joined room: a fresh snapshot (how a client resyncs after a gap).
    func resync(_ connection: Connection, id: RequestID?) {
        queue.async {
            self.send(.snapshot(room: self.name, epoch: self.room.epoch, version: self.room.version,
                                state: self.room.render(), id: id, resumed: nil), to: connection)
        }
    }

    /// The connection overflowed and has caught up: queue a fresh snapshot, ending its resync.
    func resyncAfterOverflow(_ connection: Connection) {
        queue.async {
            guard self.subscribers[connection.session] === connection else {
                connection.cancelResync(room: self.name)
                return
            }
            let frame = Frame(.snapshot(room: self.name, epoch: self.room.epoch, version: self.room.version,
                                        state: self.room.render(), id: nil, resumed: nil))
            if connection.enqueueResync(frame, room: self.name) { self.hub.wake(connection) }
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
        queue.async { self.handleIntent(connection, request) }
    }

    // MARK: On the queue

    private func handleIntent(_ connection: Connection, _ request: IntentRequest) {
        do {
            let update = try room.apply(control: ControlID(request.control), intent: request.intent, args: request.args,
                                        by: connection.session, requestID: request.id, at: clock())
            carryOut(update)
            send(.ack(id: request.id, room: name, version: room.version), to: connection)
        } catch {
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
        send(.snapshot(room: name, epoch: room.epoch, version: room.version, state: room.render(), id: request.id, resumed: resumed),
             to: connection)
    }

    private func patchMessage(_ patch: Patch) -> ServerMessage {
        .patch(room: name, epoch: room.epoch, version: patch.version, ops: patch.ops, cause: patch.cause)
    }

    /// Broadcasts the patch (encoded once) and carries out the timer effects.
    private func carryOut(_ update: RoomUpdate) {
        if let patch = update.patch {
            let frame = Frame(patchMessage(patch))
            var toWake: [Connection] = []
            toWake.reserveCapacity(subscribers.count)
            for connection in subscribers.values where connection.enqueue(frame) { toWake.append(connection) }
            hub.wake(toWake)
        }
        for effect in update.timers { arm(effect.control, at: effect.deadline) }
    }

    private func send(_ message: ServerMessage, to connection: Connection) {
        if connection.enqueue(Frame(message)) { hub.wake(connection) }
    }

    private func arm(_ control: ControlID, at deadline: Instant?) {
        let timer: DispatchSourceTimer
        if let existing = timers[control] {
            timer = existing
        } else {
            guard deadline != nil else { return }
            timer = DispatchSource.makeTimerSource(flags: .strict, queue: queue)
            timer.setEventHandler { [weak self] in self?.fire(control) }
            timers[control] = timer
            timer.schedule(deadline: .distantFuture, leeway: .nanoseconds(0))
            timer.resume()
        }
        if let deadline {
            timer.schedule(deadline: DispatchTime(uptimeNanoseconds: deadline.nanoseconds), leeway: .nanoseconds(0))
        } else {
            timer.schedule(deadline: .distantFuture, leeway: .nanoseconds(0))
        }
    }

    /// A timer fired. A stale firing is harmless: the engine only acts on what is due at `now`.
    private func fire(_ control: ControlID) {
        carryOut(room.wake(control: control, at: clock()))
    }

    /// Stops the timers (at shutdown).
    func stop() {
        queue.sync {
            for timer in timers.values { timer.cancel() }
            timers.removeAll()
        }
    }
}
