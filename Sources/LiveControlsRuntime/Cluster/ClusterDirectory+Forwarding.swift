import Dispatch
import LiveControlsEngine
import LiveControlsProtocol
import LiveControlsRedis

extension ClusterDirectory {
    // MARK: Forwarding (any thread → link queue)

    /// Sends a session's request to the room's owner; `failed` is called (any thread) when it could not be.
    func forward(_ request: ClusterRequest, room: String, session: SessionID, token: Int, creation: Creation?, fastPath: Bool,
                 failed: @escaping @Sendable (ProtocolError) -> Void, sent: @escaping @Sendable (String) -> Void,
                 slowPathDone: @escaping @Sendable () -> Void) -> Bool {
        // Fast path: the owner is known; no hop through the link queue. The caller allows it only while none of
        // its requests is still on the slow path, so a room's requests never overtake one another.
        if fastPath, let owner = owners.withLock({ $0[room] }) {
            if owner != nodeID {
                sent(owner)
                send(request, room: room, session: session, token: token, to: owner, failed: failed)
                return true
            }
            // Dispatched under the `owned` lock, so an idle hand-back (which retires the runtime under it)
            // either sees this request on the room's queue or happens before it and it takes the slow path.
            let handled = owned.withLock { owned -> Bool in
                guard let mine = owned[room] else { return false }
                sent(owner)
                handle(request, for: mine, from: nodeID, session: session, token: token)
                return true
            }
            if handled { return true }
        }
        link.queue.async { [self] in
            defer { slowPathDone() }
            do throws(RedisError) {
                switch try resolveOwner(room, creation: creation) {
                case let .refused(error):
                    failed(error)
                case let .owner(owner) where owner == nodeID:
                    guard let mine = owned.withLock({ $0[room] }) else {
                        forgetOwner(room, owner)
                        return failed(ProtocolError(.unavailable, "room \(room) is changing owner; retry in a moment"))
                    }
                    sent(owner)
                    handle(request, for: mine, from: nodeID, session: session, token: token)
                case let .owner(owner):
                    sent(owner)
                    send(request, room: room, session: session, token: token, to: owner, failed: failed)
                }
            } catch {
                // Clients hear that Redis is away, not where it is (the node's log says: `Redis not reachable`).
                failed(ProtocolError(.unavailable, "the cluster's Redis is not reachable right now; retry in a moment"))
            }
        }
        return false
    }

    /// Publishes a request to the owner's inbox; nobody listening there means the owner node is gone.
    func send(_ request: ClusterRequest, room: String, session: SessionID, token: Int, to owner: String,
                      failed: @escaping @Sendable (ProtocolError) -> Void) {
        let envelope = ClusterEnvelope.encode(.init(request: request, room: room, node: nodeID, session: session, token: token))
        clusterMetrics.forwarded()
        // The lease runs out at most a lease after the owner's last renewal, and a node with clients in the room takes
        // it at its next upkeep, a third of a lease later at most.
        let takeover = options.leaseMilliseconds * 4 / 3
        link.publish(keys.inbox(owner), envelope) { [self] result in
            switch result {
            case .success(0):
                forgetOwner(room, owner)
                failed(ProtocolError(.unavailable, "room \(room)'s owner node \(owner) is not reachable; another node takes over within \(takeover) ms, retry then"))
            case .success:
                break
            case .failure:
                failed(ProtocolError(.unavailable, "the cluster's Redis is not reachable right now; retry in a moment"))
            }
        }
    }

    /// Forgets that `owner` owns `room` (if that is still what is remembered).
    func forgetOwner(_ room: String, _ owner: String? = nil) {
        owners.withLock { if owner == nil || $0[room] == owner { $0[room] = nil } }
    }

    /// Runs a request on a room this node owns.
    func handle(_ request: ClusterRequest, for owner: Owned, from node: String, session: SessionID, token: Int) {
        let remote = RemoteSession(node: node, session: session, token: token, outlet: owner.store)
        switch request {
        case let .join(join): owner.runtime.join(remote, join)
        case let .intent(intent, member): _ = owner.runtime.intent(remote.joined(as: member), intent, inline: false)
        case let .presence(presence, member): owner.runtime.presence(remote.joined(as: member), presence)
        case let .claim(claim, member): owner.runtime.claim(remote.joined(as: member), claim)
        case let .broadcast(broadcast, member): owner.runtime.broadcast(remote.joined(as: member), broadcast)
        case let .undo(undo, member): owner.runtime.undo(remote.joined(as: member), undo)
        case let .leave(id, reason): owner.runtime.leave(remote, id: id, reason: reason)
        case let .snapshot(id): owner.runtime.resync(remote, id: id)
        case let .admin(call): run(call, on: owner, replyTo: node, token: token)
        case .disconnect: break  // never for a room's owner: `received` hands it to this node's connections
        }
    }
}
