import LiveControlsEngine
import LiveControlsProtocol

/// What a change does once the engine made it (on the room's queue): its patch persisted and broadcast — one frame
/// for everyone, or one per distinct view —, its webhook events put in the outbox, its timers armed, and the users
/// whose undo stacks changed told. Replies that show a version wait for that version to be durable (`deliver(after:)`).
extension RoomRuntime {
    func patchMessage(_ patch: Patch) -> ServerMessage {
        .patch(room: name, epoch: room.epoch, version: patch.version, ops: patch.ops, cause: patch.cause)
    }

    func patchMessage(_ patch: Patch, for viewer: Viewer) -> ServerMessage {
        .patch(room: name, epoch: room.epoch, version: patch.version, ops: patch.ops(for: viewer), cause: patch.cause)
    }

    /// Persists and broadcasts the patch (encoded once, to the subscribers of this moment), carries out the timer
    /// effects, then tells users whose undo stacks changed (after the patch).
    func carryOut(_ update: RoomUpdate) {
        carryOutChange(update)
        if !update.undoable.isEmpty { tellUndoable(update.undoable) }
    }

    private func carryOutChange(_ update: RoomUpdate) {
        assertOnQueue(queue)
        if let patch = update.patch {
            snapshots = nil
            metrics.patch()
            let events = webhooks.map { webhookEvents(for: patch, $0) } ?? []
            let entry = events.isEmpty ? nil : openOutboxEntry(events, droppedOnStop: true)
            if store.discardsWrites {
                markDurable(patch.version)  // nothing to write: no encoding of the touched controls
            } else {
                var write = room.storeWrite(for: patch, keepHistory: historyLimit, deltas: store.takesControlDeltas)
                if !localDelivery, !patch.isShared { write.views = publishedViews(patch) }
                if webhooks != nil {
                    write.webhooks = events
                    write.unannouncedChanges = unannounced
                }
                if let entry, store.isSynchronous {
                    // Cluster mode: a version counts as durable once its write is in the pipeline, but its events go
                    // only once Redis has it (a write fenced out is a change that never happened).
                    persist(write) { error in self.submit { error == nil ? self.outboxEntryReady(entry) : self.dropOutboxEntry(entry) } }
                } else {
                    persist(write)
                }
            }
            if let entry, store.discardsWrites || !store.isSynchronous {
                deliver(after: patch.version) { self.outboxEntryReady(entry) }
            }
            guard localDelivery else { return carryOutTimers(update) }
            metrics.delivered(toMembers: subscribers.count)
            guard patch.isShared else {
                // Members see different ops (`Patch.access`): one frame per distinct view.
                var toWake: [any RoomSubscriber] = []
                if heldHead == held.count && patch.version <= durable {
                    toWake.reserveCapacity(subscribers.count)
                    forEachView(patch, of: subscribers.values) { subscriber, frame in if subscriber.deliver(frame) { toWake.append(subscriber) } }
                    if !toWake.isEmpty { waker.wake(toWake) }
                    return carryOutTimers(update)
                }
                var targets: [(any RoomSubscriber, Frame)] = []
                targets.reserveCapacity(subscribers.count)
                forEachView(patch, of: subscribers.values) { targets.append(($0, $1)) }
                deliver(after: patch.version) {
                    for (subscriber, frame) in targets where subscriber.deliver(frame) { toWake.append(subscriber) }
                    if !toWake.isEmpty { self.waker.wake(toWake) }
                }
                return carryOutTimers(update)
            }
            let frame = Frame.make(patchMessage(patch), toMany: hasCrowd)
            if heldHead == held.count && patch.version <= durable {
                // Deliverable now (always, with a synchronous store): no copy of the subscriber list.
                var toWake: [any RoomSubscriber] = []
                toWake.reserveCapacity(subscribers.count)
                for subscriber in subscribers.values where subscriber.deliver(frame) { toWake.append(subscriber) }
                if !toWake.isEmpty { waker.wake(toWake) }
                return carryOutTimers(update)
            }
            let targets = Array(subscribers.values)
            deliver(after: patch.version) {
                var toWake: [any RoomSubscriber] = []
                toWake.reserveCapacity(targets.count)
                for subscriber in targets where subscriber.deliver(frame) { toWake.append(subscriber) }
                if !toWake.isEmpty { self.waker.wake(toWake) }
            }
        }
        carryOutTimers(update)
    }

    private func carryOutTimers(_ update: RoomUpdate) {
        for effect in update.timers { arm(effect.control, at: effect.deadline) }
    }

    /// Sends a reply once the room's current version is durable (and after everything held before it).
    func send(_ message: ServerMessage, to subscriber: any RoomSubscriber) {
        send(Frame.make(message), to: subscriber)
    }

    func send(_ frame: Frame, to subscriber: any RoomSubscriber) {
        let version = room.version
        deliver(after: version) {
            if subscriber.deliver(frame, showing: version) { self.waker.wake(subscriber) }
        }
    }
}
