import LiveControlsEngine
import LiveControlsProtocol

/// Durability: each patch is written to the store, and nothing that shows a version leaves the room before that
/// version is durable (`held`); a failed write stops the room (`abandon`). Queue only, as the rest of the runtime.
extension RoomRuntime {
    func persist(_ write: StoreWrite, written: (@Sendable ((any Error)?) -> Void)? = nil) {
        let version = write.version
        if store.isSynchronous {
            store.write(write) { [weak self, logger] error in
                written?(error)
                guard let error else { return }
                if let self, self.onStoreFailure != nil {
                    self.submit { self.abandon(after: error) }
                } else if self != nil {
                    logger.error("store write failed: \(error)")
                }
            }
            markDurable(version)
            return
        }
        store.write(write) { [weak self] error in
            guard let self else { return written?(error) ?? () }
            if let written { self.submit { written(error) } }
            if let error {
                // Never acked: the version that failed, and every later one, is dropped with the held replies.
                self.submit { self.abandon(after: error) }
                return
            }
            self.submit { self.markDurable(version) }
        }
    }

    /// A write failed, so the room may no longer act here. What was not durable is never shown: its patches and
    /// replies are dropped (cluster mode: the clients' nodes answer `unavailable` when they time out). One node:
    /// every subscriber is told the room stopped (`unavailable`, no `id`) and leaves it; a join loads the room
    /// again from the store, at its last durable version.
    func abandon(after error: any Error, notify: Bool = true) {
        assertOnQueue(queue)
        guard !abandoned else { return }
        abandoned = true
        closedFlag.store(true, ordering: .releasing)
        for timer in timers.values { timer.cancel() }
        timers.removeAll()
        let dropped = held[heldHead...].compactMap(\.dropped)
        held.removeAll()
        heldHead = 0
        defer { for drop in dropped { drop() } }  // after the notices below: a close waiting on this room follows them
        stopWebhooks()
        refuseWaitingIntents(localDelivery ? "room \(name) stopped: saving a change failed; this intent was not applied; join the room again"
                                           : "room \(name) is changing owner; this intent, still waiting for the app's backend, was not applied — retry in a moment")
        if localDelivery {
            logger.error("room stopped: a store write failed; nothing after version \(durable) was acknowledged; the next join reloads it from the store",
                         metadata: ["error": "\(error)"])
            let frame = Frame.make(.error(ProtocolError(.unavailable, "room \(name) stopped: saving a change failed, so it was not applied; join the room again", room: name)))
            var toWake: [any RoomSubscriber] = []
            for subscriber in subscribers.values where subscriber.deliver(frame) { toWake.append(subscriber) }
            if !toWake.isEmpty { waker.wake(toWake) }
            subscribers.removeAll()
        } else {
            logger.warning("room stopped on this node: \(error)")
        }
        if notify { onStoreFailure?(error) }
    }

    /// Whether the room stopped or was unloaded (any thread).
    var isClosed: Bool { closedFlag.load(ordering: .acquiring) }

    func deliver(after version: Int, onDrop dropped: (() -> Void)? = nil, _ action: @escaping () -> Void) {
        if heldHead == held.count && version <= durable {
            action()
        } else {
            held.append((version, action, dropped))
        }
    }

    func markDurable(_ version: Int) {
        assertOnQueue(queue)
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

extension RoomRuntime {
    /// `RoomEndpoint.afterQueuedWork`: behind what is queued, then behind the replies still held for durability (or
    /// when the room drops them: it stopped).
    func afterQueuedWork(of subscriber: any RoomSubscriber, _ done: @escaping @Sendable () -> Void) {
        submit {
            guard !self.abandoned, !self.isDeleted else { return done() }  // nothing more is carried out, or held
            // A presence update it sent that waits for the room's next presence patch goes now: applied and acked
            // before the close, as an intent queued before it is (`RoomRuntime+Presence.swift`).
            if self.room.hasGatheredPresence(of: subscriber.session) { self.commitGatheredPresence() }
            self.deliver(after: self.room.version, onDrop: done, done)
        }
    }
}
