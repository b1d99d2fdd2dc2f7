import LiveControlsEngine
import LiveControlsProtocol

/// A `ClusterRoom`'s upkeep, from the link queue's maintenance passes (the ticker) and the subscriber thread: request
/// time-outs, idleness and retirement, a reconnected subscriber, a room Redis no longer holds.
extension ClusterRoom {
    // MARK: Link queue (ticker)

    /// Whether any session here uses the room (any thread): the ticker takes over only rooms in use.
    var inUse: Bool { inUseFlag.withLock { $0 } }

    /// Answers requests whose owner never replied with `unavailable`. Runs on the room's own queue, in
    /// order with what it has heard, so a backlog here is never mistaken for a silent owner.
    func sweep() {
        queue.async {
            defer { self.settleBarriers() }  // after the answers this block queued
            let now = self.directory.scheduler.now()
            let error = ProtocolError(.unavailable, "the room's owner did not answer in time; the request may or may not have taken effect")
            for request in self.requests.answerOverdue(now: now, lastHeard: self.lastHeard, timeoutMilliseconds: self.directory.replyTimeoutMilliseconds) {
                self.directory.clusterMetrics.timedOut()
                self.answer(request, error)
            }
            self.requests.forgetAnswered(now: now)
            let used = !self.members.isEmpty || !self.joining.isEmpty || !self.requests.isEmpty
            self.inUseFlag.withLock { $0 = used }
            if self.isUnused {
                if self.idleSinceNanos.load(ordering: .relaxed) == 0 {
                    self.idleSinceNanos.store(max(1, self.directory.scheduler.now().nanoseconds), ordering: .relaxed)
                }
            } else {
                self.idleSinceNanos.store(0, ordering: .relaxed)
            }
        }
    }

    /// Queue only: no session here is in the room, on its way in or out, or waiting for an answer.
    private var isUnused: Bool {
        members.isEmpty && joining.isEmpty && leaving.isEmpty && requests.isEmpty && joins.isEmpty && slowPathInFlight == 0
    }

    /// Since when no session here has used the room, as the last sweep saw (any thread); nil while one does.
    var idleSince: Instant? {
        let nanoseconds = idleSinceNanos.load(ordering: .relaxed)
        return nanoseconds == 0 ? nil : Instant(nanoseconds: nanoseconds)
    }

    /// Retires this view of the room if still unused (waits for its queue, so requests sent before are handled
    /// first); the directory then drops it. A later join makes a new one.
    func retireIfUnused(idleSince cutoff: UInt64) -> Bool {
        assertNotOnQueue(queue)
        return queue.sync {
            let since = idleSinceNanos.load(ordering: .relaxed)
            guard !retired, isUnused, since != 0, since <= cutoff else { return false }
            retired = true
            return true
        }
    }

    /// The subscriber connection came back: what was published while it was away is lost — patches (every member
    /// resyncs) and replies, so every request still waiting is answered `unavailable` now: in a busy room the owner
    /// is never silent, and a request whose reply was lost would otherwise wait for as long as the room stays busy.
    func redisReconnected() {
        queue.async {
            defer { self.settleBarriers() }  // after the answers this block queued
            self.resyncAll()
            self.answerEarly(ProtocolError(.unavailable, "the connection to Redis was lost before the answer came; the request may or may not have taken effect")) { _ in true }
        }
    }

    func resyncAll() {
        assertOnQueue(queue)
        var toWake: [any RoomSubscriber] = []
        for connection in members.values where connection.requireResync(room: name) { toWake.append(connection) }
        if !toWake.isEmpty { directory.waker.wake(toWake) }
    }

    /// Nobody holds the room and Redis has no state for it, though sessions here may be in it: the server API deleted
    /// the epoch they are in (`deletedEpoch`, its tombstone; this node missed the notice), or Redis lost the room.
    func absentFromStore(deletedEpoch: String?) {
        queue.async {
            defer { self.settleBarriers() }  // after the answers this block queued
            guard !self.members.isEmpty else { return }
            if let deletedEpoch, deletedEpoch == self.epoch {
                self.tellAndForget(Frame.make(.error(RoomRuntime.deletedError(self.name))), joiningToo: true)
            } else {
                self.lostFromStore()
            }
        }
    }

    /// Redis no longer holds the room though sessions here are in it (it restarted without its data, or a failover
    /// promoted a replica that never had it): each is told, as when a room stops (`error` `unavailable` with the
    /// room and no id: join again — which makes the room anew, a new epoch, where joins may create rooms), and is
    /// no longer in it; requests still waiting get `unavailable`.
    private func lostFromStore() {
        assertOnQueue(queue)
        // What the members were waiting for first (a leave is done: nothing is left to leave), then the message that
        // they are out of the room.
        for request in requests.answerEarly(now: directory.scheduler.now(), where: { !$0.isJoin }) {
            let session = request.connection.session
            if request.isLeave, leaving[session] === request.connection {
                leaving[session] = nil
                if request.connection.deliver(Frame.make(.left(room: name, id: request.id))) { directory.waker.wake(request.connection) }
            } else {
                answer(request, ProtocolError(.unavailable, "room \(name) is no longer in the cluster's store; join it again"))
            }
        }
        tellAndForget(Frame.make(.error(ProtocolError(.unavailable, "room \(name) is no longer in the cluster's store (Redis lost its data); join it again", room: name))),
                      joiningToo: false)
    }
}
