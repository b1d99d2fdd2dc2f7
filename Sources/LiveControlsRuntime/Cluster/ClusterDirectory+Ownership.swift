import Dispatch
import LiveControlsEngine
import LiveControlsProtocol
import LiveControlsRedis

extension ClusterDirectory {
    enum Resolution {
        case owner(String)
        case refused(ProtocolError)
    }

    /// Link queue: who owns `room`, taking it over when nobody does.
    func resolveOwner(_ room: String, creation: Creation?) throws(RedisError) -> Resolution {
        if let cached = owners.withLock({ $0[room] }), cached != nodeID || owned.withLock({ $0[room] != nil }) { return .owner(cached) }
        for _ in 0..<3 {
            if let holder = try link.run({ c throws(RedisError) in try c.command([ "GET", keys.lease(room)]) }).text {
                if holder == nodeID, owned.withLock({ $0[room] == nil }) {
                    // A lease this node no longer acts on (it stopped after a failed write): give it up.
                    releaseLease(room)
                    continue
                }
                owners.withLock { $0[room] = holder }
                return .owner(holder)
            }
            if stopping.load(ordering: .acquiring) {
                return .refused(ProtocolError(.unavailable, "room \(room) has no owner and this node is stopping; retry on another node"))
            }
            if let resolution = try takeOver(room, creation: creation) { return resolution }
        }
        return .refused(ProtocolError(.unavailable, "room \(room) is changing owner; retry in a moment"))
    }

    /// Link queue: acquires the lease and starts the room here. Nil when another node won the race.
    private func takeOver(_ room: String, creation: Creation?) throws(RedisError) -> Resolution? {
        guard let lease = try acquireLease(room) else { return nil }
        let fence = lease.fence
        if let previous = owned.withLock({ $0.removeValue(forKey: room) }) {
            // This node still ran the room (its renewals failing) and its lease lapsed meanwhile — the watchdog stops a
            // room before that, so only a watchdog that fired late gets here: that ownership ends before this one starts
            // (its writes carry the old fence, which Redis now refuses). Its lease is not released: it is this one's now.
            endOwnership(previous, of: room, why: "its lease lapsed before it was renewed; taken anew")
        }
        let stored: ClusterStoredRoom?
        let leftover: [PendingWebhook]
        do {
            stored = try loadRoom(room)
            leftover = try leftoverWebhooks(room)
        } catch {
            releaseLease(room, fence: fence)
            throw error
        }
        let store = RedisRoomStore(room: room, fence: fence, owner: nodeID, link: link, keys: keys, historyLimit: config.historyLimit)
        let runtime: RoomRuntime
        let storedTemplate = stored.map { config.templateName(forStoredRoom: room, storedWith: $0.room.template) }
        if let stored, let storedTemplate, storedTemplate == stored.room.template, let template = config.templates[storedTemplate],
           let restored = Room(restoring: stored.room, template: template, historyLimit: config.historyLimit) {
            runtime = makeRuntime(restored, store: store)
            webhooks?.enqueue(leftover)
            if let changes = stored.room.unannounced {
                runtime.submit { runtime.resumeAnnouncing(changes) }  // gathered by the last owner, told from here
            }
            runtime.adoptMembers(stored.nodes) { node, session in
                RemoteSession(node: node, session: session, token: 0, outlet: store)
            }
            logger.info("room taken over", metadata: ["room": "\(room)", "epoch": "\(restored.epoch)", "version": "\(restored.version)", "fence": "\(fence)"])
        } else {
            let templateName: String
            if let stored, let storedTemplate {
                guard let template = config.templates[storedTemplate] else {
                    releaseLease(room, fence: fence)
                    return .refused(ProtocolError(.internalError, "room \(room)'s template \(storedTemplate) is not in this node's config"))
                }
                templateName = storedTemplate
                logger.warning("room cannot be restored exactly (its template changed): it starts a new epoch", metadata: [
                    "room": "\(room)", "oldEpoch": "\(stored.room.epoch)",
                    "changes": "\(Room.configurationChangeDetails(stored: stored.room, template: template, templateName: templateName))"])
            } else {
                guard let creation, creation.refusal == nil else {
                    releaseLease(room, fence: fence)
                    return .refused(creation?.refusal ?? ProtocolError(.unknownRoom, "room \(room) does not exist"))
                }
                if !config.hasRoom(named: room), var refusal = creation.take?() {
                    releaseLease(room, fence: fence)
                    refusal.room = room
                    return .refused(refusal)
                }
                templateName = creation.template ?? config.defaultTemplate
            }
            let fresh = Room(name: room, template: config.templates[templateName]!, epoch: RoomRegistry.newEpoch(), historyLimit: config.historyLimit)
            runtime = makeRuntime(fresh, store: store)
            webhooks?.enqueue(leftover)
            if let stored, let changes = stored.room.unannounced, let webhooks {
                // The old epoch's changes not yet told go out with the new epoch's reset.
                let earlier = webhooks.pending(WebhookDraft(type: "room.changed", data: WebhookDispatcher.changedData(
                    room: room, changes, toVersion: stored.room.version)), room: room)
                runtime.submit { runtime.pendingChangesOfEarlierEpoch = earlier }
            }
            runtime.persistReset()
            logger.info("room created", metadata: ["room": "\(room)", "template": "\(templateName)", "epoch": "\(fresh.epoch)", "fence": "\(fence)"])
        }
        own(room, Owned(runtime: runtime, store: store, leaseConfirmed: lease.asked))
        clusterMetrics.tookOver()
        return .owner(nodeID)
    }

    /// Link queue: takes the room's lease if no node holds it; its new fencing token, or nil when another holds it.
    func acquireLease(_ room: String) throws(RedisError) -> Lease? {
        guard !stopping.load(ordering: .acquiring) else { return nil }  // (a stopping node takes no room: `stopping`)
        let asked = scheduler.now()
        let acquired = try link.run { c throws(RedisError) in
            try c.eval(ClusterScripts.acquire, keys: [keys.lease(room), keys.fence(room), keys.state(room)],
                       args: [Array(nodeID.utf8), Array(String(options.leaseMilliseconds).utf8)])
        }
        guard let fence = acquired.integer, fence > 0 else { return nil }
        return Lease(fence: fence, asked: asked)
    }

    func makeRuntime(_ room: Room, store: RedisRoomStore) -> RoomRuntime {
        let runtime = RoomRuntime(room: room, store: store, historyLimit: config.historyLimit, waker: waker, metrics: metrics,
                                  scheduler: scheduler, logger: logger, localDelivery: false, webhooks: webhooks,
                                  maxQueuedIntents: roomQueueIntents, hook: config.templates[room.template]?.intentHook, hookClient: hooks)
        store.nodeOf = { [unowned runtime] session in runtime.remoteMembers[session]?.node }
        // Counted from the intent's arrival here, not from its node's forwarding: the 500 ms cover its way through Redis and
        // this room's queue (a node keeps waiting while the owner keeps publishing, so this is the safe side).
        runtime.hookDeadlineMs = replyTimeoutMilliseconds - 500
        runtime.clusterBroadcast = { [unowned store] message, except, epoch, version in
            store.publishBroadcast(message, except: except, epoch: epoch, showing: version)
        }
        runtime.onStoreFailure = { [weak self, weak runtime] error in
            guard let self, let runtime else { return }
            self.link.queue.async { self.relinquish(room.name, runtime: runtime, why: "\(error)") }
        }
        return runtime
    }

    /// Link queue: this node stops acting for `room` (only if `runtime` still is its owner here).
    func relinquish(_ room: String, runtime: RoomRuntime? = nil, why: String) {
        let removed: Owned? = owned.withLock { owned in
            guard let current = owned[room], runtime == nil || current.runtime === runtime else { return nil }
            owned[room] = nil
            return current
        }
        guard let removed else { return }
        forgetOwner(room)
        endOwnership(removed, of: room, why: why)
        releaseLeaseAfterItsWrites(room, fence: removed.store.fence)
    }

    /// Link queue: `room` is this node's now (taken over, or created through the API): its watchdog deadline counts.
    func own(_ room: String, _ owner: Owned) {
        owned.withLock { $0[room] = owner }
        leasesChanged()
        owners.withLock { $0[room] = nodeID }
    }

    /// Link queue: an ownership already taken out of `owned` stops acting (its writes, its webhooks: its next owner
    /// sends what is left, from Redis).
    private func endOwnership(_ owner: Owned, of room: String, why: String) {
        clusterMetrics.relinquished()
        owner.store.stop()
        owner.runtime.relinquish()
        webhooks?.forget(room: room)
        logger.warning("room no longer owned here: \(why)", metadata: ["room": "\(room)"])
    }

    /// Link queue: gives the lease up if this node still holds it (best effort), at once; with `fence`, only the lease
    /// taken with it.
    func releaseLease(_ room: String, fence: Int64? = nil) {
        _ = try? link.run { c throws(RedisError) in
            try c.eval(ClusterScripts.release, keys: [keys.lease(room), keys.fence(room)], args: releaseArguments(fence))
        }
    }

    /// Any thread: gives up the lease taken with `fence` behind every command the room's ownership put in the pipeline
    /// (its last writes, its `room.unloaded`, its deletion): no other node can fence those out by taking the room first,
    /// and a lease this node took again meanwhile stays.
    func releaseLeaseAfterItsWrites(_ room: String, fence: Int64) {
        link.eval(ClusterScripts.release, keys: [keys.lease(room), keys.fence(room)], args: releaseArguments(fence)) { _ in }
    }

    private func releaseArguments(_ fence: Int64?) -> [[UInt8]] {
        [Array(nodeID.utf8), Array((fence.map(String.init) ?? "").utf8)]
    }

    /// Link queue: which of `nodes` are still running (their `alive:` key exists).
    private func aliveNodes(_ nodes: Set<String>) throws(RedisError) -> Set<String> {
        var alive: Set<String> = [nodeID]
        let others = nodes.subtracting([nodeID]).sorted()
        guard !others.isEmpty else { return alive }
        let replies = try link.run { c throws(RedisError) in try c.pipeline(others.map { [Array("EXISTS".utf8), Array(keys.alive($0).utf8)] }) }
        for (node, reply) in zip(others, replies) where reply.integer == 1 { alive.insert(node) }
        return alive
    }

    // MARK: Ticker (control queue, every third of the lease)

    /// Refreshes this node's `alive` key and renews its leases, in one pipeline (one round trip); false when a renewal
    /// failed and rooms wait for its retry (the caller tries again soon).
    func tick() -> Bool {
        let mine = owned.withLock { $0 }
        let names = mine.keys.sorted()
        let script = Array(ClusterScripts.renew.source.utf8)
        let lease = Array(String(options.leaseMilliseconds).utf8), node = Array(nodeID.utf8)
        let commands = [[Array("SET".utf8), Array(keys.alive(nodeID).utf8), Array("1".utf8), Array("PX".utf8), lease]] + names.map { name in
            [Array("EVAL".utf8), script, Array("2".utf8), Array(keys.lease(name).utf8), Array(keys.fence(name).utf8),
             node, lease, Array(String(mine[name]!.store.fence).utf8)]
        }
        let sent = scheduler.now()
        let replies: [RedisReply]
        let server: RedisEndpoint?
        do {
            (replies, server) = try control.run { c throws(RedisError) in
                let replies = try c.pipeline(commands)
                if case let .error(message) = replies[0] {
                    throw RedisError(.protocolError, message)  // a Redis loading its data, a busy script: not set
                }
                return (Array(replies.dropFirst()), c.server)
            }
        } catch {
            if !redisLostLogged {
                // Once per outage: what went wrong (a wrong password shows as `AUTH failed`; never the password).
                redisLostLogged = true
                logger.error("Redis not reachable; this node is not ready until it is", metadata: ["redis": "\(options.redis)", "error": "\(error.message)"])
            }
            let waiting = renewalFailed(why: "Redis is not reachable: \(error.message)")
            // Owners elsewhere are asked again once Redis answers; rooms this node keeps through the outage stay known.
            let stillMine = Set(owned.withLock { Array($0.keys) })
            owners.withLock { owners in owners = owners.filter { $0.value == nodeID && stillMine.contains($0.key) } }
            scheduleMaintenance()
            return !waiting
        }
        if redisLostLogged {
            redisLostLogged = false
            logger.notice("Redis reachable again", metadata: ["redis": "\(options.redis)"])
        }
        if options.redis.masterName != nil, let server, server.address != lastMaster {
            // Sentinel mode: which server is the master, at start and after each failover.
            logger.notice(lastMaster == nil ? "Redis master found through the sentinels" : "Redis master changed (a failover)",
                          metadata: ["master": "\(server.address)", "previous": "\(lastMaster ?? "none")"])
            lastMaster = server.address
        }
        let answered = takeRenewals(names, replies: replies, of: mine, sent: sent)
        scheduleMaintenance()
        return answered
    }

    /// Control queue: what the renewals of `names` (sent at `sent`) answered; false when some could not be renewed and
    /// wait for a retry.
    private func takeRenewals(_ names: [String], replies: [RedisReply], of mine: [String: Owned], sent: Instant) -> Bool {
        var renewed: [String] = []
        var refusal: String? = nil
        for (name, reply) in zip(names, replies) {
            switch reply {
            case .integer(1): renewed.append(name)
            case let .error(message): refusal = message  // not renewed (a Redis loading its data, a busy script): retried
            default: relinquishSoon(name, runtime: mine[name]!.runtime, why: "the lease was lost")
            }
        }
        owned.withLock { owned in
            for name in renewed where owned[name]?.runtime === mine[name]!.runtime { owned[name]!.leaseConfirmed = sent }
        }
        if let refusal { return !renewalFailed(why: "lease renewal refused: \(refusal)") }
        renewalsSucceeded(rooms: renewed.count)
        return true
    }

    /// Control queue: every lease held was renewed (or none is held).
    private func renewalsSucceeded(rooms: Int) {
        leasesChanged()
        if renewalRetrying {
            renewalRetrying = false
            logger.notice("leases renewed again", metadata: ["rooms": "\(rooms)"])
        }
    }

    /// Control queue: a renewal could not be made. Rooms before their deadline (`LeaseTiming.deadline`: a retry delay
    /// before their lease can lapse) stay owned, and the watchdog stops each at its deadline unless a retry renews it
    /// first; the others stop now. True when rooms wait for a retry.
    private func renewalFailed(why: String) -> Bool {
        let kept = stopRoomsPastTheirDeadline(why: why).kept
        leasesChanged()
        if kept > 0 && !renewalRetrying {
            renewalRetrying = true
            logger.warning("lease renewal failed; rooms stay owned while their leases last, retrying", metadata: [
                "error": "\(why)", "rooms": "\(kept)", "retryMs": "\(leaseTiming.retryDelay)"])
        } else if kept == 0 {
            renewalRetrying = false
        }
        return kept > 0
    }

    /// Any queue: stops every owned room past its deadline; how many others there are, and the earliest of their
    /// deadlines.
    private func stopRoomsPastTheirDeadline(why: String) -> (kept: Int, earliest: Instant?) {
        let now = scheduler.now()
        var kept = 0
        var earliest: Instant? = nil
        for (name, owner) in owned.withLock({ $0 }) {
            let deadline = leaseTiming.deadline(confirmed: owner.leaseConfirmed)
            if now < deadline {
                kept += 1
                earliest = min(earliest ?? deadline, deadline)
            } else {
                relinquishSoon(name, runtime: owner.runtime, why: why)
            }
        }
        return (kept, earliest)
    }

    /// Watchdog queue (its timer's handler): stops the rooms whose deadline came without a renewal, and arms the
    /// watchdog for the earliest deadline of the others.
    func checkLeases() {
        dispatchPrecondition(condition: .onQueue(watchdogQueue))
        watchdog?.schedule(at: stopRoomsPastTheirDeadline(why: "its lease could not be renewed before it lapses").earliest)
    }

    /// Any queue: deadlines moved (a renewal, an acquisition): the watchdog queue looks again.
    func leasesChanged() {
        watchdogQueue.async { [self] in checkLeases() }
    }

    /// Any queue: stops the room's writes at once, and hands it back on the link queue. With `runtime`, only if
    /// that is still the room's runtime here: a renewal answered for an ownership that was handed back (idle)
    /// must not stop the next one.
    private func relinquishSoon(_ room: String, runtime: RoomRuntime? = nil, why: String) {
        guard let owner = owned.withLock({ $0[room] }), runtime == nil || owner.runtime === runtime else { return }
        owner.store.stop()
        link.queue.async { self.relinquish(room, runtime: owner.runtime, why: why) }
    }

    /// One maintenance pass on the link queue at a time: member drops, request timeouts, takeovers.
    private func scheduleMaintenance() {
        let schedule = maintenancePending.withLock { pending in
            defer { pending = true }
            return !pending
        }
        guard schedule else { return }
        link.queue.async { [self] in
            maintenancePending.withLock { $0 = false }
            let redisUp = control.isReachable
            if redisUp { dropGoneMembers() }
            sweepRooms(takeOver: redisUp)
            sweepAdminRequests()
            if redisUp { sweepOrphanedOutboxes() }
        }
    }

    /// Members whose node stopped running leave their rooms (reason `disconnect`). Only once Redis has been
    /// reachable for a whole lease time, so every running node has refreshed its `alive:` key meanwhile.
    private func dropGoneMembers() {
        guard control.reachableFor(milliseconds: options.leaseMilliseconds) else { return }
        for owner in owned.withLock({ Array($0.values) }) {
            let nodes = owner.runtime.memberNodes()
            guard nodes.count > 1 || nodes.first != nodeID, let alive = try? aliveNodes(nodes) else { continue }
            let gone = nodes.subtracting(alive)
            if !gone.isEmpty { owner.runtime.dropSessions(onNodes: gone) }
        }
    }

    /// Times out unanswered requests, and takes over rooms with sessions here whose owner is gone.
    private func sweepRooms(takeOver: Bool) {
        for room in rooms.withLock({ Array($0.values) }) {
            room.sweep()
            guard takeOver, room.inUse, owned.withLock({ $0[room.name] == nil }) else { continue }
            forgetOwner(room.name)
            if case let .refused(error)? = try? resolveOwner(room.name, creation: nil), error.code == .unknownRoom {
                // Nobody holds it and Redis has no state for it: deleted (its notice missed here) or lost with Redis's data.
                if let tombstone = try? link.run({ c throws(RedisError) in try c.command(["GET", keys.deleted(room.name)]) }) {
                    room.absentFromStore(deletedEpoch: tombstone.text)
                }
            }
        }
    }
}

/// A room as stored in Redis, and the node each member's connection was on.
struct ClusterStoredRoom {
    var room: StoredRoom
    var nodes: [SessionID: String]
}
