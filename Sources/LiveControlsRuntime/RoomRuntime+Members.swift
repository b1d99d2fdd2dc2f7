import LiveControlsEngine
import LiveControlsProtocol

/// What members ask of a room beside intents: their presence data and their claims. Each is queued under the same
/// bound as intents (`queueRequest`) and answered like one: an `ack` when it has an id, else only errors.
extension RoomRuntime {
    /// A member's presence data (`Room.setPresence`): always queued, under the same bound as intents.
    func presence(_ subscriber: any RoomSubscriber, _ request: PresenceRequest) {
        queueRequest(from: subscriber, id: request.id) { self.handlePresence(subscriber, request) }
    }

    /// A member's claim (`Room.claim`, `Room.unclaim`): always queued, under the same bound as intents.
    func claim(_ subscriber: any RoomSubscriber, _ request: ClaimRequest) {
        queueRequest(from: subscriber, id: request.id) { self.handleClaim(subscriber, request) }
    }

    /// Queues `work` for a member's request, or refuses it with `overloaded` when `maxQueuedIntents` already wait.
    func queueRequest(from subscriber: any RoomSubscriber, id: RequestID?, _ work: @escaping @Sendable () -> Void) {
        let waiting = queuedIntents.add(1, ordering: .relaxed).newValue
        guard waiting <= maxQueuedIntents else {
            queuedIntents.subtract(1, ordering: .relaxed)
            metrics.intentOverloaded()
            let error = ProtocolError(.overloaded, "room \(name) is behind (\(maxQueuedIntents) intents wait for it); not applied, retry in a moment",
                                      id: id, room: name)
            if subscriber.deliver(Frame.make(.error(error))) { waker.wake(subscriber) }
            return
        }
        submit {
            // Sequentially consistent here and in `whenQueueDrains` (decrement, then look for waiters; there: add a
            // waiter, then look at the count): with weaker orders both could read the old value and a waiter be lost.
            let left = self.queuedIntents.subtract(1, ordering: .sequentiallyConsistent).newValue
            if left <= self.maxQueuedIntents / 2, self.hasDrainWaiters.load(ordering: .sequentiallyConsistent) { self.resumeDrainWaiters() }
            guard !subscriber.isGone else { return }  // its connection closed: its leave comes next
            work()
        }
    }

    /// Backpressure for the transport: see `RoomEndpoint.whenQueueDrains`.
    func whenQueueDrains(_ resume: @escaping @Sendable () -> Void) -> Bool {
        guard queuedIntents.load(ordering: .relaxed) >= maxQueuedIntents else { return false }
        drainWaiters.withLock { $0.append(resume) }
        hasDrainWaiters.store(true, ordering: .sequentiallyConsistent)
        // The queue may have drained meanwhile (its last intent ran before the waiter was added): look again.
        if queuedIntents.load(ordering: .sequentiallyConsistent) <= maxQueuedIntents / 2 { resumeDrainWaiters() }
        return true
    }

    private func resumeDrainWaiters() {
        let waiting = drainWaiters.withLock { waiters -> [@Sendable () -> Void] in
            defer { waiters.removeAll() }
            hasDrainWaiters.store(false, ordering: .relaxed)
            return waiters
        }
        for resume in waiting { resume() }
    }

    /// Cluster mode: a member this owner does not know joined under an owner that was lost, in a room whose members
    /// are not stored (no presence). It rejoins silently, as it joined (its node says how: `membership`).
    func rejoinIfUnknown(_ subscriber: any RoomSubscriber) {
        guard !localDelivery, !room.isMember(subscriber.session) else { return }
        subscribe(subscriber)
        let membership = subscriber.membership
        carryOut(room.join(subscriber.session, name: membership?.name, roles: membership?.roles ?? [], user: membership?.user))
    }

    private func handleClaim(_ subscriber: any RoomSubscriber, _ request: ClaimRequest) {
        answer(subscriber, id: request.id) { room, now throws(IntentError) in
            let (session, control) = (subscriber.session, ControlID(request.control))
            return request.release ? try room.unclaim(session, control: control, target: request.target, blur: request.blur, requestID: request.id, at: now)
                                   : try room.claim(session, control: control, target: request.target, requestID: request.id, at: now)
        }
    }

    /// Runs a member's presence or claim request on the room: carries its update out and acks it (with an id), or
    /// sends its error.
    private func answer(_ subscriber: any RoomSubscriber, id: RequestID?, _ change: (inout Room, Instant) throws(IntentError) -> RoomUpdate) {
        assertOnQueue(queue)
        guard !refusedAsAbandoned(subscriber, id: id) else { return }
        rejoinIfUnknown(subscriber)
        do {
            carryOut(try change(&room, scheduler.now()))
            if let id { send(.ack(id: id, room: name, version: room.version), to: subscriber) }
        } catch {
            send(.error(ProtocolError(error.code, error.message, id: id, room: name)), to: subscriber)
        }
    }
}
