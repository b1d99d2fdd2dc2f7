import LiveControlsEngine
import LiveControlsProtocol

/// Broadcasts (`broadcast`): an event a member (or the server API) hands the room's other members as is. Not state: no
/// version, nothing stored, no patch. It goes through the room's queue like any request, so it reaches each member in
/// order with the room's patches (after those before it, before those after it), and is checked by the room
/// (`Room.checkBroadcast`: membership, roles, size, the member's and the room's rates). One frame, encoded once, for
/// every other member; in cluster mode the owner publishes it on the room's channel after its last write, and each
/// node hands it to its members of the room.
extension RoomRuntime {
    /// A member's broadcast: queued under the same bound as intents.
    func broadcast(_ subscriber: any RoomSubscriber, _ request: BroadcastRequest) {
        queueRequest(from: subscriber, id: request.id) { self.handleBroadcast(subscriber, request) }
    }

    private func handleBroadcast(_ subscriber: any RoomSubscriber, _ request: BroadcastRequest) {
        assertOnQueue(queue)
        guard !refusedAsAbandoned(subscriber, id: request.id) else { return }
        rejoinIfUnknown(subscriber)
        let session = subscriber.session
        let event = JSONWriter.encode(request.event)  // once: its size is checked, and it is sent as it is
        do {
            try room.checkBroadcast(from: session, bytes: event.count, at: scheduler.now())
        } catch {
            return send(.error(ProtocolError(error.code, error.message, id: request.id, room: name)), to: subscriber)
        }
        fanOut(ServerMessage.encodedBroadcast(room: name, from: session.rawValue, name: room.memberInfo(session)?.name, encodedEvent: event),
               except: session)
        if let id = request.id { send(.ack(id: id, room: name, version: room.version), to: subscriber) }
    }

    /// The server API's broadcast (`from` "server"), to every member.
    func broadcastAsServer(_ event: JSONValue, _ reply: @escaping @Sendable (Result<RoomVersion, AdminFailure>) -> Void) {
        submit {
            if let failure = self.unusable() { return reply(.failure(failure)) }
            let encoded = JSONWriter.encode(event)
            let policy = self.room.broadcastPolicy
            guard encoded.count <= policy.maxBytes else {
                return reply(.failure(AdminFailure(.tooLarge, "a broadcast's event may take at most \(policy.maxBytes) bytes as JSON in room \(self.name) (this one takes \(encoded.count))", room: self.name)))
            }
            do throws(IntentError) {
                try self.room.checkServerBroadcast(at: self.scheduler.now())
            } catch {
                return reply(.failure(AdminFailure(ProtocolError(error.code, error.message, room: self.name))))
            }
            self.fanOut(ServerMessage.encodedBroadcast(room: self.name, from: "server", name: nil, encodedEvent: encoded), except: nil)
            self.replyWithVersion(reply)
        }
    }

    /// Queue only: `message` to every member but `except`, after what the room sent before.
    private func fanOut(_ message: [UInt8], except: SessionID?) {
        guard localDelivery else {
            clusterBroadcast?(message, except, room.epoch, room.version)
            return
        }
        let frame = Frame.broadcast(bytes: message, room: name, toMany: hasCrowd)
        if heldHead == held.count && room.version <= durable {
            // Deliverable now (always, with a synchronous store): no copy of the subscriber list, as for a patch.
            var toWake: [any RoomSubscriber] = []
            toWake.reserveCapacity(subscribers.count)
            for (session, subscriber) in subscribers where session != except && subscriber.deliver(frame) { toWake.append(subscriber) }
            if !toWake.isEmpty { waker.wake(toWake) }
            return
        }
        var targets: [any RoomSubscriber] = []
        targets.reserveCapacity(subscribers.count)
        for (session, subscriber) in subscribers where session != except { targets.append(subscriber) }
        guard !targets.isEmpty else { return }
        deliver(after: room.version) {
            var toWake: [any RoomSubscriber] = []
            toWake.reserveCapacity(targets.count)
            for subscriber in targets where subscriber.deliver(frame) { toWake.append(subscriber) }
            if !toWake.isEmpty { self.waker.wake(toWake) }
        }
    }
}
