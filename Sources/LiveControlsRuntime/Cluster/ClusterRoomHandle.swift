import LiveControlsEngine
import LiveControlsProtocol

/// The `RoomEndpoint` a subscriber gets in cluster mode: the node's room plus how this join may create it.
final class ClusterRoomHandle: RoomEndpoint, Sendable {
    let room: ClusterRoom
    let creation: ClusterDirectory.Creation

    init(room: ClusterRoom, creation: ClusterDirectory.Creation) {
        self.room = room
        self.creation = creation
    }

    func join(_ subscriber: any RoomSubscriber, _ request: JoinRequest) { room.join(subscriber, request, creation: creation) }
    func resync(_ subscriber: any RoomSubscriber, id: RequestID?) { room.resync(subscriber, id: id) }
    func resyncAfterOverflow(_ subscriber: any RoomSubscriber) { room.resyncAfterOverflow(subscriber) }
    func leave(_ subscriber: any RoomSubscriber, id: RequestID?, reason: HoldEndReason) { room.leave(subscriber, id: id, reason: reason) }
    /// A close waits for the answers to what this node forwarded to the owner (`ClusterRoom.afterForwardedRequests`).
    func afterQueuedWork(of subscriber: any RoomSubscriber, _ done: @escaping @Sendable () -> Void) {
        room.afterForwardedRequests(of: subscriber, done)
    }
    /// Never: ownership changes are handled inside (a new owner takes over the room).
    var isClosed: Bool { false }

    /// Always forwarded (to the owner, through its queue): never inline.
    func intent(_ subscriber: any RoomSubscriber, _ request: IntentRequest, inline: Bool) -> Int? {
        room.act(subscriber, id: request.id) { .intent(request, $0) }
        return nil
    }

    func presence(_ subscriber: any RoomSubscriber, _ request: PresenceRequest) {
        room.act(subscriber, id: request.id) { .presence(request, $0) }
    }

    func claim(_ subscriber: any RoomSubscriber, _ request: ClaimRequest) {
        room.act(subscriber, id: request.id) { .claim(request, $0) }
    }

    func broadcast(_ subscriber: any RoomSubscriber, _ request: BroadcastRequest) {
        room.act(subscriber, id: request.id) { .broadcast(request, $0) }
    }

    func undo(_ subscriber: any RoomSubscriber, _ request: UndoRequest) {
        room.act(subscriber, id: request.id) { .undo(request, $0) }
    }
}
