import LiveControlsProtocol

extension LiveControlsClient {
    /// Routes one message: room messages to their ``Room``, replies to the request waiting for them.
    func handle(_ message: Incoming) {
        let id = message["id"]?.stringValue
        let room = message["room"]?.stringValue.flatMap { rooms[$0] }
        switch message.type {
        case "snapshot", "resumed", "patch":
            if let room {
                if !room.receive(message) { rejoin(room, resuming: false) }  // a gap: a fresh snapshot
            }
            if let id, message.type != "patch" { resolve(id, .success(message.object)) }
        case "ack":
            if let id { resolve(id, .success(message.object)) }
        case "broadcast":
            room?.publish(.broadcast, message.object)
        case "undoable":
            if let room, let undo = message["undo"]?.intValue, let redo = message["redo"]?.intValue {
                room.canUndo = undo
                room.canRedo = redo
            }
        case "left":
            if let room {
                room.markLeft(nil)
                endLeases(in: room.name, reason: "leave")
                forget(room)
            }
            if let id { resolve(id, .success(message.object)) }
        case "error":
            let refusal = LiveControlsError.Refusal(
                rawCode: message["code"]?.stringValue ?? "internal", message: message["message"]?.stringValue ?? "",
                room: message["room"]?.stringValue, reason: message["reason"]?.stringValue, by: message["by"]?.objectValue)
            room?.publish(.error(refusal), message.object)
            if let id {
                resolve(id, .failure(LiveControlsError.refused(refusal)))  // a late reply (after a time-out) resolves nothing
            } else if let room {
                roomRefused(room, refusal)
            }
        default:
            break  // a message type newer than this SDK
        }
    }

    /// An `error` with a room and no request of ours: the room stopped, the token expired, the room was deleted.
    private func roomRefused(_ room: Room, _ refusal: LiveControlsError.Refusal) {
        switch refusal.code {
        case .unavailable:
            // The room stopped on the server (saving a change failed): this session left it, so its holds and
            // claims are gone and its requests still waiting will not be answered; join again, resuming.
            endLeases(in: room.name, reason: "unavailable")
            failPending(room: room.name, .refused(refusal))
            rejoin(room, resuming: true)
        case .tokenExpired, .roomDeleted:
            room.markLeft(.refused(refusal))
            endLeases(in: room.name, reason: refusal.rawCode)
            forget(room)
        default:
            room.lastError = refusal
        }
    }
}
