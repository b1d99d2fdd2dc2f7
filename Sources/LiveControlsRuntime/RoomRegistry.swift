import Dispatch
import Foundation
import LiveControlsEngine
import LiveControlsProtocol
import Logging
import Synchronization

/// All live rooms by name; creates rooms from templates and recovers stored ones. Safe from any thread.
///
/// Rooms nobody has been in for the idle time are unloaded (`unloadIdleRooms`, the server's sweep), except
/// the config's own rooms. A later join loads an unloaded room back from the store as it was (same epoch
/// and version); with the memory store there is nothing to load, so it starts anew (a new epoch).
package final class RoomRegistry: RoomDirectory, Sendable {
    let config: ServerConfig
    let maxRooms: Int
    let store: any RoomStore
    private let waker: any SubscriberWaker
    package let metrics = ServerMetrics()
    package let sessions = SessionCloserSlot()
    let scheduler: any RoomScheduler
    let logger: Logger
    let rooms = Mutex<[String: RoomRuntime]>([:])
    /// Where rooms that stopped are forgotten: off their own queues (the sweep holds `rooms` while it waits for a
    /// room queue), in order.
    let housekeeping = DispatchQueue(label: "livecontrols.registry")
    /// The config's rooms: never unloaded.
    let pinned: Set<String>
    /// Sends the config's webhooks (nil when it has none).
    package let webhooks: WebhookDispatcher?
    /// Intents that may wait for one room (`Limits.roomQueueIntents`).
    let roomQueueIntents: Int
    /// Asks the app's backend about hooked intents (nil when no template has an intent hook).
    let hooks: IntentHookClient?

    package init(config: ServerConfig, maxRooms: Int, store: any RoomStore, waker: any SubscriberWaker,
         scheduler: any RoomScheduler = TimerThreadScheduler.shared, logger: Logger, webhookTransport: (any WebhookTransport)? = nil,
         hookTransport: (any HookTransport)? = nil, roomQueueIntents: Int = Limits().roomQueueIntents) {
        self.roomQueueIntents = roomQueueIntents
        self.config = config
        self.maxRooms = maxRooms
        self.store = store
        self.waker = waker
        self.scheduler = scheduler
        self.logger = logger
        self.pinned = Set(config.rooms.map(\.name))
        let metrics = self.metrics
        self.hooks = IntentHookClient.make(for: config, transport: hookTransport, metrics: metrics)
        self.webhooks = config.webhooks.isEmpty ? nil : WebhookDispatcher(
            endpoints: config.webhooks, changeIntervalMs: config.webhookChangeIntervalMs, store: store as? any WebhookStore,
            transport: webhookTransport ?? CurlWebhookTransport(), scheduler: scheduler, metrics: metrics, logger: logger,
            wallClock: { Int((Date().timeIntervalSince1970 * 1000).rounded(.down)) })
    }

    /// At start: the config's rooms, recovered from the store or created. Every other stored room stays in the
    /// store until a join loads it (`room(named:)`), as after being unloaded.
    package func start() throws {
        try webhooks?.start()  // what the last run had not sent goes first
        for (name, template) in config.rooms {
            _ = try room(named: name, template: template, force: true)
        }
    }

    package func room(named name: String, template: String?,
              mayCreate: @escaping @Sendable (_ template: String?, _ defaultTemplate: String) -> ProtocolError?,
              takeCreation: @escaping @Sendable () -> ProtocolError?) throws(ProtocolError) -> any RoomEndpoint {
        try room(named: name, template: template, force: false, mayCreate: mayCreate, takeCreation: takeCreation)
    }

    package func health() -> (ready: Bool, fields: [(String, JSONValue)]) { (true, []) }

    package func metricLines() -> [String] { [] }

    /// The room `name`, created from `template` (or the default template) when it does not exist (unless not
    /// `create`: then `unknown_room`). A room the server API deleted counts as not existing.
    func room(named name: String, template: String?, force: Bool, create: Bool = true,
              mayCreate: (_ template: String?, _ defaultTemplate: String) -> ProtocolError? = { _, _ in nil },
              takeCreation: () -> ProtocolError? = { nil }) throws(ProtocolError) -> RoomRuntime {
        let result: Result<RoomRuntime, ProtocolError> = rooms.withLock { rooms in
            if let existing = rooms[name], !existing.isDeleted { return .success(existing) }
            // Full: a stored or configured room has no place to load in. A room that is nowhere goes on to hear what it
            // would anyway (`unknown_room`, or why it could not be created): `room_limit` asks to retry, so only a
            // request that would make a room hears it, just before the room would be made.
            let full = !force && rooms.count >= maxRooms
            let roomLimit = ProtocolError(.roomLimit, "the server already has \(maxRooms) rooms loaded", room: name)
            if full, store.contains(room: name) || config.hasRoom(named: name) { return .failure(roomLimit) }
            // A stored room (unloaded, or not loaded since the server started) comes back as it was.
            var template = template
            var stored = false
            var earlier: (UnannouncedChanges, toVersion: Int)? = nil
            switch load(name) {
            case .failure(let error):
                return .failure(error)
            case .success(.loaded(let runtime, let epoch, let version)):
                rooms[name] = runtime
                runtime.dropMembersAfterRestart()  // nobody is connected to a room just loaded
                metrics.roomLoaded()
                logger.info("room loaded", metadata: ["room": "\(name)", "epoch": "\(epoch)", "version": "\(version)"])
                return .success(runtime)
            case .success(.changed(let storedTemplate, let unannounced)):
                template = storedTemplate  // re-created from its own template, in a new epoch
                stored = true
                earlier = unannounced
            case .success(.none):
                guard create else { return .failure(ProtocolError(.unknownRoom, "there is no room \(name)", room: name)) }
            }
            if !force, !stored, let refusal = config.creationRefusal(room: name, template: template, mayCreate: mayCreate) {
                return .failure(refusal)
            }
            let recipe: RoomTemplate
            do throws(ProtocolError) { recipe = try config.recipe(forRoom: name, template: template) } catch { return .failure(error) }
            if full { return .failure(roomLimit) }
            if !force, !stored, !config.hasRoom(named: name), var refusal = takeCreation() {
                refusal.room = name
                return .failure(refusal)
            }
            let room = Room(name: name, template: recipe, epoch: Self.newEpoch(), historyLimit: config.historyLimit)
            let runtime = makeRuntime(room)
            if let (changes, toVersion) = earlier, let webhooks {
                // The old epoch's changes not yet told go out with the new epoch's reset.
                runtime.submit {
                    runtime.pendingChangesOfEarlierEpoch = webhooks.pending(
                        WebhookDraft(type: "room.changed", data: WebhookDispatcher.changedData(room: name, changes, toVersion: toVersion)), room: name)
                }
            }
            runtime.persistReset()
            rooms[name] = runtime
            logger.info("room created", metadata: ["room": "\(name)", "template": "\(recipe.name)", "epoch": "\(room.epoch)"])
            return .success(runtime)
        }
        return try result.get()
    }

    private enum Stored {
        /// Not in the store (or its template is gone from the config): created as a new room.
        case none
        /// Restored exactly.
        case loaded(RoomRuntime, epoch: String, version: Int)
        /// Stored, but its template's controls changed: re-created from that template in a new epoch (with the old
        /// epoch's unannounced changes and its last version, for `room.changed`).
        case changed(template: String, unannounced: (UnannouncedChanges, toVersion: Int)?)
    }

    /// The stored room `name`, if the store has it.
    private func load(_ name: String) -> Result<Stored, ProtocolError> {
        let stored: StoredRoom?
        do {
            stored = try store.loadRoom(named: name, historyLimit: config.historyLimit)
        } catch {
            logger.error("room could not be loaded from the store", metadata: ["room": "\(name)", "error": "\(error)"])
            return .failure(ProtocolError(.unavailable, "room \(name) could not be loaded; retry in a moment", room: name))
        }
        guard let stored else { return .success(.none) }
        let templateName = config.templateName(forStoredRoom: name, storedWith: stored.template)
        guard let template = config.templates[templateName] else {
            logger.warning("stored room dropped: its template is gone; it starts anew",
                           metadata: ["room": "\(name)", "template": "\(stored.template)"])
            return .success(.none)
        }
        guard templateName == stored.template, let runtime = restore(stored, template: template) else {
            logger.warning("room cannot be restored exactly (its template changed): it starts a new epoch",
                           metadata: ["room": "\(name)", "oldEpoch": "\(stored.epoch)",
                                      "changes": "\(Room.configurationChangeDetails(stored: stored, template: template, templateName: templateName))"])
            return .success(.changed(template: templateName, unannounced: stored.unannounced.map { ($0, stored.version) }))
        }
        return .success(.loaded(runtime, epoch: stored.epoch, version: stored.version))
    }

    /// A runtime for a stored room (the caller makes its stored members leave once it is registered).
    private func restore(_ stored: StoredRoom, template: RoomTemplate) -> RoomRuntime? {
        guard let room = Room(restoring: stored, template: template, historyLimit: config.historyLimit) else { return nil }
        let runtime = makeRuntime(room)
        if let changes = stored.unannounced, webhooks != nil {
            // Left by a run of this server that stopped the room (a failed write): told like any gathered changes.
            runtime.submit { runtime.resumeAnnouncing(changes) }
        }
        return runtime
    }

    /// Unloads the rooms nobody has been in for `idleSeconds` or more (0: never), except the config's. A room
    /// with a timer armed or a write not yet durable stays. Service thread (the once-a-second sweep), so no
    /// join can fall between a room's last check and its removal: joins are dispatched from that thread.
    package func unloadIdleRooms(idleSeconds: Int) {
        guard idleSeconds > 0 else { return }
        let now = scheduler.now().nanoseconds
        let idle = UInt64(idleSeconds) * 1_000_000_000
        guard now > idle else { return }
        rooms.withLock { rooms in
            for (name, runtime) in rooms where !pinned.contains(name) {
                guard let since = runtime.emptySince, since.nanoseconds <= now - idle,
                      let version = runtime.retireIfUnused(emptySince: now - idle) else { continue }
                rooms[name] = nil
                metrics.roomUnloaded()
                logger.info("room unloaded", metadata: ["room": "\(name)", "version": "\(version)"])
            }
        }
    }

    func makeRuntime(_ room: Room) -> RoomRuntime {
        let runtime = RoomRuntime(room: room, store: store, historyLimit: config.historyLimit, waker: waker, metrics: metrics,
                                  scheduler: scheduler, logger: logger, webhooks: webhooks, maxQueuedIntents: roomQueueIntents,
                                  hook: config.templates[room.template]?.intentHook, hookClient: hooks)
        runtime.onStoreFailure = { [weak self, weak runtime] _ in
            guard let self, let runtime else { return }
            // Off the room's queue: the sweep holds `rooms` while it waits for a room queue.
            self.housekeeping.async { self.forget(runtime) }
        }
        return runtime
    }

    /// A room that stopped after a failed store write: the next join loads it again from the store.
    func forget(_ runtime: RoomRuntime) {
        rooms.withLock { rooms in
            if rooms[runtime.name] === runtime { rooms[runtime.name] = nil }
        }
    }

    package var count: Int { rooms.withLock { $0.count } }

    package func beginShutdown() {
        for room in rooms.withLock({ Array($0.values) }) {
            room.shuttingDown.store(true, ordering: .relaxed)
            room.beginShutdownOfHooks()
        }
    }

    package func stopAll() {
        for room in rooms.withLock({ Array($0.values) }) { room.stop() }
        webhooks?.stop()
        hooks?.stop()
        store.waitUntilIdle()
    }

    /// 12 random base-32 characters: a new room lifetime.
    static func newEpoch() -> String { randomID(length: 12) }

    static func randomID(length: Int) -> String {
        let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz")
        var rng = SystemRandomNumberGenerator()
        return String((0..<length).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] })
    }
}
