import Dispatch
import LiveControlsEngine
import LiveControlsProtocol
import Logging
import Synchronization

/// All live rooms by name; creates rooms from templates and recovers stored ones. Safe from any thread.
final class RoomRegistry: RoomDirectory, Sendable {
    private let config: ServerConfig
    private let maxRooms: Int
    private let store: any RoomStore
    private let hub: Hub
    let metrics = ServerMetrics()
    private let clock: @Sendable () -> Instant
    private let logger: Logger
    private let rooms = Mutex<[String: RoomRuntime]>([:])

    init(config: ServerConfig, maxRooms: Int, store: any RoomStore, hub: Hub, clock: @escaping @Sendable () -> Instant, logger: Logger) {
        self.config = config
        self.maxRooms = maxRooms
        self.store = store
        self.hub = hub
        self.clock = clock
        self.logger = logger
    }

    /// At start: recovers every stored room, then creates the configured rooms that are missing.
    func start() throws {
        for stored in try store.loadRooms(historyLimit: config.historyLimit) {
            guard let template = config.templates[stored.template] else {
                logger.warning("stored room skipped: its template is gone", metadata: ["room": "\(stored.name)", "template": "\(stored.template)"])
                continue
            }
            if let room = Room(restoring: stored, template: template, historyLimit: config.historyLimit) {
                let runtime = makeRuntime(room)
                rooms.withLock { $0[stored.name] = runtime }
                runtime.dropMembersAfterRestart()
                logger.info("room recovered", metadata: ["room": "\(stored.name)", "epoch": "\(room.epoch)", "version": "\(room.version)"])
            } else {
                logger.warning("room cannot be restored exactly (its template changed): it starts a new epoch",
                               metadata: ["room": "\(stored.name)", "oldEpoch": "\(stored.epoch)"])
                _ = try? room(named: stored.name, template: stored.template, force: true)
            }
        }
        for (name, template) in config.rooms {
            _ = try? room(named: name, template: template, force: true)
        }
    }

    func room(named name: String, template: String?,
              mayCreate: @escaping @Sendable (_ template: String?, _ defaultTemplate: String) -> ProtocolError?) throws(ProtocolError) -> any RoomEndpoint {
        try room(named: name, template: template, force: false, mayCreate: mayCreate)
    }

    func health() -> (ready: Bool, fields: [(String, JSONValue)]) { (true, []) }

    func metricLines() -> [String] { [] }

    /// The room `name`, created from `template` (or the default template) when it does not exist.
    func room(named name: String, template: String?, force: Bool,
              mayCreate: (_ template: String?, _ defaultTemplate: String) -> ProtocolError? = { _, _ in nil }) throws(ProtocolError) -> RoomRuntime {
        let result: Result<RoomRuntime, ProtocolError> = rooms.withLock { rooms in
            if let existing = rooms[name] { return .success(existing) }
            if !force, let refusal = config.creationRefusal(room: name, template: template, mayCreate: mayCreate) {
                return .failure(refusal)
            }
            guard force || rooms.count < maxRooms else {
                return .failure(ProtocolError(.roomLimit, "the server already has \(maxRooms) rooms", room: name))
            }
            let recipe: RoomTemplate
            do throws(ProtocolError) { recipe = try config.recipe(forRoom: name, template: template) } catch { return .failure(error) }
            let room = Room(name: name, template: recipe, epoch: Self.newEpoch(), historyLimit: config.historyLimit)
            let runtime = makeRuntime(room)
            runtime.persistReset()
            rooms[name] = runtime
            logger.info("room created", metadata: ["room": "\(name)", "template": "\(recipe.name)", "epoch": "\(room.epoch)"])
            return .success(runtime)
        }
        return try result.get()
    }

    private func makeRuntime(_ room: Room) -> RoomRuntime {
        RoomRuntime(room: room, store: store, historyLimit: config.historyLimit, hub: hub, metrics: metrics, clock: clock, logger: logger)
    }

    var count: Int { rooms.withLock { $0.count } }

    func stopAll() {
        for room in rooms.withLock({ Array($0.values) }) { room.stop() }
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
