import LiveControlsEngine
import LiveControlsProtocol

/// Whoever listens to a room for one session. The runtime knows nothing else of them: a WebSocket
/// connection (the transport's `Connection`), a member on another cluster node (`RemoteSession`), and next
/// an HTTP API caller or the webhook dispatcher are all just subscribers.
///
/// Any thread may call these (rooms run on their own queues); implementations keep their own state safe.
package protocol RoomSubscriber: AnyObject, Sendable {
    var session: SessionID { get }
    /// The cluster node the session is connected to; nil for a subscriber of this process that takes frames
    /// directly (then the room's patches are delivered to it).
    var node: String? { get }
    /// Queues one message for the session. True when the subscriber must now be woken through the room's
    /// `SubscriberWaker` (callers batch the wakes of one fan-out).
    func deliver(_ frame: Frame) -> Bool
    /// A reply that shows the room at `version`, sent once that version is durable. Usually `deliver`;
    /// a remote session publishes it fenced, after the write of `version`.
    func deliver(_ frame: Frame, showing version: Int) -> Bool
    /// An error from a room this node no longer runs (cluster: handed back just after the request was sent
    /// here): a remote session's node must forget the owner and ask again. Usually `deliver`.
    func deliverNotOwner(_ frame: Frame) -> Bool
    /// The subscriber missed room state (an overflow, a gap in what Redis delivered, a new epoch): its state
    /// frames of `room` are dropped until `deliverResync` queues a fresh snapshot, which it then asks the
    /// room for (`RoomEndpoint.resyncAfterOverflow`). True when it must be woken.
    func requireResync(room: String) -> Bool
    /// Queues the fresh snapshot of a room being resynced, ending its resync. True when it must be woken.
    func deliverResync(_ frame: Frame, room: String) -> Bool
    /// Forgets a pending resync (the subscriber is no longer in the room).
    func cancelResync(room: String)
    /// Whether the subscriber is gone (its connection closed, or its close was asked for; any thread): intents it left
    /// queued are dropped, not applied — its leave follows them.
    var isGone: Bool { get }
    /// Cluster mode: how the session joined (name, roles), for an owner that does not know it as a member.
    var membership: Membership? { get }
}

/// How a session joined a room: what an owner needs to add it as a member again (`ClusterRequest`).
package struct Membership: Sendable, Equatable {
    package var name: String?
    package var roles: [String]
    /// The token's `sub`.
    package var user: String?

    package init(name: String?, roles: [String], user: String? = nil) {
        self.name = name
        self.roles = roles
        self.user = user
    }

    var json: JSONValue {
        var object: JSONObject = ["name": name.map { .string($0) } ?? .null, "roles": .array(roles.map { .string($0) })]
        if let user { object["user"] = .string(user) }
        return .object(object)
    }

    init?(json: JSONValue) {
        guard let roles = json["roles"]?.arrayValue else { return nil }
        self.init(name: json["name"]?.stringValue, roles: roles.compactMap(\.stringValue), user: json["user"]?.stringValue)
    }
}

extension RoomSubscriber {
    package var node: String? { nil }
    package func deliver(_ frame: Frame, showing version: Int) -> Bool { deliver(frame) }
    package func deliverNotOwner(_ frame: Frame) -> Bool { deliver(frame) }
    package func requireResync(room: String) -> Bool { false }
    package func deliverResync(_ frame: Frame, room: String) -> Bool { deliver(frame) }
    package func cancelResync(room: String) {}
    package var isGone: Bool { false }
    package var membership: Membership? { nil }
}

/// Wakes subscribers whose `deliver` answered true: the transport's hub, which hands their connections to
/// its service thread. Any thread.
package protocol SubscriberWaker: AnyObject, Sendable {
    func wake(_ subscribers: [any RoomSubscriber])
    func wake(_ subscriber: any RoomSubscriber)
    /// The transport is behind on writing (its last pass took long): a large room pauses its queue a moment
    /// (`RoomRuntime.paceIfTransportBehind`) rather than queue fan-out faster than it can go out. Any thread.
    var isBehind: Bool { get }
}

extension SubscriberWaker {
    package var isBehind: Bool { false }
}
