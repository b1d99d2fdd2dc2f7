import LiveControlsEngine
import LiveControlsProtocol

/// `undo` and `redo` (`Room+Undo.swift`): queued like intents, applied as a change of the room, answered with an `ack`
/// (when they have an id) or an error; each user whose stacks changed size hears it on every session it has in the room
/// (`undoable`), after the patch that changed them.
extension RoomRuntime {
    func undo(_ subscriber: any RoomSubscriber, _ request: UndoRequest) {
        queueRequest(from: subscriber, id: request.id) { self.handleUndo(subscriber, request) }
    }

    private func handleUndo(_ subscriber: any RoomSubscriber, _ request: UndoRequest) {
        assertOnQueue(queue)
        guard !refusedAsAbandoned(subscriber, id: request.id) else { return }
        rejoinIfUnknown(subscriber)
        do {
            let update = try room.undo(redo: request.redo, by: subscriber.session, requestID: request.id, at: scheduler.now())
            carryOut(update)
            metrics.intent(refused: false)
            if let id = request.id { send(.ack(id: id, room: name, version: room.version), to: subscriber) }
        } catch {
            metrics.intent(refused: true)
            send(.error(ProtocolError(error.code, error.message, id: request.id, room: name, by: error.by)), to: subscriber)
        }
    }

    /// Tells the sessions of each user in `counts` how many changes it can undo and redo now.
    func tellUndoable(_ counts: [UndoCounts]) {
        assertOnQueue(queue)
        for count in counts {
            let frame = Frame.make(.undoable(room: name, undo: count.undo, redo: count.redo))
            for session in room.sessions(ofUndoUser: count.user) {
                guard let subscriber = localDelivery ? subscribers[session] : remoteMembers[session] else { continue }
                send(frame, to: subscriber)
            }
        }
    }

    /// A member that joins (or resyncs: it may have missed a change of them) is told its stacks' sizes, in a room that
    /// records changes: another device of its user, or the same user after a reconnect, may have some.
    func tellUndoable(toJoined subscriber: any RoomSubscriber) {
        guard let counts = room.undoCounts(for: subscriber.session) else { return }
        send(.undoable(room: name, undo: counts.undo, redo: counts.redo), to: subscriber)
    }
}
