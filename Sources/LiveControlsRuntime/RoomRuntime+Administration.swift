import LiveControlsEngine
import LiveControlsProtocol

/// The server API's requests to one room. Each runs on the room's queue, in order with intents, joins and
/// timers, and replies once what it shows is durable.
extension RoomRuntime {
    /// Why the room takes no API request now (it stopped, was unloaded or deleted): nil when it does.
    func unusable() -> AdminFailure? {
        assertOnQueue(queue)
        if isDeleted { return AdminFailure(.unknownRoom, "room \(name) was deleted", room: name) }
        if abandoned { return AdminFailure(.unavailable, "room \(name) stopped: saving a change failed; retry in a moment", room: name) }
        if retired { return AdminFailure(.unavailable, "room \(name) was just unloaded; retry", room: name) }
        return nil
    }

    /// The document at the current version, with the members in join order.
    func details() -> RoomDetails {
        assertOnQueue(queue)
        let members = room.memberList.map {
            MemberInfo(session: $0.session, name: $0.member.name, user: $0.member.user, roles: $0.member.roles, holding: $0.holding, editing: $0.editing,
                       data: $0.member.data)
        }
        return RoomDetails(name: name, template: room.template, epoch: room.epoch, version: room.version, state: room.render(),
                           members: members)
    }

    func summary() -> RoomSummary {
        assertOnQueue(queue)
        return RoomSummary(name: name, template: room.template, epoch: room.epoch, version: room.version, loaded: true,
                           members: room.memberCount)
    }

    func describe(_ reply: @escaping @Sendable (Result<RoomDetails, AdminFailure>) -> Void) {
        submit {
            if let failure = self.unusable() { return reply(.failure(failure)) }
            let details = self.details()
            self.deliver(after: details.version, onDrop: { reply(.failure(self.stopped)) }) { reply(.success(details)) }
        }
    }

    /// Like a WebSocket intent in a small room, the intents run right on the calling thread (the transport's
    /// service thread) when `inline` allows, the room's queue is idle and the room has at most
    /// `inlineSubscriberLimit` subscribers (`queue.sync`: the room's order holds); otherwise they are queued.
    /// Cluster mode never runs them inline (the caller holds the directory's `owned` lock).
    func applyAsServer(_ intents: [ServerIntent], inline: Bool = true, _ reply: @escaping @Sendable (Result<RoomVersion, AdminFailure>) -> Void) {
        let work: @Sendable () -> Void = { self.applyOnQueue(intents, reply) }
        guard inline, queuedBlocks.load(ordering: .relaxed) == 0 else { return submit(work) }
        assertNotOnQueue(queue)
        let ran = queue.sync { () -> Bool in
            guard !self.hasCrowd else { return false }
            work()
            return true
        }
        if !ran { submit(work) }
    }

    private func applyOnQueue(_ intents: [ServerIntent], _ reply: @escaping @Sendable (Result<RoomVersion, AdminFailure>) -> Void) {
        assertOnQueue(queue)
        if let failure = unusable() { return reply(.failure(failure)) }
        do throws(ServerIntentError) {
            let update = try room.applyAsServer(intents, at: scheduler.now())
            carryOut(update)
            for _ in intents { metrics.intent(refused: false) }
        } catch {
            metrics.intent(refused: true)
            return reply(.failure(AdminFailure(error, intents: intents, room: name, numbered: intents.count > 1)))
        }
        replyWithVersion(reply)
    }

    func reset(to template: @escaping @Sendable (_ name: String) -> RoomTemplate?, _ reply: @escaping @Sendable (Result<RoomVersion, AdminFailure>) -> Void) {
        submit {
            if let failure = self.unusable() { return reply(.failure(failure)) }
            guard let template = template(self.room.template) else {
                return reply(.failure(AdminFailure(.internalError, "room \(self.name)'s template \(self.room.template) is gone", room: self.name)))
            }
            self.carryOut(self.room.reset(to: template))
            self.replyWithVersion(reply)
        }
    }

    func history(epoch: String?, after version: Int, _ reply: @escaping @Sendable (Result<RoomHistory, AdminFailure>) -> Void) {
        submit {
            if let failure = self.unusable() { return reply(.failure(failure)) }
            let current = self.room.version
            if let epoch, epoch != self.room.epoch {
                return reply(.failure(AdminFailure(.conflict, "room \(self.name) is in epoch \(self.room.epoch), not \(epoch): its versions start anew", room: self.name)))
            }
            guard version <= current else {
                return reply(.failure(AdminFailure(.conflict, "room \(self.name) is at version \(current), before \(version)", room: self.name)))
            }
            guard let patches = self.room.history.changes(after: version, current: current) else {
                return reply(.failure(AdminFailure(.conflict, "the patches after version \(version) are no longer kept (the room keeps its last \(self.room.history.limit)); read the whole room instead", room: self.name)))
            }
            let history = RoomHistory(name: self.name, epoch: self.room.epoch, version: current, patches: patches)
            self.deliver(after: current, onDrop: { reply(.failure(self.stopped)) }) { reply(.success(history)) }
        }
    }

    /// Ends the room for good. On the queue, so after every request sent before: the store's deletion is queued
    /// behind every write the room made (and before any write of a room of the same name made later: only then
    /// does `isDeleted` let the registry forget this one, in `forget`), no more requests are taken and its timers
    /// stop; once everything it already did is durable (its acks and patches gone out), every member gets
    /// `room_deleted` and leaves. The reply comes when the store has deleted it.
    func delete(forget: @escaping @Sendable () -> Void, _ reply: @escaping @Sendable (Result<RoomVersion, AdminFailure>) -> Void) {
        submit {
            if let failure = self.unusable() { return reply(.failure(failure)) }
            let result = RoomVersion(name: self.name, epoch: self.room.epoch, version: self.room.version)
            let (name, logger) = (self.name, self.logger)
            // Its gathered changes and room.deleted are stored with the deletion, and sent only if it happened.
            self.announcing = false
            var events = self.takeChanges().map { [$0] } ?? []
            if let deleted = self.roomEvent("room.deleted") { events.append(deleted) }
            let entry = self.openOutboxEntry(events)
            self.store.deleteRoom(named: name, webhooks: events) { error in
                self.submit { if error == nil { self.outboxEntryReady(entry) } else { self.dropOutboxEntry(entry) } }
                guard let error else { return reply(.success(result)) }
                logger.error("room deleted from memory, but the store could not delete it", metadata: ["error": "\(error)"])
                reply(.failure(AdminFailure(.unavailable, "room \(name)'s deletion was not confirmed by the store (its next join may find it as it was, or made anew); retry", room: name)))
            }
            self.deletedFlag.store(true, ordering: .releasing)
            self.closedFlag.store(true, ordering: .releasing)
            self.waitingIntents.removeAll()  // their members are told the room is gone (room_deleted)
            for timer in self.timers.values { timer.cancel() }
            self.timers.removeAll()
            self.armedDeadlines.removeAll()
            forget()
            self.deliver(after: result.version) {
                // Cluster mode: the store's deletion told the members on every node (`RedisRoomStore.deleteRoom`).
                guard self.localDelivery else { return self.subscribers.removeAll() }
                let frame = Frame.make(.error(Self.deletedError(name)))
                var toWake: [any RoomSubscriber] = []
                for subscriber in self.subscribers.values where subscriber.deliver(frame) { toWake.append(subscriber) }
                if !toWake.isEmpty { self.waker.wake(toWake) }
                self.subscribers.removeAll()
            }
        }
    }

    /// What a member of a deleted room is told (it is no longer in the room).
    static func deletedError(_ room: String) -> ProtocolError {
        ProtocolError(.roomDeleted, "room \(room) was deleted by the server; you are no longer in it", room: room)
    }

    /// Whether the server API deleted the room (any thread): the registry then treats the name as free.
    var isDeleted: Bool { deletedFlag.load(ordering: .acquiring) }

    /// Replies with the current version once it is durable (or `unavailable` if the room stops first).
    func replyWithVersion(_ reply: @escaping @Sendable (Result<RoomVersion, AdminFailure>) -> Void) {
        let result = RoomVersion(name: name, epoch: room.epoch, version: room.version)
        deliver(after: result.version, onDrop: { reply(.failure(self.stopped)) }) { reply(.success(result)) }
    }

    /// The answer to an API request whose reply was waiting when a store write failed: it was not applied.
    var stopped: AdminFailure {
        AdminFailure(.unavailable, "room \(name) stopped (saving a change failed) before this was done; retry: the room loads again from the store", room: name)
    }
}
