import CLibWebSockets
import Dispatch
import Foundation
import LiveControlsEngine
import LiveControlsProtocol
import LiveControlsRuntime

/// The one C callback for both protocols. Runs on the lws service thread only.
func lwsCallback(
    _ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
    _ input: UnsafeMutableRawPointer?, _ length: Int
) -> Int32 {
    switch reason {
    case LWS_CALLBACK_LOCK_POLL, LWS_CALLBACK_UNLOCK_POLL, LWS_CALLBACK_CHANGE_MODE_POLL_FD:
        // lws's own poll bookkeeping, three calls for every `lws_callback_on_writable` and every write
        // that drains a connection: nothing for the server to do (`handleCallback` would pass them on too).
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    default:
        break
    }
    guard let wsi, let contextUser = lws_context_user(lws_get_context(wsi)) else {
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
    // The server outlives its context (it is destroyed before the server lets go), so no retain is needed.
    return Unmanaged<LiveControlsServer>.fromOpaque(contextUser)._withUnsafeGuaranteedRef {
        $0.handleCallback(wsi, reason, user, input, length)
    }
}

extension LiveControlsServer {
    func handleCallback(
        _ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
        _ input: UnsafeMutableRawPointer?, _ length: Int
    ) -> Int32 {
        serviceThread.assertOn()
        switch reason {
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            serviceWakeUps()
            return 0  // never non-zero here: it would close lws's wake pipe

        case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
            // Only WebSocket upgrades are ours to judge here (lws asks for `h2c` too, which it handles itself).
            guard let input, String(cString: input.assumingMemoryBound(to: CChar.self)).lowercased() == "websocket" else { return 0 }
            // An upgrade lws would refuse later (FILTER_PROTOCOL_CONNECTION) by hanging up gets an HTTP answer instead: a
            // client (and its developer) sees why at once, instead of an empty reply or a time-out.
            if requestPath(wsi) != "/ws" {
                logger.info("WebSocket refused: not /ws", metadata: ["path": "\(requestPath(wsi))"])
                _ = lws_return_http_status(wsi, 404, "WebSockets are served at /ws only")
                return 1
            }
            if !options.auth.originAllowed(header(wsi, WSI_TOKEN_ORIGIN)) {
                logger.info("WebSocket refused: origin not allowed", metadata: ["origin": "\(header(wsi, WSI_TOKEN_ORIGIN) ?? "")"])
                _ = lws_return_http_status(wsi, 403, "this page's origin is not in the server's --allowed-origin list")
                return 1
            }
            // lws binds the first offered subprotocol that names one of the vhost's protocols, and hangs up without a word
            // when none does (RFC 6455 lets a server choose none; lws 4.1 cannot) — or when that is the HTTP side's. A
            // client whose offer would end so gets a 400 that says what to offer.
            guard let offered = header(wsi, WSI_TOKEN_PROTOCOL),
                  offered.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) })
                      .first(where: { $0 == protocolName || $0 == Self.httpProtocolName }) != protocolName
            else { return 0 }
            logger.info("WebSocket refused: subprotocol not offered", metadata: ["offered": "\(offered)"])
            _ = lws_return_http_status(wsi, 400, "offer the subprotocol \(protocolName), or none")
            return 1  // answered; lws ends the request

        case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
            // WebSocket upgrades are accepted on /ws only, from allowed browser origins (CONFIRM_UPGRADE answered the
            // others already; kept here as the rule's last word).
            guard requestPath(wsi) == "/ws" else { return 1 }
            guard options.auth.originAllowed(header(wsi, WSI_TOKEN_ORIGIN)) else {
                logger.info("WebSocket refused: origin not allowed", metadata: ["origin": "\(header(wsi, WSI_TOKEN_ORIGIN) ?? "")"])
                return 1
            }
            return 0

        case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
            // A socket just accepted (its descriptor in `input`): served only within the socket budget.
            let fd = Int32(truncatingIfNeeded: Int(bitPattern: input))
            return socketBudget.admit(fd: fd, address: SocketBudget.peerAddress(fd: fd)) ? 0 : 1

        case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED:
            socketBudget.adopted(wsi, fd: Int32(lws_get_socket_fd(wsi)))
            return lws_callback_http_dummy(wsi, reason, user, input, length)

        case LWS_CALLBACK_WSI_DESTROY:
            socketBudget?.closed(wsi)
            return lws_callback_http_dummy(wsi, reason, user, input, length)

        case LWS_CALLBACK_ESTABLISHED:
            guard let user else { return -1 }
            socketBudget.becameWebSocket(wsi)
            guard !draining else { return -1 }
            let connection = Connection(session: newSessionID(), wsi: WSI(raw: wsi), limits: options.limits, now: Transport.now())
            user.storeBytes(of: Unmanaged.passRetained(connection).toOpaque(), as: UnsafeMutableRawPointer.self)
            guard connections.count < options.limits.maxConnections else {
                logger.warning("connection refused: limit reached", metadata: ["maxConnections": "\(options.limits.maxConnections)"])
                beginClose(connection, code: 1013, reason: "server full: too many connections")
                return 0
            }
            let address = shares.clientAddress(peer: peerAddress(wsi), forwardedFor: header(wsi, WSI_TOKEN_X_FORWARDED_FOR))
            guard shares.openConnection(from: address) else {
                logger.warning("connection refused: its address holds its share", metadata: [
                    "address": "\(address)", "maxConnectionsPerAddress": "\(options.limits.maxConnectionsPerAddress)"])
                beginClose(connection, code: 1013, reason: "too many connections from your address")
                return 0
            }
            connection.countedAddress = address
            if lws_is_ssl(wsi) == 0, lws_get_network_wsi(wsi) == wsi { connection.socket = lws_get_socket_fd(wsi) }
            connections[connection.session] = connection
            connection.urlToken = urlArgument(wsi, "token")
            logger.debug("connected", metadata: ["session": "\(connection.session)"])
            send(.welcome(session: connection.session.rawValue, serverTime: WallClock.unixMillisecondsNow()), to: connection)
            return 0

        case LWS_CALLBACK_RECEIVE:
            guard let connection = connection(user) else { return -1 }
            connection.keepalive.heard = true
            return receive(connection, wsi, input, length)

        case LWS_CALLBACK_RECEIVE_PONG:
            connection(user)?.keepalive.heard = true
            return 0

        case LWS_CALLBACK_SERVER_WRITEABLE:
            guard let connection = connection(user) else { return -1 }
            return writeable(connection, wsi)

        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            // lws answers the close frame on the next writable; no direct write may come after it.
            connection(user)?.lifecycle.peerSentClose()
            return answerPeerClose(input, length)

        case LWS_CALLBACK_WS_SERVER_DROP_PROTOCOL:
            // lws is closing the connection, before any close frame of its own (invalid UTF-8, a malformed frame, or
            // after ours or the peer's): nothing may be written after it (RFC 6455 §5.5.1), directly or not. Replies
            // already queued (the ack of an intent read in the same pass, before the bad frame) go first, in one write:
            // lws sends its close frame on a later writable event, after them.
            guard let connection = connection(user) else { return 0 }
            if connection.lifecycle.isOpen { writeDirectly(connection) }
            connection.libraryClosing()
            return 0

        case LWS_CALLBACK_CLOSED:
            guard let user, let raw = user.load(as: UnsafeMutableRawPointer?.self) else { return 0 }
            let connection = Unmanaged<Connection>.fromOpaque(raw).takeRetainedValue()
            user.storeBytes(of: nil, as: UnsafeMutableRawPointer?.self)
            connection.markClosed()  // its wsi is freed when this returns: `flushReady` must not touch it
            if connections[connection.session] === connection { connections[connection.session] = nil }
            if let address = connection.countedAddress { shares.closeConnection(from: address) }
            for membership in connection.joined.values { membership.room.leave(connection, id: nil, reason: .disconnect) }
            connection.joined.removeAll()
            logger.debug("disconnected", metadata: ["session": "\(connection.session)"])
            return 0

        case LWS_CALLBACK_FILTER_HTTP_CONNECTION:
            return checkRequest(wsi, uri: input, length: length)

        case LWS_CALLBACK_HTTP:
            return serveHTTP(wsi, input, length)

        case LWS_CALLBACK_HTTP_BODY:
            receiveAPIBody(wsi, input, length)
            return 0

        case LWS_CALLBACK_HTTP_BODY_COMPLETION:
            completeAPIBody(wsi)
            return 0

        case LWS_CALLBACK_HTTP_WRITEABLE:
            return writeHTTPResponse(wsi) ?? lws_callback_http_dummy(wsi, reason, user, input, length)

        case LWS_CALLBACK_CLOSED_HTTP:
            forgetHTTP(wsi)
            return lws_callback_http_dummy(wsi, reason, user, input, length)

        default:
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        }
    }

    /// "s" and 10 characters of the same alphabet as room ids (50 random bits), from one draw of the
    /// system generator: one `getrandom` per connection instead of one per character.
    private func newSessionID() -> SessionID {
        let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)
        var rng = SystemRandomNumberGenerator()
        var bits = rng.next()
        var id = [UInt8](repeating: UInt8(ascii: "s"), count: 11)
        for i in 1...10 {
            id[i] = alphabet[Int(bits & 31)]
            bits >>= 5
        }
        return SessionID(String(decoding: id, as: UTF8.self))
    }

    private func connection(_ user: UnsafeMutableRawPointer?) -> Connection? {
        guard let user, let raw = user.load(as: UnsafeMutableRawPointer?.self) else { return nil }
        return Unmanaged<Connection>.fromOpaque(raw).takeUnretainedValue()
    }

    /// `EVENT_WAIT_CANCELLED`: ask for writable callbacks where frames were queued; start draining.
    private func serviceWakeUps() {
        let (dirty, batches, work, shutdown, sweep) = hub.drain()
        for item in work { item() }
        // A connection lws has closed meanwhile (`CLOSED`: its wsi is gone) is skipped.
        for connection in dirty where !connection.lifecycle.isGone {
            askToWrite(connection, connection.wsi.raw)
        }
        for batch in batches {
            for subscriber in batch {
                if let connection = Hub.connection(subscriber), !connection.lifecycle.isGone {
                    askToWrite(connection, connection.wsi.raw)
                }
            }
        }
        if sweep {
            sweepKeepalive(now: Transport.now())
            sweepPausedConnections(now: Transport.now())
            closeStuckConsumers()
            expireGrants()
            shares.sweep(now: Transport.now())
            for (bound, count) in socketBudget.takeRefusals() {
                logger.warning("connections refused at accept", metadata: ["count": "\(count)", "bound": "\(bound)",
                    "sockets": "\(socketBudget.sockets)/\(socketBudget.maxSockets)", "http": "\(socketBudget.http)/\(socketBudget.maxHTTP)"])
                registry.metrics.refusedAtAccept(count)
            }
            registry.unloadIdleRooms(idleSeconds: options.limits.roomIdleSeconds)
        }
        if shutdown && !draining {
            draining = true
            drainDeadline = .now() + .milliseconds(options.shutdownGraceMilliseconds)
            roomWaitDeadline = .now() + .milliseconds(max(options.shutdownGraceMilliseconds, options.shutdownRoomWaitMilliseconds))
            registry.beginShutdown()
            resumeAllReading()
            logger.info("shutting down", metadata: ["connections": "\(connections.count)"])
            for connection in connections.values { beginClose(connection, code: 1001, reason: "server shutting down") }
        }
    }

    /// Service thread: slow consumers that have not caught up in time are dropped. A close frame cannot reach a client
    /// that reads nothing: the TCP connection ends without one (its library reports 1006; PROTOCOL.md, *Limits*).
    private func closeStuckConsumers() {
        let now = Transport.now()
        for connection in connections.values
        where connection.isStuck(now: now, timeoutMilliseconds: options.limits.slowConsumerTimeoutMilliseconds) {
            // A stuck connection is dropped whatever else is under way; the close reason is ours to give only if
            // no close (ours or the peer's) has begun.
            if connection.lifecycle.closeNow(code: 1008) {
                logger.info("closing slow consumer", metadata: ["session": "\(connection.session)"])
                connection.dropQueued()
                var reason = Array("slow consumer: did not read its messages in time".utf8)
                lws_close_reason(connection.wsi.raw, LWS_CLOSE_STATUS_POLICY_VIOLATION, &reason, reason.count)
            }
            lws_set_timeout(connection.wsi.raw, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
        }
    }

    private func receive(_ connection: Connection, _ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        // A connection whose close is under way (asked for, sent, or the peer's) acts on nothing more it sends.
        guard connection.lifecycle.isOpen else { return 0 }
        if lws_frame_is_binary(wsi) != 0 {
            _ = connection.lifecycle.closeNow(code: 1003)
            return close(wsi, 1003, "binary frames are not supported; send JSON text")
        }
        // What the frame header announces counts, not only what has arrived: a frame claiming 2^63 − 1 bytes is
        // refused at its first bytes, before anything is buffered.
        // (Compared without adding the announced length, which may be up to 2^63 − 1: the sum could overflow.)
        let limit = options.limits.maxMessageBytes
        let announced = lws_remaining_packet_payload(wsi)
        if connection.receiveBuffer.count + length > limit || announced > limit - connection.receiveBuffer.count - length {
            logger.info("message too large", metadata: ["session": "\(connection.session)"])
            // The close frame goes out now, while lws goes on reading (and this callback ignoring) whatever else the
            // client sends until it answers the close: closing the socket with its bytes unread would reset the
            // connection, and the client would never see 1009.
            connection.receiveBuffer = []
            beginClose(connection, code: 1009, reason: "message larger than \(options.limits.maxMessageBytes) bytes")
            return 0
        }
        let final = lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0
        if final {
            messagesThisPass += 1
            senderThisPass = connection
        }
        if final && connection.receiveBuffer.isEmpty {
            let bytes = UnsafeBufferPointer(start: input?.assumingMemoryBound(to: UInt8.self), count: length)
            handleMessage(bytes, from: connection)
            return 0
        }
        if let input, length > 0 {
            connection.receiveBuffer.append(contentsOf: UnsafeBufferPointer(start: input.assumingMemoryBound(to: UInt8.self), count: length))
        }
        if final {
            let message = connection.receiveBuffer
            connection.receiveBuffer.removeAll(keepingCapacity: message.count <= 4096)
            message.withUnsafeBufferPointer { handleMessage($0, from: connection) }
        }
        return 0
    }

    /// `WS_PEER_INITIATED_CLOSE`: lws echoes the peer's close payload from the buffer it hands us, after it has
    /// turned the reserved codes below 3000 into 1002 itself. RFC 6455 §7.4 allows 1000–4999 only, and a payload of
    /// one byte cannot hold a code: a code of 5000 or more is echoed as 1002 (protocol error), and a one-byte payload
    /// fails the connection (closed without an answer, which is what failing means in §7.1.7).
    private func answerPeerClose(_ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        guard length > 0, let payload = input?.assumingMemoryBound(to: UInt8.self) else { return 0 }
        guard length >= 2 else { return -1 }
        let code = Int(payload[0]) << 8 | Int(payload[1])
        if code >= 5000 {
            payload[0] = UInt8(1002 >> 8)
            payload[1] = UInt8(1002 & 0xFF)
        }
        return 0
    }

    private func close(_ wsi: OpaquePointer, _ code: UInt32, _ reason: String) -> Int32 {
        var bytes = Array(reason.utf8.prefix(120))
        lws_close_reason(wsi, lws_close_status(rawValue: code), &bytes, bytes.count)
        return -1
    }
}
