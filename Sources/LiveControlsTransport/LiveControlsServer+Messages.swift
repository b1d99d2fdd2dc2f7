import CLibWebSockets
import LiveControlsEngine
import LiveControlsProtocol
import LiveControlsRuntime

extension LiveControlsServer {
    /// Rooms with more subscribers than this run intents on their own queue rather than on the service thread.
    static let inlineIntentLimit = inlineSubscriberLimit

    /// Service thread: one complete text message from a client.
    func handleMessage(_ bytes: UnsafeBufferPointer<UInt8>, from connection: Connection) {
        serviceThread.assertOn()
        let message: ClientMessage
        do {
            message = try ClientMessage.decode(bytes)
        } catch {
            guard admit(connection, id: error.id) else { return }
            send(.error(error), to: connection)
            return
        }
        // One clock read for the message's rate, drag and write-budget bookkeeping.
        let now = Transport.now()
        let cost = draggedControls.isEmpty ? 1 : connection.dragPace.cost(of: message, dragged: draggedControls, now: now)
        guard admit(connection, id: message.requestID, cost: cost, now: now) else { return }
        if connection.joined[message.room]?.room.isCrowded != true {
            // A client of a quiet room (or a room it has not joined yet): the pass's write budget applies.
            writeTurns.noteOtherClient(now: now.nanoseconds)
        }
        switch message {
        case var .join(request):
            if request.token == nil, let membership = connection.joined[request.room], !membership.room.isClosed,
               (membership.grant.expiresAt ?? Int.max) > options.auth.now() {
                // A resync that brings no token keeps the grant the session joined with (a token of the URL included),
                // while it is valid: it asks for nothing new, only for the state again. (An expired one goes the usual
                // way: the token is checked, and refused.)
                membership.room.resync(connection, id: request.id)
                return
            }
            let grant: AuthPolicy.Grant
            switch options.auth.grant(token: request.token ?? connection.urlToken, room: request.room) {
            case let .success(g): grant = g
            case var .failure(error):
                error.id = request.id
                send(.error(error), to: connection)
                return
            }
            if let membership = connection.joined[request.room] {
                let room = membership.room
                if room.isClosed {
                    // The room stopped (a failed store write) or was unloaded since: join it anew, from the store.
                    connection.joined[request.room] = nil
                } else {
                    let joinedWith = membership.grant.roles
                    if membership.grant.user != grant.user {
                        // The member shows its user to everyone: a token for someone else is a new member, not a re-join.
                        send(.error(ProtocolError(.conflict, "this token names another user (sub) than the one you joined as; leave the room and join again",
                                                  id: request.id, room: request.room)), to: connection)
                        return
                    }
                    if joinedWith != grant.roles {
                        // The member's roles are those it joined with: a token with others would show one set and act
                        // under another.
                        send(.error(ProtocolError(.conflict, "this token's roles (\(grant.roles.joined(separator: ", "))) differ from those you joined with (\(joinedWith.joined(separator: ", "))); leave the room and join again",
                                                  id: request.id, room: request.room)), to: connection)
                        return
                    }
                    connection.joined[request.room]?.grant = grant  // a re-join refreshes the token
                    room.resync(connection, id: request.id)
                    return
                }
            }
            do {
                let (shares, address, perMinute) = (self.shares, connection.countedAddress ?? "", options.limits.roomCreationsPerMinute)
                let room = try registry.room(named: request.room, template: request.template, mayCreate: { template, defaultTemplate in
                    self.options.auth.mayCreate(grant, template: template, defaultTemplate: defaultTemplate)
                }, takeCreation: {
                    guard let wait = shares.takeRoomCreation(by: address, now: Transport.now()) else { return nil }
                    return ProtocolError(.roomLimit, "your address created \(perMinute) rooms in the last minute; try again in \(wait) s")
                })
                connection.joined[request.room] = Membership(room: room, grant: grant)
                if let name = grant.name { request.name = name }
                request.roles = grant.roles
                request.user = grant.user
                room.join(connection, request)
            } catch {
                var error = error
                error.id = request.id
                send(.error(error), to: connection)
            }
        case let .leave(roomName, id):
            guard let room = connection.joined.removeValue(forKey: roomName)?.room else {
                send(.error(ProtocolError(.notJoined, "not in room \(roomName)", id: id, room: roomName)), to: connection)
                return
            }
            room.leave(connection, id: id, reason: .leave)
        case let .presence(request):
            guard let room = connection.joined[request.room]?.room else {
                send(.error(ProtocolError(.notJoined, "join room \(request.room) before setting your presence in it", id: request.id, room: request.room)),
                     to: connection)
                return
            }
            room.presence(connection, request)
            if !connection.readingPaused { pauseReadingIfBehind(connection, room) }
        case let .claim(request):
            guard let membership = connection.joined[request.room] else {
                send(.error(ProtocolError(.notJoined, "join room \(request.room) before claiming in it", id: request.id, room: request.room)), to: connection)
                return
            }
            // A claim says "I am editing this" (and may hold others back): only those who may edit may claim. Giving a
            // claim up is always allowed.
            if !request.release, let refusal = options.auth.mayAct(membership.grant, room: request.room, id: request.id, what: "claim") {
                send(.error(refusal), to: connection)
                return
            }
            membership.room.claim(connection, request)
            if !connection.readingPaused { pauseReadingIfBehind(connection, membership.room) }
        case let .broadcast(request):
            // Who may broadcast is the room's to say (its template's `broadcast.roles`; viewers not by default).
            guard let membership = connection.joined[request.room] else {
                send(.error(ProtocolError(.notJoined, "join room \(request.room) before broadcasting in it", id: request.id, room: request.room)), to: connection)
                return
            }
            if let expired = options.auth.hasExpired(membership.grant, room: request.room, id: request.id) {
                send(.error(expired), to: connection)
                return
            }
            membership.room.broadcast(connection, request)
            if !connection.readingPaused { pauseReadingIfBehind(connection, membership.room) }
        case let .undo(request):
            guard let membership = connection.joined[request.room] else {
                send(.error(ProtocolError(.notJoined, "join room \(request.room) before undoing in it", id: request.id, room: request.room)), to: connection)
                return
            }
            // An undo is a change like an intent: a viewer or an expired token may not make one.
            if let refusal = options.auth.mayAct(membership.grant, room: request.room, id: request.id, what: request.redo ? "redo" : "undo") {
                send(.error(refusal), to: connection)
                return
            }
            membership.room.undo(connection, request)
            if !connection.readingPaused { pauseReadingIfBehind(connection, membership.room) }
        case let .intent(request):
            guard let membership = connection.joined[request.room] else {
                send(.error(ProtocolError(.notJoined, "join room \(request.room) before sending intents to it", id: request.id, room: request.room)),
                     to: connection)
                return
            }
            if let refusal = options.auth.mayAct(membership.grant, room: request.room, id: request.id) {
                send(.error(refusal), to: connection)
                return
            }
            // In a small room the intent runs right here, on the service thread (`RoomEndpoint.intent`, inline), and its
            // fan-out is written when this `lws_service` pass returns (`flushReady`) — no thread hop either way. A large
            // room's fan-out is real work: it runs on the room's queue, beside this thread's writing. The connection
            // remembers which rooms were large and looks again every 64th intent (`isEmpty` first: the usual
            // connection knows no large room, and then nothing is hashed).
            connection.intentsSent &+= 1
            let knownLarge = !connection.largeRooms.isEmpty && connection.largeRooms.contains(request.room) && connection.intentsSent % 64 != 0
            if let subscribers = membership.room.intent(connection, request, inline: !knownLarge) {
                if subscribers > Self.inlineIntentLimit {
                    connection.largeRooms.insert(request.room)
                } else if !connection.largeRooms.isEmpty {
                    connection.largeRooms.remove(request.room)
                }
            } else if !connection.readingPaused {
                pauseReadingIfBehind(connection, membership.room)
            }
        }
    }
}

extension LiveControlsServer {
    /// The rate limit: false when the message is refused (`rate_limited`, or a 1008 close on sustained abuse).
    func admit(_ connection: Connection, id: RequestID?, cost: Double = 1, now: Instant = Transport.now()) -> Bool {
        switch connection.rate.admit(now: now, cost: cost) {
        case .accept:
            return true
        case .close:
            logger.info("closing connection that ignores the rate limit", metadata: ["session": "\(connection.session)"])
            beginClose(connection, code: 1008, reason: "rate limit exceeded")
        case .refuse:
            send(.error(ProtocolError(.rateLimited, "more than \(Int(options.limits.messagesPerSecond)) messages per second (burst \(Int(options.limits.messageBurst))); message dropped", id: id)),
                 to: connection)
        }
        return false
    }
}

extension ClientMessage {
    var requestID: RequestID? {
        switch self {
        case let .join(r): return r.id
        case let .leave(_, id): return id
        case let .intent(r): return r.id
        case let .presence(r): return r.id
        case let .claim(r): return r.id
        case let .broadcast(r): return r.id
        case let .undo(r): return r.id
        }
    }
}

extension LiveControlsServer {
    /// Service thread (sweep): sessions whose token expired leave those rooms and are told why.
    func expireGrants() {
        serviceThread.assertOn()
        let now = options.auth.now()
        for connection in connections.values where connection.lifecycle.isOpen {  // a closing one leaves with its close
            for (roomName, membership) in connection.joined {
                guard let expiry = membership.grant.expiresAt, now >= expiry else { continue }
                connection.joined[roomName] = nil
                membership.room.leave(connection, id: nil, reason: .expired)
                send(.error(ProtocolError(.tokenExpired, "the token for room \(roomName) expired: you have left it; join again with a new token",
                                          room: roomName)), to: connection)
            }
        }
    }
}
