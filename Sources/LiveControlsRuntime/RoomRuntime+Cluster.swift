import LiveControlsEngine

/// Cluster mode, on the owner: members are `RemoteSession`s on any node (`remoteMembers`, counted per node in
/// `nodeCounts`); the nodes that are gone drop out, and a takeover adopts the stored members.
extension RoomRuntime {
    /// Cluster mode: the sessions of nodes that are gone leave (reason `disconnect`).
    func dropSessions(onNodes gone: Set<String>) {
        submit {
            for (session, member) in self.remoteMembers where member.node.map(gone.contains) == true {
                self.setRemote(session, nil)
                self.dropWaitingIntents(of: session, told: false)
                self.carryOut(self.room.leave(session, reason: .disconnect))
            }
            self.noteIfEmpty()
        }
    }

    /// Cluster mode, at takeover: members are kept with the node they are on (the ticker drops those of nodes
    /// that are gone); members of no known node leave (reason `disconnect`). Holds end first, with `failover`.
    func adoptMembers(_ nodes: [SessionID: String], session make: @escaping @Sendable (String, SessionID) -> any RoomSubscriber) {
        submit {
            self.carryOut(self.room.endHolds(reason: .failover))
            for session in self.room.sessions {
                if let node = nodes[session] {
                    self.setRemote(session, make(node, session))
                } else {
                    self.carryOut(self.room.leave(session, reason: .disconnect))
                }
            }
            if !self.remoteMembers.isEmpty { self.emptySinceNanos.store(0, ordering: .relaxed) }
            self.armLoadedTimers()
        }
    }

    /// Cluster mode: the lease was lost; this node stops acting for the room.
    func relinquish() {
        submit { self.abandon(after: ClusterStoreError.fencedOut, notify: false) }
    }

    /// Cluster mode: the nodes this room's members are on (any thread; never waits for the room's queue).
    func memberNodes() -> Set<String> {
        Set(nodeCounts.withLock { $0.keys })
    }

    /// Queue only: the one way `remoteMembers` changes, so `nodeCounts` stays true.
    func setRemote(_ session: SessionID, _ remote: (any RoomSubscriber)?) {
        assertOnQueue(queue)
        let old = remoteMembers[session]
        remoteMembers[session] = remote
        guard old?.node != remote?.node else { return }
        nodeCounts.withLock { counts in
            if let node = old?.node {
                counts[node, default: 1] -= 1
                if counts[node] == 0 { counts[node] = nil }
            }
            if let node = remote?.node { counts[node, default: 0] += 1 }
        }
    }
}
