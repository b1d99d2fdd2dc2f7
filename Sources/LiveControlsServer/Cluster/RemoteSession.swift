import LiveControlsEngine

/// Cluster mode: a member of an owned room whose connection is on some node (this one included).
/// Frames sent to it are published to that node's inbox, after every write this ownership made before.
final class RemoteSession: RoomSubscriber, @unchecked Sendable {
    let node: String
    let session: SessionID
    /// The forwarding node's request token, echoed in the reply so it can stop waiting.
    let token: Int
    private let outlet: RedisRoomStore

    init(node: String, session: SessionID, token: Int, outlet: RedisRoomStore) {
        self.node = node
        self.session = session
        self.token = token
        self.outlet = outlet
    }

    func enqueue(_ frame: Frame) -> Bool {
        outlet.reply(ClusterEnvelope.reply(room: outlet.room, session: session, token: token, state: frame.stateVersion,
                                           message: frame.bytes), to: node)
        return false
    }
}
