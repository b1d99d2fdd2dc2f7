import LiveControlsEngine
import LiveControlsProtocol
import Synchronization

/// What the server API (the transport's `/api/v1/`) asks of the rooms. Each call returns at once; `reply` runs
/// exactly once, on any thread. A reply that shows a room's version is given only once that version is durable
/// (as an `ack` is). Calls that look a room up are made from the thread that dispatches joins (the transport's
/// service thread), so an idle room cannot be unloaded between the lookup and the request.
///
/// Implementations: `RoomRegistry` (one node) and `ClusterDirectory` (any node answers: each call runs on the
/// room's owner, reached through Redis as a session's requests are).
package protocol RoomAdministration: AnyObject, Sendable {
    /// Loaded rooms and rooms only in the store, by name.
    func listRooms(_ reply: @escaping @Sendable (Result<[RoomSummary], AdminFailure>) -> Void)
    /// One room's document, loading it from the store if needed; `unknown_room` when there is none.
    func describeRoom(_ name: String, _ reply: @escaping @Sendable (Result<RoomDetails, AdminFailure>) -> Void)
    /// A new room from `template` (nil: the default), with `intents` applied as its starting state (all or
    /// nothing, validated as intents are); `room_exists` when the name is taken.
    func createRoom(_ name: String, template: String?, intents: [ServerIntent],
                    _ reply: @escaping @Sendable (Result<RoomDetails, AdminFailure>) -> Void)
    /// Applies `intents` as the server, in order, all or nothing: one patch.
    func applyIntents(_ name: String, _ intents: [ServerIntent], _ reply: @escaping @Sendable (Result<RoomVersion, AdminFailure>) -> Void)
    /// Hands `event` to every member of the room (`broadcast`, from "server"); answers with the room's version.
    func broadcast(_ name: String, event: JSONValue, _ reply: @escaping @Sendable (Result<RoomVersion, AdminFailure>) -> Void)
    /// Every control back to its template's state, in one patch.
    func resetRoom(_ name: String, _ reply: @escaping @Sendable (Result<RoomVersion, AdminFailure>) -> Void)
    /// Removes the room from memory and the store; its members get `room_deleted` and are no longer in it.
    func deleteRoom(_ name: String, _ reply: @escaping @Sendable (Result<RoomVersion, AdminFailure>) -> Void)
    /// The retained patches after `version` (of `epoch`, when given).
    func history(_ name: String, epoch: String?, after version: Int, _ reply: @escaping @Sendable (Result<RoomHistory, AdminFailure>) -> Void)
    /// The nodes of the cluster running now (their `alive` key is set), by id; nil on a single node.
    func listNodes(_ reply: @escaping @Sendable (Result<[NodeSummary]?, AdminFailure>) -> Void)
    /// Closes the connection of `session`, a member of `room`, with 4001, on whichever node it is.
    /// `grantedRooms`: the room patterns the caller's token grants (nil: every room); the session must be in no
    /// other room, since the close takes it out of all of them.
    func disconnect(_ session: SessionID, room: String, grantedRooms: [String]?, _ reply: @escaping @Sendable (DisconnectOutcome) -> Void)
}

/// The connections of this node, as the server API reaches them (the transport implements it).
package protocol SessionCloser: AnyObject, Sendable {
    /// Closes the connection of `session` here with 4001 if it is in `room` (see `RoomAdministration.disconnect`).
    func disconnect(_ session: SessionID, room: String, grantedRooms: [String]?, _ reply: @escaping @Sendable (DisconnectOutcome) -> Void)
}

/// What became of a request to disconnect a session.
package enum DisconnectOutcome: Sendable, Equatable {
    case disconnected
    /// No such session is in the room (on any node).
    case notFound
    /// There is no such room, loaded or stored.
    case unknownRoom
    /// The session is also in `otherRoom`, which the caller's token does not grant.
    case forbidden(otherRoom: String)
    /// The session's node could not be reached (cluster mode).
    case unavailable(String)
}

/// A refused API request: the protocol error, and for a list of intents which one (0-based) was refused.
package struct AdminFailure: Error, Sendable, Equatable {
    package var error: ProtocolError
    package var index: Int?

    package init(_ error: ProtocolError, index: Int? = nil) {
        self.error = error
        self.index = index
    }

    package init(_ code: ErrorCode, _ message: String, room: String? = nil) {
        self.init(ProtocolError(code, message, room: room))
    }

    /// A refused list of server intents; `numbered`: the message names which one (always for a list).
    init(_ refusal: ServerIntentError, intents: [ServerIntent], room: String, numbered: Bool) {
        let intent = intents[refusal.index]
        let prefix = numbered ? "intent \(refusal.index) (\(intent.control).\(intent.intent)): " : ""
        self.init(ProtocolError(refusal.error.code, prefix + refusal.error.message, room: room), index: refusal.index)
    }
}

/// One room in a listing.
package struct RoomSummary: Sendable, Equatable {
    package var name: String
    package var template: String
    package var epoch: String
    package var version: Int
    /// Whether the room is in memory now (else it is only in the store).
    package var loaded: Bool
    /// Sessions in the room (0 for a room only in the store).
    package var members: Int
    /// Cluster mode: the node that owns the room now (nil: none); `inCluster` false on a single node.
    package var node: String? = nil
    package var inCluster = false
}

/// A node of the cluster, as the server API lists it.
package struct NodeSummary: Sendable, Equatable {
    package var id: String
    /// Whether it is the node that answered.
    package var isSelf: Bool
    /// The rooms it owns (holds the lease of) now.
    package var rooms: Int
}

/// A room's version after a change (or the one it was deleted at).
package struct RoomVersion: Sendable, Equatable {
    package var name: String
    package var epoch: String
    package var version: Int
}

/// One member of a room.
package struct MemberInfo: Sendable, Equatable {
    package var session: SessionID
    package var name: String?
    /// The token's `sub`.
    package var user: String?
    package var roles: [String]
    package var holding: [ControlID]
    /// What the member claims: `[{"control", "target"}]`.
    package var editing: [JSONValue]
    /// What the client set with `presence`.
    package var data: JSONObject
}

/// A room's whole document and members.
package struct RoomDetails: Sendable {
    package var name: String
    package var template: String
    package var epoch: String
    package var version: Int
    package var state: JSONValue
    package var members: [MemberInfo]
}

/// Patches a room still holds.
package struct RoomHistory: Sendable {
    package var name: String
    package var epoch: String
    package var version: Int
    package var patches: [Patch]
}

/// Where a directory keeps the transport's `SessionCloser`: weakly (the transport owns the directory), set once
/// at start-up, read from any thread.
package final class SessionCloserSlot: Sendable {
    private struct Weak { weak var closer: (any SessionCloser)? }
    private let slot = Mutex(Weak())

    package init() {}

    package var closer: (any SessionCloser)? {
        get { slot.withLock { $0.closer } }
        set { slot.withLock { $0.closer = newValue } }
    }

    /// Closes `session` on this node, or `notFound` when nothing here can.
    func disconnect(_ session: SessionID, room: String, grantedRooms: [String]?, _ reply: @escaping @Sendable (DisconnectOutcome) -> Void) {
        guard let closer else { return reply(.notFound) }
        closer.disconnect(session, room: room, grantedRooms: grantedRooms, reply)
    }
}
