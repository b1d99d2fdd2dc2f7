import LiveControlsEngine
import LiveControlsProtocol

/// What the server API (the transport's `/api/v1/`) asks of the rooms. Each call returns at once; `reply` runs
/// exactly once, on any thread. A reply that shows a room's version is given only once that version is durable
/// (as an `ack` is). Calls that look a room up are made from the thread that dispatches joins (the transport's
/// service thread), so an idle room cannot be unloaded between the lookup and the request.
package protocol RoomAdministration: AnyObject, Sendable {
    /// Loaded rooms and rooms only in the store, by name.
    func listRooms(_ reply: @escaping @Sendable ([RoomSummary]) -> Void)
    /// One room's document, loading it from the store if needed; `unknown_room` when there is none.
    func describeRoom(_ name: String, _ reply: @escaping @Sendable (Result<RoomDetails, AdminFailure>) -> Void)
    /// A new room from `template` (nil: the default), with `intents` applied as its starting state (all or
    /// nothing, validated as intents are); `room_exists` when the name is taken.
    func createRoom(_ name: String, template: String?, intents: [ServerIntent],
                    _ reply: @escaping @Sendable (Result<RoomDetails, AdminFailure>) -> Void)
    /// Applies `intents` as the server, in order, all or nothing: one patch.
    func applyIntents(_ name: String, _ intents: [ServerIntent], _ reply: @escaping @Sendable (Result<RoomVersion, AdminFailure>) -> Void)
    /// Every control back to its template's state, in one patch.
    func resetRoom(_ name: String, _ reply: @escaping @Sendable (Result<RoomVersion, AdminFailure>) -> Void)
    /// Removes the room from memory and the store; its members get `room_deleted` and are no longer in it.
    func deleteRoom(_ name: String, _ reply: @escaping @Sendable (Result<RoomVersion, AdminFailure>) -> Void)
    /// The retained patches after `version` (of `epoch`, when given).
    func history(_ name: String, epoch: String?, after version: Int, _ reply: @escaping @Sendable (Result<RoomHistory, AdminFailure>) -> Void)
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
    package var holding: [ControlID]
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
