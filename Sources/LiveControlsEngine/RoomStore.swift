import LiveControlsProtocol

/// A member as persisted: who, under which name and roles, with what presence data.
///
/// The embedded store keeps only session, name and user: after a restart nobody is connected, and every member leaves
/// (`Room.dropMembersAfterRestart`). Cluster mode keeps all of it, since a room taken over keeps its members.
public struct StoredMember: Sendable, Equatable {
    public var session: SessionID
    public var name: String?
    public var roles: [String]
    public var data: JSONObject
    /// The token's `sub` (cluster mode keeps it).
    public var user: String?

    public init(session: SessionID, name: String?, roles: [String] = [], data: JSONObject = JSONObject(), user: String? = nil) {
        self.session = session
        self.name = name
        self.roles = roles
        self.data = data
        self.user = user
    }
}

/// One room as persisted: enough to rebuild it exactly at `version`.
public struct StoredRoom: Sendable {
    public var name: String
    public var template: String
    public var epoch: String
    public var version: Int
    /// Each control's stored state (`StorableControl.storedState`) as JSON text (`ControlCoding.encode`), by id.
    public var controls: [ControlID: String]
    /// Members in join order.
    public var members: [StoredMember]
    /// The most recent patches, oldest first, for resuming clients.
    public var history: [Patch]
    /// Changes not yet told in a `room.changed` webhook event (of this epoch or, after a failure, an earlier one).
    public var unannounced: UnannouncedChanges? = nil

    public init(name: String, template: String, epoch: String, version: Int, controls: [ControlID: String],
                members: [StoredMember], history: [Patch]) {
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
    /// Controls written as what changed (stores that take deltas, `RoomStore.takesControlDeltas`): the JSON Patch
    /// operations (a JSON array) that turn the control's stored state — its last full one with the deltas numbered
    /// below `seq` applied — into its state now. Numbered from 1 after each full write of the control, which drops
    /// the ones before.
    public var controlDeltas: [(id: ControlID, kind: String, seq: Int, ops: String)] = []
    public var joined: [StoredMember]
    public var left: [SessionID]
    /// Members whose presence data changed (a `presence` message), with their new data.
    public var presence: [(session: SessionID, data: JSONObject)] = []
    /// Patches older than this version may be dropped.
    public var keepFromVersion: Int
    /// Webhook events this change stands for, stored with it (one transaction): none for a change that was not
    /// stored, none lost for one that was.
    public var webhooks: [PendingWebhook] = []
    /// The room's changes not yet told in a `room.changed` event (stored with the room, so a crash loses none).
    public var unannouncedChanges: UnannouncedChanges? = nil
    /// A store that publishes patches (cluster mode), for a patch members see differently (`Patch.access`): each
    /// distinct view's encoded message and the sessions it is for; the last is for sessions not listed.
    public var views: [(sessions: [SessionID], message: [UInt8])]? = nil

    public init(room: String, template: String, epoch: String, version: Int, kind: Kind,
                controls: [(id: ControlID, kind: String, state: String)], joined: [StoredMember],
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

/// A webhook event and the endpoints (their URLs) it goes to.
public struct PendingWebhook: Sendable, Equatable {
    public var event: WebhookEvent
    public var endpoints: [String]

    public init(event: WebhookEvent, endpoints: [String]) {
        self.event = event
        self.endpoints = endpoints
    }
}

/// A room's changes since its last `room.changed` event: from which version on, and what they touched.
public struct UnannouncedChanges: Sendable, Equatable {
    public var epoch: String
    public var fromVersion: Int
    public var controls: [String]
    public var presence: Bool

    public init(epoch: String, fromVersion: Int, controls: [String], presence: Bool) {
        self.epoch = epoch
        self.fromVersion = fromVersion
        self.controls = controls
        self.presence = presence
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
    /// Whether writes may carry a control as what changed (`StoreWrite.controlDeltas`) rather than whole.
    var takesControlDeltas: Bool { get }
    /// Every stored room (after the writes queued before the call), by name.
    func listRooms() throws -> [StoredRoomSummary]
    /// Whether a room of that name is stored (or its write is queued), without loading it.
    func contains(room name: String) -> Bool
    /// Removes everything stored for room `name`, after the writes queued before, storing `webhooks` (its
    /// `room.deleted`) in the same transaction; `done` once that is durable (or failed), on any thread.
    func deleteRoom(named name: String, webhooks: [PendingWebhook], done: @escaping @Sendable ((any Error)?) -> Void)
    /// Stores webhook events that come with no change of the room (`room.unloaded`, a gathered `room.changed`), in
    /// order with its writes; `clearsUnannounced` also forgets the room's unannounced changes (they are in the
    /// events now). `done` once durable (or failed).
    func recordWebhooks(_ webhooks: [PendingWebhook], room: String, clearsUnannounced: Bool, done: @escaping @Sendable ((any Error)?) -> Void)
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
    public func contains(room name: String) -> Bool { false }
    public func deleteRoom(named name: String, webhooks: [PendingWebhook], done: @escaping @Sendable ((any Error)?) -> Void) { done(nil) }
    public func recordWebhooks(_ webhooks: [PendingWebhook], room: String, clearsUnannounced: Bool,
                               done: @escaping @Sendable ((any Error)?) -> Void) { done(nil) }
    public func waitUntilIdle() {}
    public var discardsWrites: Bool { false }
    public var takesControlDeltas: Bool { false }
}

/// Keeps nothing: every write is "durable" at once. For tests and servers without `--data-dir`.
public struct MemoryRoomStore: RoomStore {
    public init() {}
    public func write(_ write: StoreWrite, done: @escaping @Sendable ((any Error)?) -> Void) { done(nil) }
    public var isSynchronous: Bool { true }
    public var discardsWrites: Bool { true }
}
