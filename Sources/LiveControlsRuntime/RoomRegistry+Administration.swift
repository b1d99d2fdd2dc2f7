import Dispatch
import LiveControlsEngine
import LiveControlsProtocol
import Synchronization

/// The server API on one node: rooms are looked up (and loaded from the store) as a join does, on the
/// caller's thread, and the work runs on each room's queue.
extension RoomRegistry: RoomAdministration {
    package var administration: (any RoomAdministration)? { self }

    /// A single node: no cluster to list.
    package func listNodes(_ reply: @escaping @Sendable (Result<[NodeSummary]?, AdminFailure>) -> Void) {
        reply(.success(nil))
    }

    package func listRooms(_ reply: @escaping @Sendable (Result<[RoomSummary], AdminFailure>) -> Void) {
        let loaded = rooms.withLock { Array($0.values) }
        DispatchQueue.global().async { [store, logger] in
            var byName: [String: RoomSummary] = [:]
            do {
                for stored in try store.listRooms() {
                    byName[stored.name] = RoomSummary(name: stored.name, template: stored.template, epoch: stored.epoch,
                                                      version: stored.version, loaded: false, members: 0)
                }
            } catch {
                logger.error("the store could not list its rooms", metadata: ["error": "\(error)"])
            }
            // Each room reports on its own queue; the last one to answer sends the list (no thread waits for a room).
            let open = loaded.filter { !$0.isClosed }
            let gathered = Mutex((byName: byName, waiting: open.count))
            guard !open.isEmpty else { return reply(.success(byName.values.sorted { $0.name < $1.name })) }
            for runtime in open {
                runtime.submit {
                    let summary = runtime.summary()
                    let done = gathered.withLock { g -> [RoomSummary]? in
                        g.byName[summary.name] = summary
                        g.waiting -= 1
                        return g.waiting == 0 ? g.byName.values.sorted { $0.name < $1.name } : nil
                    }
                    if let done { reply(.success(done)) }
                }
            }
        }
    }

    package func describeRoom(_ name: String, _ reply: @escaping @Sendable (Result<RoomDetails, AdminFailure>) -> Void) {
        switch existing(name) {
        case let .success(runtime): runtime.describe(reply)
        case let .failure(failure): reply(.failure(failure))
        }
    }

    package func createRoom(_ name: String, template: String?, intents: [ServerIntent],
                            _ reply: @escaping @Sendable (Result<RoomDetails, AdminFailure>) -> Void) {
        let exists = AdminFailure(.roomExists, "room \(name) already exists", room: name)
        let made: Result<(RoomRuntime, RoomUpdate), AdminFailure> = rooms.withLock { rooms in
            if let existing = rooms[name], !existing.isDeleted { return .failure(exists) }
            if store.contains(room: name) { return .failure(exists) }  // stored, not loaded: no need to load it to say so
            let recipe: RoomTemplate
            do throws(ProtocolError) { recipe = try config.recipe(forRoom: name, template: template) } catch { return .failure(AdminFailure(error)) }
            var room = Room(name: name, template: recipe, epoch: Self.newEpoch(), historyLimit: config.historyLimit)
            room.adopt(clock: scheduler.wallClock)  // the intents below may name moments (a timer started)
            let update: RoomUpdate
            do throws(ServerIntentError) {
                update = try room.applyAsServer(intents, at: scheduler.now())
            } catch {
                return .failure(AdminFailure(error, intents: intents, room: name, numbered: true))
            }
            // Full: only a request that would have made a room hears so (an unknown template or intent is told first).
            guard rooms.count < maxRooms else {
                return .failure(AdminFailure(.roomLimit, "the server already has \(maxRooms) rooms loaded", room: name))
            }
            room.startHere()
            let runtime = makeRuntime(room)
            rooms[name] = runtime
            logger.info("room created through the API", metadata: ["room": "\(name)", "template": "\(recipe.name)", "epoch": "\(room.epoch)"])
            return .success((runtime, update))
        }
        switch made {
        case let .failure(failure):
            reply(.failure(failure))
        case let .success((runtime, update)):
            runtime.persistReset { error in
                if let error {
                    return reply(.failure(AdminFailure(.unavailable, "room \(name) could not be stored: \(error)", room: name)))
                }
                // Joins may have changed it since: shown once what it shows is durable.
                let details = runtime.details()
                runtime.deliver(after: details.version, onDrop: { reply(.failure(runtime.stopped)) }) { reply(.success(details)) }
            }
            let timers = update.timers
            if !timers.isEmpty { runtime.submit { for effect in timers { runtime.arm(effect.control, at: effect.deadline) } } }
        }
    }

    package func applyIntents(_ name: String, _ intents: [ServerIntent], _ reply: @escaping @Sendable (Result<RoomVersion, AdminFailure>) -> Void) {
        switch existing(name) {
        case let .success(runtime): runtime.applyAsServer(intents, reply)
        case let .failure(failure): reply(.failure(failure))
        }
    }

    package func broadcast(_ name: String, event: JSONValue, _ reply: @escaping @Sendable (Result<RoomVersion, AdminFailure>) -> Void) {
        switch existing(name) {
        case let .success(runtime): runtime.broadcastAsServer(event, reply)
        case let .failure(failure): reply(.failure(failure))
        }
    }

    package func resetRoom(_ name: String, _ reply: @escaping @Sendable (Result<RoomVersion, AdminFailure>) -> Void) {
        switch existing(name) {
        case let .success(runtime):
            let templates = config.templates
            runtime.reset(to: { templates[$0] }, reply)
        case let .failure(failure):
            reply(.failure(failure))
        }
    }

    package func deleteRoom(_ name: String, _ reply: @escaping @Sendable (Result<RoomVersion, AdminFailure>) -> Void) {
        guard !pinned.contains(name) else {
            return reply(.failure(AdminFailure(.conflict, "room \(name) is one of the config's rooms (it would be made again at the next start); reset it instead", room: name)))
        }
        switch existing(name, force: true) {  // a stored room is loaded past the limit only to be deleted
        case let .success(runtime):
            runtime.delete(forget: { [weak self, weak runtime] in
                guard let self, let runtime else { return }
                // Off the room's queue: the sweep holds `rooms` while it waits for a room queue.
                self.housekeeping.async { self.forget(runtime) }
            }, reply)
        case let .failure(failure):
            reply(.failure(failure))
        }
    }

    package func history(_ name: String, epoch: String?, after version: Int, _ reply: @escaping @Sendable (Result<RoomHistory, AdminFailure>) -> Void) {
        switch existing(name) {
        case let .success(runtime): runtime.history(epoch: epoch, after: version, reply)
        case let .failure(failure): reply(.failure(failure))
        }
    }

    package func disconnect(_ session: SessionID, room: String, grantedRooms: [String]?, _ reply: @escaping @Sendable (DisconnectOutcome) -> Void) {
        sessions.disconnect(session, room: room, grantedRooms: grantedRooms) { [self] outcome in
            // Not here: is there such a room at all, loaded or stored? (Asked, not loaded: nobody can be in a room that is
            // not loaded.)
            guard outcome == .notFound, rooms.withLock({ $0[room] == nil }), !store.contains(room: room) else { return reply(outcome) }
            reply(.unknownRoom)
        }
    }

    /// A loaded room, or a stored one loaded now (as a join would); `unknown_room` when there is none. With `force`, a
    /// stored room is loaded even when the server holds `maxRooms` (a delete, which frees its place right after its reply).
    private func existing(_ name: String, force: Bool = false) -> Result<RoomRuntime, AdminFailure> {
        do throws(ProtocolError) {
            return .success(try room(named: name, template: nil, force: force, create: false))
        } catch {
            return .failure(AdminFailure(error))
        }
    }
}
