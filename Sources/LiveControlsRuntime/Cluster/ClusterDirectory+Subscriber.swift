import LiveControlsEngine
import LiveControlsProtocol
import LiveControlsRedis

/// What reaches this node on its subscriber connection (its inbox and every room's channel), on the subscriber
/// thread, in Redis's order: patches, hand-backs and deletions for the `ClusterRoom`s here; requests for the rooms
/// this node owns; replies for its sessions and its server API requests.
extension ClusterDirectory {
    func received(channel: String, payload: [UInt8]) {
        if let room = keys.room(ofPatchChannel: channel) {
            if let owner = ClusterEnvelope.decodeRelease(payload) {
                forgetOwner(room, owner)
                rooms.withLock { $0[room] }?.ownerReleased(owner)
                failAdminRequests(room: room, sentTo: owner)
                return
            }
            if let broadcast = ClusterEnvelope.decodeBroadcast(payload) {
                rooms.withLock { $0[room] }?.broadcasted(broadcast.message, except: broadcast.except, epoch: broadcast.epoch, version: broadcast.version)
                return
            }
            if let message = ClusterEnvelope.decodeDeletion(payload) {
                forgetOwner(room)
                rooms.withLock { $0[room] }?.deleted(message: message)
                return
            }
            // (Every room's channel reaches every node: decoded only for the rooms with a view here.)
            guard rooms.withLock({ $0[room] }) != nil, let publication = ClusterEnvelope.decodePublication(payload),
                  let local = learnOwner(room, publication.owner) else { return }
            local.published(epoch: publication.epoch, version: publication.version, owner: publication.owner, message: publication.message,
                            views: publication.views)
            return
        }
        switch ClusterEnvelope.decodeInbox(payload) {
        case let .reply(reply)?:
            if reply.notOwner { forgetOwner(reply.room) }  // it handed the room back (idle) or lost it
            rooms.withLock { $0[reply.room] }?.replied(reply)
        case let .adminReply(reply)?:
            adminReplied(reply)
        case let .request(request)? where request.request.isDisconnect:
            if case let .disconnect(grantedRooms) = request.request { disconnectHere(request, grantedRooms: grantedRooms) }
        case let .request(request)?:
            // Under the `owned` lock, as on the fast path: never onto a runtime an idle hand-back has retired.
            let handled = owned.withLock { owned -> Bool in
                guard let mine = owned[request.room] else { return false }
                handle(request.request, for: mine, from: request.node, session: request.session, token: request.token)
                return true
            }
            if !handled { refuseNotOwner(request) }
        case nil:
            logger.warning("malformed cluster message ignored", metadata: ["channel": "\(channel)"])
        }
    }

    /// Subscriber thread: the room's view here, if there is one; and `owner`, which published on its channel, is
    /// where its requests go from now on — not the owner it replaced, which a failover would otherwise leave cached
    /// until the next maintenance pass (a request sent to a dead owner is refused `unavailable`). Only the holder
    /// of the room's current fencing token publishes (`ClusterScripts`), and this runs in Redis's order with the
    /// releases and deletions that forget an owner, so a publication never brings back an owner already forgotten.
    /// Not while this node believes it owns the room itself (its takeover, or its own patches).
    private func learnOwner(_ room: String, _ owner: String) -> ClusterRoom? {
        rooms.withLock { rooms -> ClusterRoom? in
            guard let local = rooms[room] else { return nil }  // a view dropped (idle) caches nothing
            if owner != nodeID { owners.withLock { if $0[room] != nodeID && $0[room] != owner { $0[room] = owner } } }
            return local
        }
    }

    /// A request reached a node that no longer owns the room: the sender's client gets `unavailable`.
    private func refuseNotOwner(_ request: ClusterEnvelope.Request) {
        if case .admin = request.request {
            let answer = ClusterEnvelope.adminReply(room: request.room, token: request.token, .failure(Self.changingOwner(request.room)))
            return link.publish(keys.inbox(request.node), answer)
        }
        let message = ServerMessage.error(ProtocolError(.unavailable, "room \(request.room) is changing owner; retry in a moment",
                                                        id: requestID(of: request.request), room: request.room)).encoded()
        let envelope = message.withUnsafeBufferPointer {
            ClusterEnvelope.reply(room: request.room, session: request.session, token: request.token, state: nil, message: $0, notOwner: true)
        }
        link.publish(keys.inbox(request.node), envelope)
    }

    private func requestID(of request: ClusterRequest) -> RequestID? {
        switch request {
        case let .join(j): return j.id
        case let .intent(i, _): return i.id
        case let .presence(p, _): return p.id
        case let .claim(c, _): return c.id
        case let .broadcast(b, _): return b.id
        case let .undo(u, _): return u.id
        case let .leave(id, _), let .snapshot(id): return id
        case .admin, .disconnect: return nil
        }
    }

    func subscriberChanged(up: Bool, lostBecause why: String? = nil) {
        let wasUp = subscriberUp.withLock { s in defer { s = up }; return s }
        if up {
            subscriberRefusal.withLock { $0 = nil }
            logger.info("Redis subscriber connected")
            if !subscribedOnce.exchange(true, ordering: .acquiringAndReleasing) { firstSubscription.signal() }
            // Messages published while it was away are lost: every room here resyncs its sessions.
            for room in rooms.withLock({ Array($0.values) }) { room.redisReconnected() }
        } else if wasUp, why != RedisSubscriber.stoppedReason {
            logger.warning("Redis subscriber lost its connection; reconnecting", metadata: ["error": "\(why ?? "unknown")"])
        }
    }

    /// Subscriber thread: Redis refused the node's subscriptions (an ACL user without `&PREFIX*`, say). Logged once
    /// per distinct answer until the subscriptions succeed; the node stays not ready meanwhile.
    func subscriberRefused(_ message: String) {
        let isNew = subscriberRefusal.withLock { last in defer { last = message }; return last != message }
        if isNew {
            logger.error("Redis refused the node's subscriptions; the node is not ready until it accepts them",
                         metadata: ["error": "\(message)", "channels": "\(keys.inbox(nodeID)), \(keys.patchPattern)"])
        }
    }
}

extension ClusterDirectory {
    /// `/healthz` and `/readyz`: ready while Redis answers on every connection (the subscriber's included).
    package func health() -> (ready: Bool, fields: [(String, JSONValue)]) {
        let redisUp = link.isReachable && control.isReachable && subscriberUp.withLock { $0 }
        let cluster: JSONValue = [
            "node": .string(nodeID),
            "redis": redisUp ? "up" : "down",
            "ownedRooms": .int(owned.withLock { $0.count }),
        ]
        return (redisUp, [("cluster", cluster)])
    }
}
