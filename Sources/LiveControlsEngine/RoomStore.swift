import LiveControlsProtocol

/// One room as persisted: enough to rebuild it exactly at `version`.
public struct StoredRoom: Sendable {
    public var name: String
    public var template: String
    public var epoch: String
    public var version: Int
    /// Each control's stored state (`StorableControl.storedState`) as JSON text (`ControlCoding.encode`), by id.
    public var controls: [ControlID: String]
    /// Members in join order, with their names.
    public var members: [(session: SessionID, name: String?)]
    /// The most recent patches, oldest first, for resuming clients.
    public var history: [Patch]

    public init(name: String, template: String, epoch: String, version: Int, controls: [ControlID: String],
                members: [(session: SessionID, name: String?)], history: [Patch]) {
        self.name = name
        self.template = template
        self.epoch = epoch
        self.version = version
        self.controls = controls
        self.members = members
        self.history = history
    }
}

/// One change to persist: the room's new version, its patch, and what the patch touched.
public struct StoreWrite: Sendable {
    public enum Kind: Sendable {
        /// A room was created (or recovered into a new epoch): replace everything stored for it.
        case reset
        /// The room moved on by one patch.
        case patch(Patch)
    }
    public var room: String
    public var template: String
    public var epoch: String
    public var version: Int
    public var kind: Kind
    /// Controls whose state changed (all of them for `.reset`): id, kind, stored state as JSON text (`ControlCoding.encode`).
    public var controls: [(id: ControlID, kind: String, state: String)]
    public var joined: [(session: SessionID, name: String?)]
    public var left: [SessionID]
    /// Patches older than this version may be dropped.
    public var keepFromVersion: Int

    public init(room: String, template: String, epoch: String, version: Int, kind: Kind,
                controls: [(id: ControlID, kind: String, state: String)], joined: [(session: SessionID, name: String?)],
                left: [SessionID], keepFromVersion: Int) {
        self.room = room
        self.template = template
        self.epoch = epoch
        self.version = version
        self.kind = kind
        self.controls = controls
        self.joined = joined
        self.left = left
        self.keepFromVersion = keepFromVersion
    }
}

/// Where rooms persist. Implementations: in memory (tests, no `--data-dir`) and SQLite.
public protocol RoomStore: Sendable {
    /// One stored room, after every write queued before the call (a room not loaded since the server started,
    /// or unloaded, joined again); nil when the store has none of that name.
    func loadRoom(named name: String, historyLimit: Int) throws -> StoredRoom?
    /// Persists `write`; calls `done` once it is durable (or failed), in submission order, on any thread.
    func write(_ write: StoreWrite, done: @escaping @Sendable ((any Error)?) -> Void)
    /// Whether `write` completes before returning (then no ordering gate is needed).
    var isSynchronous: Bool { get }
    /// Blocks until every queued write is durable (at shutdown).
    func waitUntilIdle()
    /// Whether every write is thrown away at once (then the caller need not build it: each version is
    /// durable as soon as it exists).
    var discardsWrites: Bool { get }
    /// Every stored room (after the writes queued before the call), by name.
    func listRooms() throws -> [StoredRoomSummary]
    /// Removes everything stored for room `name`, after the writes queued before; `done` once that is durable
    /// (or failed), on any thread.
    func deleteRoom(named name: String, done: @escaping @Sendable ((any Error)?) -> Void)
}

/// What the store says of one room without loading it.
public struct StoredRoomSummary: Sendable, Equatable {
    public var name: String
    public var template: String
    public var epoch: String
    public var version: Int

    public init(name: String, template: String, epoch: String, version: Int) {
        self.name = name
        self.template = template
        self.epoch = epoch
        self.version = version
    }
}

extension RoomStore {
    public func loadRoom(named name: String, historyLimit: Int) throws -> StoredRoom? { nil }
    public func listRooms() throws -> [StoredRoomSummary] { [] }
    public func deleteRoom(named name: String, done: @escaping @Sendable ((any Error)?) -> Void) { done(nil) }
    public func waitUntilIdle() {}
    public var discardsWrites: Bool { false }
}

/// Keeps nothing: every write is "durable" at once. For tests and servers without `--data-dir`.
public struct MemoryRoomStore: RoomStore {
    public init() {}
    public func write(_ write: StoreWrite, done: @escaping @Sendable ((any Error)?) -> Void) { done(nil) }
    public var isSynchronous: Bool { true }
    public var discardsWrites: Bool { true }
}
