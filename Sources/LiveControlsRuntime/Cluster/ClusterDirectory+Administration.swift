import Dispatch
import LiveControlsEngine
import LiveControlsProtocol
import LiveControlsRedis

/// The server API in cluster mode: any node answers.
///
/// - A request about one room runs on its owner, reached as a session's requests are (`ClusterRequest.admin`
///   to the owner's inbox, or directly when the owner is this node; a room stored with no owner is taken over
///   first). The owner answers on the asking node's inbox (`ClusterEnvelope.AdminReply`), fenced like a reply
///   to a session: an answer that shows a version leaves only once that version is written.
/// - Creating a room takes its lease here, and only if no node holds it and Redis has no state for it.
/// - The listing reads every room's state from Redis (`SCAN`), with whether a node owns it now (`loaded`).
/// - Disconnecting a session asks the node its connection is on (the member record in the room's state says).
/// - An answer that does not come within `replyTimeoutMilliseconds` is `unavailable` (may or may not have
///   taken effect), as is every request sent to an owner that stops first.
extension ClusterDirectory: RoomAdministration {
    /// A server API request waiting for its answer from another node (or from this node's own rooms).
    struct AdminWaiter {
        var room: String
        /// The node the request went to, once known.
        var owner: String?
        var deadline: Instant
        var reply: @Sendable (Result<JSONValue, AdminFailure>) -> Void
    }

    package var administration: (any RoomAdministration)? { self }

    package func listRooms(_ reply: @escaping @Sendable (Result<[RoomSummary], AdminFailure>) -> Void) {
        link.queue.async { [self] in
            do throws(RedisError) {
                // The config's rooms exist from the start: made now where no node has yet (as a join would).
                for entry in config.rooms where owners.withLock({ $0[entry.name] }) == nil {
                    guard case .owner(nodeID) = try resolveOwner(entry.name, creation: configRoomCreation(entry.name)),
                          let made = owned.withLock({ $0[entry.name] }) else { continue }
                    made.runtime.queue.sync {}  // its first write is in the pipeline now (no room queue waits for this one)
                }
            } catch {
                return reply(.failure(Self.unreachable(error)))
            }
            // Read in a later block: the writes of rooms just made leave in the pipeline before it runs.
            link.queue.async { [self] in
                do throws(RedisError) {
                    reply(.success(try storedRooms()))
                } catch {
                    reply(.failure(Self.unreachable(error)))
                }
            }
        }
    }

    /// Every node whose `alive` key is set, with the rooms it owns (from the same scan as the listing).
    package func listNodes(_ reply: @escaping @Sendable (Result<[NodeSummary]?, AdminFailure>) -> Void) {
        link.queue.async { [self] in
            do throws(RedisError) {
                let alive = try roomNames(withKey: keys.alive).union([nodeID])
                var owned: [String: Int] = [:]
                for room in try storedRooms() { if let node = room.node { owned[node, default: 0] += 1 } }
                reply(.success(alive.sorted().map { NodeSummary(id: $0, isSelf: $0 == nodeID, rooms: owned[$0] ?? 0) }))
            } catch {
                reply(.failure(Self.unreachable(error)))
            }
        }
    }

    package func describeRoom(_ name: String, _ reply: @escaping @Sendable (Result<RoomDetails, AdminFailure>) -> Void) {
        call(name, .describe) { reply($0.decoded(RoomDetails.init(json:))) }
    }

    package func applyIntents(_ name: String, _ intents: [ServerIntent], _ reply: @escaping @Sendable (Result<RoomVersion, AdminFailure>) -> Void) {
        call(name, .apply(intents)) { reply($0.decoded(RoomVersion.init(json:))) }
    }

    package func resetRoom(_ name: String, _ reply: @escaping @Sendable (Result<RoomVersion, AdminFailure>) -> Void) {
        call(name, .reset) { reply($0.decoded(RoomVersion.init(json:))) }
    }

    package func broadcast(_ name: String, event: JSONValue, _ reply: @escaping @Sendable (Result<RoomVersion, AdminFailure>) -> Void) {
        call(name, .broadcast(event)) { reply($0.decoded(RoomVersion.init(json:))) }
    }

    package func history(_ name: String, epoch: String?, after version: Int, _ reply: @escaping @Sendable (Result<RoomHistory, AdminFailure>) -> Void) {
        call(name, .history(epoch: epoch, after: version)) { reply($0.decoded(RoomHistory.init(json:))) }
    }

    package func deleteRoom(_ name: String, _ reply: @escaping @Sendable (Result<RoomVersion, AdminFailure>) -> Void) {
        guard !config.hasRoom(named: name) else {
            return reply(.failure(AdminFailure(.conflict, "room \(name) is one of the config's rooms (it would be made again when next joined); reset it instead", room: name)))
        }
        call(name, .delete) { reply($0.decoded(RoomVersion.init(json:))) }
    }

    package func createRoom(_ name: String, template: String?, intents: [ServerIntent],
                            _ reply: @escaping @Sendable (Result<RoomDetails, AdminFailure>) -> Void) {
        guard !config.hasRoom(named: name) else {
            return reply(.failure(AdminFailure(.roomExists, "room \(name) already exists (it is one of the config's rooms)", room: name)))
        }
        let recipe: RoomTemplate
        do throws(ProtocolError) { recipe = try config.recipe(forRoom: name, template: template) } catch { return reply(.failure(AdminFailure(error))) }
        link.queue.async { [self] in
            do throws(RedisError) {
                try create(name, recipe: recipe, intents: intents, reply)
            } catch {
                reply(.failure(Self.unreachable(error)))
            }
        }
    }

    package func disconnect(_ session: SessionID, room: String, grantedRooms: [String]?, _ reply: @escaping @Sendable (DisconnectOutcome) -> Void) {
        link.queue.async { [self] in
            let record: RedisReply
            do throws(RedisError) {
                record = try link.run { c throws(RedisError) in try c.command(["HGET", keys.state(room), "m:" + session.rawValue]) }
            } catch {
                logger.warning("server API: Redis not reachable", metadata: ["error": "\(error.message)"])
                return reply(.unavailable("the cluster's Redis is not reachable right now"))
            }
            // The member record: [join order, name, node, roles] (roles since permissions; `ClusterStoredRoom`).
            guard let bytes = record.bytes, let fields = (try? JSONParser.parse(bytes))?.arrayValue, fields.count >= 3,
                  let node = fields[2].stringValue
            else {
                // No such member: is there such a room at all?
                let exists = try? link.run { c throws(RedisError) in try c.command(["EXISTS", keys.state(room)]) }
                return reply(exists?.integer == 0 ? .unknownRoom : .notFound)
            }
            if node == nodeID { return sessions.disconnect(session, room: room, grantedRooms: grantedRooms, reply) }
            let token = wait(room: room, owner: node) { result in
                switch result {
                case let .success(json): reply(DisconnectOutcome(json: json) ?? .unavailable("node \(node) answered something else"))
                case let .failure(failure): reply(.unavailable(failure.error.message))
                }
            }
            let envelope = ClusterEnvelope.encode(.init(request: .disconnect(grantedRooms: grantedRooms), room: room, node: nodeID, session: session, token: token))
            link.publish(keys.inbox(node), envelope) { [self] result in
                switch result {
                case .success(0): answerAdmin(token, .success(DisconnectOutcome.notFound.json))  // its node is gone, and the connection with it
                case .success: break
                case let .failure(error): answerAdmin(token, .failure(Self.unreachable(error)))
                }
            }
        }
    }

    // MARK: Asking the owner

    /// Runs `call` on `room`'s owner (taking the room over when it is stored and nobody owns it).
    private func call(_ room: String, _ call: AdminCall, _ reply: @escaping @Sendable (Result<JSONValue, AdminFailure>) -> Void) {
        let token = wait(room: room, owner: nil, reply)
        let creation = configRoomCreation(room)
        link.queue.async { [self] in
            do throws(RedisError) {
                // Asked before a lease is taken: no lease (and fencing token) for names that are not rooms.
                if creation == nil, owners.withLock({ $0[room] }) == nil,
                   try link.run({ c throws(RedisError) in try c.command(["EXISTS", keys.state(room)]) }).integer == 0 {
                    return answerAdmin(token, .failure(AdminFailure(.unknownRoom, "room \(room) does not exist", room: room)))
                }
                switch try resolveOwner(room, creation: creation) {
                case let .refused(error):
                    answerAdmin(token, .failure(AdminFailure(error)))
                case let .owner(owner):
                    adminWaiters.withLock { $0[token]?.owner = owner }
                    if owner != nodeID {
                        return send(.admin(call), room: room, session: .server, token: token, to: owner) { [self] error in
                            var error = error
                            error.room = room
                            answerAdmin(token, .failure(AdminFailure(error)))
                        }
                    }
                    let ran = owned.withLock { owned -> Bool in
                        guard let mine = owned[room] else { return false }
                        run(call, on: mine, replyTo: nodeID, token: token)
                        return true
                    }
                    if !ran {
                        forgetOwner(room, owner)
                        answerAdmin(token, .failure(Self.changingOwner(room)))
                    }
                }
            } catch {
                answerAdmin(token, .failure(Self.unreachable(error)))
            }
        }
    }

    /// Registers a waiter; its token goes with the request.
    private func wait(room: String, owner: String?, _ reply: @escaping @Sendable (Result<JSONValue, AdminFailure>) -> Void) -> Int {
        let token = nextToken()
        let deadline = scheduler.now().adding(milliseconds: replyTimeoutMilliseconds)
        adminWaiters.withLock { $0[token] = AdminWaiter(room: room, owner: owner, deadline: deadline, reply: reply) }
        return token
    }

    /// Any thread: the answer to request `token` (ignored when it was answered already).
    func answerAdmin(_ token: Int, _ result: Result<JSONValue, AdminFailure>) {
        guard let waiter = adminWaiters.withLock({ $0.removeValue(forKey: token) }) else { return }
        waiter.reply(result)
    }

    /// Subscriber thread: an answer from the node that ran the request.
    func adminReplied(_ reply: ClusterEnvelope.AdminReply) {
        if case let .failure(failure) = reply.result, failure.error.code == .unavailable { forgetOwner(reply.room) }
        answerAdmin(reply.token, reply.result)
    }

    /// `owner` stopped and handed `room` back: what it was asked and has not answered never will be.
    func failAdminRequests(room: String, sentTo owner: String) {
        let failed = adminWaiters.withLock { waiters -> [Int] in waiters.filter { $0.value.room == room && $0.value.owner == owner }.map(\.key) }
        for token in failed {
            answerAdmin(token, .failure(AdminFailure(.unavailable, "room \(room)'s owner stopped before answering; the request may or may not have taken effect; retry", room: room)))
        }
    }

    /// Link queue (maintenance): requests whose answer is overdue.
    func sweepAdminRequests() {
        let now = scheduler.now()
        let overdue = adminWaiters.withLock { waiters -> [(Int, String)] in waiters.filter { $0.value.deadline < now }.map { ($0.key, $0.value.room) } }
        for (token, room) in overdue {
            clusterMetrics.timedOut()
            answerAdmin(token, .failure(AdminFailure(.unavailable, "room \(room)'s owner did not answer in time; the request may or may not have taken effect", room: room)))
        }
    }

    // MARK: On the owner

    /// Runs a server API request on a room this node owns; the answer goes to `node`'s inbox.
    func run(_ call: AdminCall, on owner: Owned, replyTo node: String, token: Int) {
        let runtime = owner.runtime
        let store = owner.store
        let room = runtime.name
        let answer: @Sendable (Result<JSONValue, AdminFailure>, _ showing: Int?) -> Void = { result, version in
            let envelope = ClusterEnvelope.adminReply(room: room, token: token, result)
            if case .success = result, let version {
                store.reply(envelope, to: node, showing: version)
            } else {
                store.replyUnfenced(envelope, to: node)
            }
        }
        switch call {
        case .describe:
            runtime.describe { result in answer(result.map { .object($0.json) }, try? result.get().version) }
        case let .apply(intents):
            runtime.applyAsServer(intents, inline: false) { result in answer(result.map { .object($0.json) }, try? result.get().version) }
        case .reset:
            let templates = config.templates
            runtime.reset(to: { templates[$0] }) { result in answer(result.map { .object($0.json) }, try? result.get().version) }
        case let .history(epoch, after):
            runtime.history(epoch: epoch, after: after) { result in answer(result.map { .object($0.json) }, try? result.get().version) }
        case let .broadcast(event):
            runtime.broadcastAsServer(event) { result in answer(result.map { .object($0.json) }, try? result.get().version) }
        case .delete:
            // Its state is gone once deleted, so the answer is not fenced on a version (it follows the deletion).
            runtime.delete(forget: { [weak self, weak runtime] in
                guard let self, let runtime else { return }
                self.link.queue.async { self.forgetDeleted(room, runtime: runtime) }
            }) { result in answer(result.map { .object($0.json) }, nil) }
        }
    }

    /// Link queue: a room this node deleted is no longer owned here; its lease goes (the deletion went first).
    private func forgetDeleted(_ room: String, runtime: RoomRuntime) {
        let removed = owned.withLock { owned -> Owned? in
            guard let mine = owned[room], mine.runtime === runtime else { return nil }
            owned[room] = nil
            return mine
        }
        guard let removed else { return }
        forgetOwner(room)
        removed.store.stop()
        releaseLeaseAfterItsWrites(room, fence: removed.store.fence)
        logger.info("room deleted through the API", metadata: ["room": "\(room)"])
    }

    /// Subscriber thread: a session here must leave its connection (a `disconnect` from another node's API).
    func disconnectHere(_ request: ClusterEnvelope.Request, grantedRooms: [String]?) {
        let (link, inbox, room, token) = (link, keys.inbox(request.node), request.room, request.token)
        sessions.disconnect(request.session, room: room, grantedRooms: grantedRooms) { outcome in
            link.publish(inbox, ClusterEnvelope.adminReply(room: room, token: token, .success(outcome.json)))
        }
    }

    // MARK: Creating and listing (link queue)

    /// Makes room `name` on this node, if no node has it and Redis has no state for it.
    private func create(_ name: String, recipe: RoomTemplate, intents: [ServerIntent],
                        _ reply: @escaping @Sendable (Result<RoomDetails, AdminFailure>) -> Void) throws(RedisError) {
        let exists = AdminFailure(.roomExists, "room \(name) already exists", room: name)
        for _ in 0..<3 {
            let found = try link.run { c throws(RedisError) in
                try c.pipeline([[Array("GET".utf8), Array(keys.lease(name).utf8)], [Array("EXISTS".utf8), Array(keys.state(name).utf8)]])
            }
            let holder = found.first?.text
            if holder == nodeID, owned.withLock({ $0[name] == nil }) {
                releaseLease(name)  // a lease this node no longer acts on
                continue
            }
            if holder != nil || found.last?.integer == 1 { return reply(.failure(exists)) }
            guard let lease = try acquireLease(name) else { continue }
            let fence = lease.fence
            // The lease is ours: nobody else writes the room now, so what Redis says of it holds.
            if try link.run({ c throws(RedisError) in try c.command(["EXISTS", keys.state(name)]) }).integer == 1 {
                releaseLease(name, fence: fence)
                return reply(.failure(exists))
            }
            var room = Room(name: name, template: recipe, epoch: RoomRegistry.newEpoch(), historyLimit: config.historyLimit)
            room.adopt(clock: scheduler.wallClock)  // the intents below may name moments (a timer started)
            let update: RoomUpdate
            do throws(ServerIntentError) {
                update = try room.applyAsServer(intents, at: scheduler.now())
            } catch {
                releaseLease(name, fence: fence)
                return reply(.failure(AdminFailure(error, intents: intents, room: name, numbered: true)))
            }
            // Full: only a request that would have made a room hears so (an unknown intent is told first).
            guard count < maxRooms else {
                releaseLease(name, fence: fence)
                return reply(.failure(AdminFailure(.roomLimit, "this node already serves \(maxRooms) rooms", room: name)))
            }
            room.startHere()
            let details = RoomDetails(name: name, template: recipe.name, epoch: room.epoch, version: room.version, state: room.render(), members: [])
            let store = RedisRoomStore(room: name, fence: fence, owner: nodeID, link: link, keys: keys, historyLimit: config.historyLimit)
            let leftover: [PendingWebhook]
            do {
                leftover = try leftoverWebhooks(name)  // a deleted room's last events, if its owner could not send them
            } catch {
                releaseLease(name, fence: fence)
                throw error
            }
            let runtime = makeRuntime(room, store: store)
            webhooks?.enqueue(leftover)
            own(name, Owned(runtime: runtime, store: store, leaseConfirmed: lease.asked))
            runtime.persistReset { error in
                guard let error else { return reply(.success(details)) }
                self.logger.error("room created through the API could not be stored", metadata: ["room": "\(name)", "error": "\(error)"])
                reply(.failure(AdminFailure(.unavailable, "room \(name) could not be stored; retry", room: name)))
            }
            let timers = update.timers
            if !timers.isEmpty { runtime.submit { for effect in timers { runtime.arm(effect.control, at: effect.deadline) } } }
            logger.info("room created through the API", metadata: ["room": "\(name)", "template": "\(recipe.name)", "epoch": "\(room.epoch)", "fence": "\(fence)"])
            return
        }
        reply(.failure(Self.changingOwner(name)))
    }

    /// A room of the config exists from the start: the first node that needs it makes it (as a join would).
    private func configRoomCreation(_ room: String) -> Creation? {
        guard let entry = config.rooms.first(where: { $0.name == room }) else { return nil }
        return Creation(template: entry.template, refusal: nil)
    }

    /// Every room Redis holds, with whether a node owns it.
    private func storedRooms() throws(RedisError) -> [RoomSummary] {
        let sorted = try roomNames(withKey: keys.state).sorted()
        var summaries: [RoomSummary] = []
        for start in stride(from: 0, to: sorted.count, by: 256) {
            let batch = Array(sorted[start..<min(start + 256, sorted.count)])
            let reply = try link.run { c throws(RedisError) in
                try c.eval(ClusterScripts.summaries, keys: batch.map(keys.state) + batch.map(keys.lease), args: [])
            }
            guard case let .array(rows) = reply, rows.count == batch.count else { throw RedisError(.protocolError, "unexpected room summaries") }
            for (name, row) in zip(batch, rows) {
                // A room deleted (or half-written) since the scan has no template: not listed.
                guard case let .array(f) = row, f.count == 5, let template = f[0].text, let epoch = f[1].text,
                      let version = f[2].text.flatMap(Int.init)
                else { continue }
                summaries.append(RoomSummary(name: name, template: template, epoch: epoch, version: version,
                                             loaded: f[4].text != nil, members: Int(f[3].integer ?? 0), node: f[4].text, inCluster: true))
            }
        }
        return summaries
    }

    static func unreachable(_ error: RedisError) -> AdminFailure {
        AdminFailure(.unavailable, "the cluster's Redis is not reachable right now; retry in a moment")
    }

    static func changingOwner(_ room: String) -> AdminFailure {
        AdminFailure(.unavailable, "room \(room) is changing owner; retry in a moment", room: room)
    }
}

extension Result where Success == JSONValue, Failure == AdminFailure {
    /// An answer from another node, as the value it stands for.
    func decoded<T>(_ decode: (JSONValue) -> T?) -> Result<T, AdminFailure> {
        flatMap { json in
            guard let value = decode(json) else { return .failure(AdminFailure(.internalError, "a cluster node answered something this node cannot read")) }
            return .success(value)
        }
    }
}
