import LiveControlsEngine

/// Cluster mode: a member of an owned room whose connection is on some node (this one included).
/// Frames sent to it are published to that node's inbox, after every write this ownership submitted before;
/// none ever needs waking here.
final class RemoteSession: RoomSubscriber, Sendable {
    let remoteNode: String
    let session: SessionID
    /// The forwarding node's request token, echoed in the reply so it can stop waiting.
    let token: Int
    private let outlet: RedisRoomStore
    /// How the session joined, as its node said with the request (`ClusterRequest`).
    let membership: Membership?

    init(node: String, session: SessionID, token: Int, outlet: RedisRoomStore, membership: Membership? = nil) {
        self.remoteNode = node
        self.session = session
        self.token = token
        self.outlet = outlet
        self.membership = membership
    }

    /// This session, as it joined (`membership`).
    func joined(as membership: Membership?) -> RemoteSession {
        RemoteSession(node: remoteNode, session: session, token: token, outlet: outlet, membership: membership)
    }

    var node: String? { remoteNode }

    /// A reply that shows the room at `version` (the owner's `send`): fenced, after the write of `version`.
    func deliver(_ frame: Frame, showing version: Int) -> Bool {
        outlet.reply(envelope(frame), to: remoteNode, showing: version)
        return false
    }

    /// Only for errors, which show no state (a refusal while the room stops): published without a fence.
    func deliver(_ frame: Frame) -> Bool {
        outlet.replyUnfenced(envelope(frame), to: remoteNode)
        return false
    }

    /// An error telling the session's node that this node no longer owns the room (it was handed back after
    /// the request was dispatched): that node forgets the owner (`notOwner`).
    func deliverNotOwner(_ frame: Frame) -> Bool {
        let envelope = frame.withBytes {
            ClusterEnvelope.reply(room: outlet.room, session: session, token: token, state: nil, message: $0, notOwner: true)
        }
        outlet.replyUnfenced(envelope, to: remoteNode)
        return false
    }

    private func envelope(_ frame: Frame) -> [UInt8] {
        frame.withBytes { ClusterEnvelope.reply(room: outlet.room, session: session, token: token, state: frame.stateVersion, message: $0) }
    }
}
