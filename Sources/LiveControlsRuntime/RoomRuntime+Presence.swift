import LiveControlsEngine
import LiveControlsProtocol

/// Presence in a busy room. Each presence update is a patch to every member, so a room of n members each updating
/// u times a second would cost n²·u deliveries a second: 500 members at 18 a second, 4.5 million — more than the
/// server writes, which then slowed every other room too. So a room sends at most one presence patch per
/// `presenceInterval` (1 ms per member in a room of more than `presenceGatheringMembers`, at most 1 s): an update
/// that comes sooner is checked at once (rate, size: its errors are not delayed) and gathered
/// (`Room.gatherPresence`); when the interval is over, one patch carries every gathered member's latest data, and
/// the gathered updates' acks follow it. Presence then costs a room at most about 1,000 deliveries a second, however
/// many members update how often, and each member still sees every other member's latest presence.
extension RoomRuntime {
    /// Rooms of at most this many members send every presence update as its own patch (at the presence rate limit,
    /// at most 8 × 8 × 20 = 1,280 deliveries a second).
    static let presenceGatheringMembers = 8
    static let presenceIntervalMaxMilliseconds = 1_000

    /// The shortest time between two presence patches of this room: 0 (none) in a small room, else 1 ms per member,
    /// at most 1 s.
    var presenceIntervalMilliseconds: Int {
        let members = room.memberCount
        return members <= Self.presenceGatheringMembers ? 0 : min(Self.presenceIntervalMaxMilliseconds, members)
    }

    /// A member's presence update, on the queue: its own patch when the room's last presence patch is at least an
    /// interval old, else gathered for the next one (armed for the interval's end).
    func handlePresence(_ subscriber: any RoomSubscriber, _ request: PresenceRequest) {
        assertOnQueue(queue)
        guard !refusedAsAbandoned(subscriber, id: request.id) else { return }
        rejoinIfUnknown(subscriber)
        let now = scheduler.now()
        let interval = presenceIntervalMilliseconds
        let due = lastPresencePatch.map { $0.adding(milliseconds: interval) } ?? now
        do {
            if !room.hasGatheredPresence, now >= due {
                carryOut(try room.setPresence(subscriber.session, data: request.data, requestID: request.id, at: now))
                lastPresencePatch = now
                if let id = request.id { send(.ack(id: id, room: name, version: room.version), to: subscriber) }
                return
            }
            try room.gatherPresence(subscriber.session, data: request.data, at: now)
        } catch {
            send(.error(ProtocolError(error.code, error.message, id: request.id, room: name)), to: subscriber)
            return
        }
        if let id = request.id { gatheredPresenceAcks.append((subscriber, id)) }
        guard !presenceFlushArmed else { return }
        presenceFlushArmed = true
        armPresenceFlush(at: due)
    }

    /// The gathered updates go at `deadline`, or, when a presence patch went meanwhile (a leaving member's), an
    /// interval after that one.
    private func armPresenceFlush(at deadline: Instant) {
        scheduler.once(at: deadline, on: queue) { [weak self] in
            guard let self else { return }
            let due = self.lastPresencePatch.map { $0.adding(milliseconds: self.presenceIntervalMilliseconds) } ?? deadline
            if self.room.hasGatheredPresence, self.scheduler.now() < due { return self.armPresenceFlush(at: due) }
            self.presenceFlushArmed = false
            self.commitGatheredPresence()
        }
    }

    /// Sends what presence updates were gathered, in one patch, then their acks. Also before a gathering member
    /// leaves (its update is applied, not lost, and acked before its `left`).
    func commitGatheredPresence() {
        assertOnQueue(queue)
        guard room.hasGatheredPresence || !gatheredPresenceAcks.isEmpty else { return }
        guard !abandoned, !retired, !isDeleted, !shuttingDown.load(ordering: .relaxed) else {
            gatheredPresenceAcks = []  // nobody is answered any more: the room stopped
            return
        }
        let acks = gatheredPresenceAcks
        gatheredPresenceAcks = []
        carryOut(room.commitGatheredPresence())
        lastPresencePatch = scheduler.now()
        // Not for a member that left meanwhile without its update applied (a cluster node lost: `dropSessions`).
        for (subscriber, id) in acks where !subscriber.isGone && room.isMember(subscriber.session) {
            send(.ack(id: id, room: name, version: room.version), to: subscriber)
        }
    }
}
