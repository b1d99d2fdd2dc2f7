import LiveControlsEngine
import LiveControlsProtocol

extension LiveControlsServer {
    /// Service thread: one complete text message from a client.
    func handleMessage(_ bytes: UnsafeBufferPointer<UInt8>, from connection: Connection) {
        let message: ClientMessage
        do {
            message = try ClientMessage.decode(bytes)
        } catch {
            send(.error(error), to: connection)
            return
        }
        switch message {
        case let .join(request):
            if let room = connection.joined[request.room] {
                room.resync(connection, id: request.id)
                return
            }
            do {
                let room = try registry.room(named: request.room, template: request.template)
                connection.joined[request.room] = room
                room.join(connection, request)
            } catch {
                var error = error
                error.id = request.id
                send(.error(error), to: connection)
            }
        case let .leave(roomName, id):
            guard let room = connection.joined.removeValue(forKey: roomName) else {
                send(.error(ProtocolError(.notJoined, "not in room \(roomName)", id: id, room: roomName)), to: connection)
                return
            }
            room.leave(connection, id: id, reason: .leave)
        case let .intent(request):
            guard let room = connection.joined[request.room] else {
                send(.error(ProtocolError(.notJoined, "join room \(request.room) before sending intents to it", id: request.id, room: request.room)),
                     to: connection)
                return
            }
            room.intent(connection, request)
        }
    }
}
