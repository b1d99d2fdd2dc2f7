import Dispatch
import LiveControlsEngine
import LiveControlsProtocol
import Synchronization

/// Cluster mode: one room as seen from this node, for the connections here.
///
/// It forwards their requests to the room's owner (which may be this node) and delivers, in order, what
/// the owner publishes: patches on the room's channel, and replies for these sessions on this node's inbox.
/// Both arrive on the one subscriber connection, so a snapshot reply lands exactly between the patch it
/// shows and the next one. A gap in the versions (Redis dropped messages while the subscriber reconnected)
/// or a new epoch makes every session here resync, as after an overflow: never a silent gap.
///
/// Thread rules: every `var` is touched only on `queue` (the state is internal for `ClusterRoom+Upkeep.swift`; nothing
/// else uses it).
final class ClusterRoom: @unchecked Sendable {
    let name: String
    let queue: DispatchQueue
    unowned let directory: ClusterDirectory

    /// Sessions subscribed here: they get every patch.
    var members: [SessionID: any RoomSubscriber] = [:]
    /// Sessions whose join is on its way to the owner.
    var joining: [SessionID: any RoomSubscriber] = [:]
    /// Sessions whose `leave` waits for its `left`.
    var leaving: [SessionID: any RoomSubscriber] = [:]
    /// Gone connections (closing) whose leave waits for the answers to what they had forwarded: they stay members
    /// until then, so each ack comes after its patch.
    private var departing: [SessionID: any RoomSubscriber] = [:]
    /// Sessions whose next snapshot ends a resync (`RoomSubscriber.deliverResync`).
    var resyncing: Set<SessionID> = []
    /// The last patch seen on the room's channel.
    var epoch: String?
    private var version = 0
    /// The node that published the room's last patch: it changes when another owner takes over.
    var publisher: String?
    /// Each session's join, to send again when a re-join finds it not subscribed (its first join failed).
    var joins: [SessionID: (JoinRequest, ClusterDirectory.Creation)] = [:]

    /// Requests still on the link queue's slow path (owner not known yet): later ones must not overtake them.
    var slowPathInFlight = 0
    /// Forwarded requests waiting for their reply; each is answered once (`ClusterRequests`).
    var requests = ClusterRequests()
    /// When the owner was last heard from (a patch or a reply): while it keeps answering, a backlog of
    /// requests is progress, not a lost owner, and nothing times out.
    var lastHeard: Instant
    /// Set by `sweep` and by joins: whether any session here uses the room.
    let inUseFlag = Mutex(false)
    /// Since when (`directory.scheduler`, nanoseconds) no session here has used the room, as `sweep` last saw;
    /// 0 while one does.
    let idleSinceNanos = Atomic<UInt64>(0)
    /// Dropped by the directory (`retireIfUnused`): requests that still reach it are refused.
    var retired = false

    init(name: String, directory: ClusterDirectory) {
        self.name = name
        self.directory = directory
        self.queue = DispatchQueue(label: "livecontrols.cluster.\(name)", target: .global())
        self.lastHeard = directory.scheduler.now()
    }

    // MARK: From the service thread

    func join(_ connection: any RoomSubscriber, _ request: JoinRequest, creation: ClusterDirectory.Creation) {
        queue.async {
            self.idleSinceNanos.store(0, ordering: .relaxed)
            self.joining[connection.session] = connection
            self.joins[connection.session] = (request, creation)
            self.inUseFlag.withLock { $0 = true }
            var forwarded = request
            forwarded.token = nil
            forwarded.template = nil
            self.forward(.join(forwarded), for: connection, id: request.id, isJoin: true, creation: creation)
        }
    }

    func resync(_ connection: any RoomSubscriber, id: RequestID?) {
        queue.async {
            let session = connection.session
            if self.members[session] == nil, self.joining[session] == nil, let (request, creation) = self.joins[session] {
                // Its first join failed (no owner at the time): this one joins for real.
                var again = request
                again.id = id
                self.joining[session] = connection
                self.forward(.join(again), for: connection, id: id, isJoin: true, creation: creation)
                return
            }
            self.forward(.snapshot(id: id), for: connection, id: id)
        }
    }

    func resyncAfterOverflow(_ connection: any RoomSubscriber) {
        queue.async {
            guard self.members[connection.session] === connection || self.joining[connection.session] === connection else {
                connection.cancelResync(room: self.name)
                return
            }
            self.resyncing.insert(connection.session)
            self.forward(.snapshot(id: nil), for: connection, id: nil, isResync: true)
        }
    }

    func leave(_ connection: any RoomSubscriber, id: RequestID?, reason: HoldEndReason) {
        queue.async {
            defer { self.settleBarriers() }  // after the answers this block queued
            let session = connection.session
            if reason != .leave {
                // A closing connection (4001 leaves at once): what it forwarded is answered first, patch then ack.
                guard self.departing[session] !== connection else { return }  // already waiting to leave
                let waits = self.requests.whenAnswered(of: connection) { [weak self] in
                    guard let self, self.departing[session] === connection else { return }
                    self.departing[session] = nil
                    self.leave(connection, id: id, reason: reason)
                }
                if waits {
                    self.departing[session] = connection
                    return
                }
            }
            self.members[session] = nil
            self.joining[session] = nil
            self.joins[session] = nil
            self.resyncing.remove(session)
            if reason == .leave {
                self.leaving[session] = connection
            } else {
                // Gone for good: nothing that is still on its way may bring this connection back.
                self.requests.drop(connection)
            }
            self.forward(.leave(id: id, reason: reason), for: connection, id: id, expectsReply: reason == .leave)
        }
    }

    /// An intent, a presence update or a claim (made with the session's `Membership`, as it joined): forwarded to the
    /// owner. One without an id gets no answer when it succeeds (only errors come back), so nothing waits for one.
    func act(_ connection: any RoomSubscriber, id: RequestID?, _ make: @escaping @Sendable (Membership?) -> ClusterRequest) {
        queue.async {
            guard !connection.isGone else { return }  // closing: what it left waiting here is dropped, never sent
            let session = connection.session
            let request = make(self.joins[session].map { Membership(name: $0.0.name, roles: $0.0.roles, user: $0.0.user) })
            guard self.members[session] != nil || self.joining[session] != nil else {
                // Not subscribed here: the room was deleted, or the join failed. The owner would refuse it too.
                let error = ProtocolError(.notJoined, "you are not in room \(self.name) (it was deleted, or your join failed); join it again", id: id, room: self.name)
                if connection.deliver(Frame.make(.error(error))) { self.directory.waker.wake(connection) }
                return
            }
            self.forward(request, for: connection, id: id, expectsReply: id != nil)
        }
    }

    /// Queue only.
    func forward(_ request: ClusterRequest, for connection: any RoomSubscriber, id: RequestID?, isJoin: Bool = false,
                         isResync: Bool = false, expectsReply: Bool = true, creation: ClusterDirectory.Creation? = nil) {
        assertOnQueue(queue)
        guard !retired else {
            // Unreachable by design (a room a connection uses is never retired); answered rather than lost.
            if expectsReply, !isResync, connection.deliver(Frame.make(.error(ProtocolError(.unavailable, "room \(name) was unloaded on this node; join it again", id: id, room: name)))) {
                directory.waker.wake(connection)
            }
            return
        }
        let token = directory.nextToken()
        if expectsReply {
            requests.add(token, .init(connection: connection, id: id, isJoin: isJoin, isResync: isResync, isLeave: request.isLeave,
                                      deadline: directory.scheduler.now().adding(milliseconds: directory.replyTimeoutMilliseconds)))
        }
        let tookFastPath = directory.forward(
            request, room: name, session: connection.session, token: token, creation: creation, fastPath: slowPathInFlight == 0,
            failed: { [weak self] error in self?.failed(token: token, error) },
            sent: { [weak self] owner in self?.sent(token: token, to: owner) },
            slowPathDone: { [weak self] in self?.slowPathFinished() })
        if !tookFastPath { slowPathInFlight += 1 }
    }

    // MARK: From the subscriber thread (in Redis's order) and the link queue

    /// A patch the owner published.
    /// `views`: set when members see the patch differently, each listed session's message (`message` for the others).
    func published(epoch: String, version: Int, owner: String, message: ArraySlice<UInt8>, views: [SessionID: ArraySlice<UInt8>]? = nil) {
        queue.async {
            defer { self.settleBarriers() }  // after the answers this block queued
            self.lastHeard = self.directory.scheduler.now()
            if owner != self.publisher {
                self.publisher = owner
                self.failRequests(sentToOtherThan: owner)
            }
            let newEpoch = self.epoch != nil && self.epoch != epoch
            if newEpoch || message.isEmpty {
                // A new lifetime (or its announcement): every session here needs its snapshot, which also
                // covers this patch.
                self.epoch = epoch
                self.version = version
                if newEpoch { self.resyncAll() }
                return
            }
            if self.epoch == epoch {
                if version <= self.version { return }
                if version > self.version + 1 {
                    self.version = version
                    self.resyncAll()
                    return
                }
            }
            self.epoch = epoch
            self.version = version
            guard !self.members.isEmpty else { return }
            self.directory.metrics.delivered(toMembers: self.members.count)
            let crowd = self.members.count > inlineSubscriberLimit
            let frame = Frame.make(bytes: message, stateOfRoom: self.name, stateVersion: (epoch, version), toMany: crowd)
            var toWake: [any RoomSubscriber] = []
            guard let views else {
                for connection in self.members.values where connection.deliver(frame) { toWake.append(connection) }
                if !toWake.isEmpty { self.directory.waker.wake(toWake) }
                return
            }
            // One frame per distinct view: sessions that share a message share its frame.
            var frames: [Int: Frame] = [:]
            for (session, connection) in self.members {
                var chosen = frame
                if let bytes = views[session] {
                    if let made = frames[bytes.startIndex] {
                        chosen = made
                    } else {
                        chosen = Frame.make(bytes: bytes, stateOfRoom: self.name, stateVersion: (epoch, version), toMany: crowd)
                        frames[bytes.startIndex] = chosen
                    }
                }
                if connection.deliver(chosen) { toWake.append(connection) }
            }
            if !toWake.isEmpty { self.directory.waker.wake(toWake) }
        }
    }

    /// A reply the owner sent for one of this node's sessions.
    func replied(_ reply: ClusterEnvelope.Reply) {
        queue.async {
            defer { self.settleBarriers() }  // after the answers this block queued
            self.lastHeard = self.directory.scheduler.now()
            let request: ClusterRequests.Pending?
            switch self.requests.reply(reply.token) {
            case .answeredEarly: return  // already answered `unavailable`
            case let .request(waiting): request = waiting
            case .none: request = nil
            }
            let session = reply.session
            guard let connection = self.members[session] ?? self.joining[session] ?? self.leaving[session] ?? request?.connection else { return }
            var frame: Frame
            if let epoch = reply.epoch, let version = reply.version {
                // A resync of every member (a gap, a new epoch) is a crowd's fan-out when the room is large.
                let crowd = self.resyncing.contains(session) && self.members.count > inlineSubscriberLimit
                frame = Frame.make(bytes: reply.message, stateOfRoom: self.name, stateVersion: (epoch, version), toMany: crowd)
                let startsSubscription = self.joining.removeValue(forKey: session) != nil || request?.isJoin == true
                let isSnapshot = startsSubscription || self.resyncing.contains(session) || request != nil
                if isSnapshot {
                    // A snapshot or `resumed` sits exactly at the room's current version in this stream.
                    self.epoch = epoch
                    self.version = version
                }
                if startsSubscription, self.leaving[session] == nil { self.members[session] = connection }
                if self.resyncing.remove(session) != nil {
                    if connection.deliverResync(frame, room: self.name) { self.directory.waker.wake(connection) }
                    return
                }
            } else {
                if let request, request.isResync {
                    // The owner could not give the snapshot (it is changing hands): ask again in a moment.
                    return self.answer(request, ProtocolError(.unavailable, "no snapshot"))
                }
                frame = Frame.make(bytes: reply.message)
                if request?.isJoin == true { self.joining[session] = nil }
                if self.leaving[session] != nil, request != nil, self.members[session] == nil { self.leaving[session] = nil }
            }
            if connection.deliver(frame) { self.directory.waker.wake(connection) }
        }
    }

    /// The owner published a broadcast, sent when the room was at `version` of `epoch`: to every member here but `except`
    /// and those waiting for a snapshot (it would come before the patches the snapshot carries). A version this node
    /// has not seen means a patch was missed: everyone here resyncs, and the broadcast is not shown (as to a member who
    /// joined a moment later).
    func broadcasted(_ message: ArraySlice<UInt8>, except: SessionID?, epoch: String, version: Int) {
        queue.async {
            self.lastHeard = self.directory.scheduler.now()
            if let known = self.epoch {
                guard known == epoch else { return }  // another lifetime: its snapshot is on its way
                if version > self.version {
                    self.version = version
                    self.resyncAll()
                    return
                }
            }
            let frame = Frame.broadcast(bytes: message, room: self.name, toMany: self.members.count > inlineSubscriberLimit)
            var toWake: [any RoomSubscriber] = []
            for (session, connection) in self.members
            where session != except && !self.resyncing.contains(session) && connection.deliver(frame) { toWake.append(connection) }
            if !toWake.isEmpty { self.directory.waker.wake(toWake) }
        }
    }

    /// The owner deleted the room (server API): every session here is told (`message`, the `room_deleted` error)
    /// and is no longer in it. Each keeps its join: joining again makes the room anew, where that may.
    func deleted(message: ArraySlice<UInt8>) {
        queue.async {
            self.lastHeard = self.directory.scheduler.now()
            self.tellAndForget(Frame.make(bytes: message), joiningToo: true)
        }
    }

    /// Queue only: `frame` to every member (and every session joining, with `joiningToo`), who are then no longer in
    /// the room here; the subscription's epoch and version are forgotten.
    func tellAndForget(_ frame: Frame, joiningToo: Bool) {
        assertOnQueue(queue)
        let told = joiningToo ? members.merging(joining, uniquingKeysWith: { member, _ in member }) : members
        var toWake: [any RoomSubscriber] = []
        for connection in told.values where connection.deliver(frame) { toWake.append(connection) }
        if !toWake.isEmpty { directory.waker.wake(toWake) }
        members.removeAll()
        if joiningToo { joining.removeAll() }
        resyncing.removeAll()
        epoch = nil
        version = 0
        publisher = nil
    }

    /// A new owner published: intents and snapshots sent to the one it replaced will never be answered.
    /// (Joins wait for their timeout.)
}
