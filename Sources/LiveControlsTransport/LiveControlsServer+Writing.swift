import CLibWebSockets
import LiveControlsProtocol
import LiveControlsRuntime

/// Writing to WebSocket connections, on the service thread: direct writes after a pass, the writable callback, and
/// asking for the next one within the pass's write budget (`LiveControlsServer+WriteBudget.swift`).
extension LiveControlsServer {
    /// Service thread: closes `connection` with `code` after what is queued for it (false: a close is under way). Its
    /// intents still waiting for a room are dropped (`Connection.requestClose`); the outbox is sealed, and the close
    /// frame sent, only once each room it is in has carried out what was queued before and queued the replies, after
    /// the store made them durable (`RoomEndpoint.afterQueuedWork`) — so an intent is either acked, after its patch, or
    /// never applied. A shutdown's grace bounds the wait (`forceCloses`).
    @discardableResult
    func beginClose(_ connection: Connection, code: UInt16, reason: String) -> Bool {
        serviceThread.assertOn()
        guard connection.requestClose(code: code, reason: reason) else { return false }
        connection.closeBarriers = connection.joined.count
        if connection.closeBarriers == 0 { connection.seal() }
        for membership in connection.joined.values {
            membership.room.afterQueuedWork(of: connection) { [hub, self] in
                hub.perform {
                    guard connection.closeBarriers > 0 else { return }  // forced meanwhile
                    connection.closeBarriers -= 1
                    if connection.closeBarriers == 0 { self.sealAndFinish(connection) }
                }
            }
        }
        lws_callback_on_writable(connection.wsi.raw)  // what is queued starts going out now
        return true
    }

    /// Service thread, at the end of a shutdown's grace: closes still waiting for their rooms (a stalled store) go now.
    func forceCloses() -> Bool {
        let waiting = connections.values.filter { $0.closeBarriers > 0 }
        for connection in waiting {
            connection.closeBarriers = 0
            sealAndFinish(connection)
        }
        return !waiting.isEmpty
    }

    /// Nothing new is taken for a closing connection; its writable callback writes what is queued, then the close frame.
    private func sealAndFinish(_ connection: Connection) {
        connection.seal()
        if !connection.lifecycle.isGone { lws_callback_on_writable(connection.wsi.raw) }
    }

    /// Service thread: queue a message to one connection.
    func send(_ message: ServerMessage, to connection: Connection) {
        serviceThread.assertOn()
        if connection.deliver(Frame.make(message)) { lws_callback_on_writable(connection.wsi.raw) }
    }

    /// Service thread, after each `lws_service` pass (every callback of the pass has returned). When the pass
    /// handled one message, the connections that code on this thread (an intent or join a room ran inline)
    /// queued frames for are written now, instead of asking lws for writable callbacks and writing them after
    /// one more `poll()`; the message's sender goes last, so a client waiting for its `ack` has let everyone
    /// else's patch leave first. A pass that handled several messages leaves the writing to the writable
    /// callbacks, which gather more patches per client.
    ///
    /// Written directly only when lws holds no partly sent data for the connection (then its frames wait
    /// in the outbox, where a slow consumer is caught), it is its own network connection (not an HTTP/2
    /// stream), its peer has not sent a close, and no close or resync of ours is due; otherwise, and for
    /// what is left after one batch, the writable callback does it.
    func flushReady() {
        serviceThread.assertOn()
        let sender = senderThisPass
        let messages = messagesThisPass
        senderThisPass = nil
        messagesThisPass = 0
        if messages > 1 {
            // Under load (several messages in one pass): the writable callbacks after the next poll() let
            // more patches gather per client, so they leave in fewer, larger writes.
            hub.drainReady { if !$0.lifecycle.isGone { lws_callback_on_writable($0.wsi.raw) } }
            return
        }
        var senderReady = false
        hub.drainReady { connection in
            if connection === sender { senderReady = true } else { writeDirectly(connection) }
        }
        if senderReady, let sender { writeDirectly(sender) }
    }

    func writeDirectly(_ connection: Connection) {
        switch connection.lifecycle.direct {
        case .skip: return  // closing, or gone (its wsi may not be touched)
        case .deferToWritable:
            lws_callback_on_writable(connection.wsi.raw)
            return
        case .write: break
        }
        let wsi = connection.wsi.raw
        guard lws_partial_buffered(wsi) == 0, lws_get_network_wsi(wsi) == wsi else {
            lws_callback_on_writable(wsi)
            return
        }
        let next = connection.next(direct: true, bulk: writeTurns.mayWrite(connection))
        if case .deferred = next {
            lws_callback_on_writable(wsi)
        } else if case .overBudget = next {
            writeTurns.wait(connection)
        } else if !write(next, for: connection, to: wsi) {
            // The socket failed (lws marked it unusable); have lws close it on its next pass.
            lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
        }
    }

    func writeable(_ connection: Connection, _ wsi: OpaquePointer) -> Int32 {
        switch connection.lifecycle.writable() {
        case .nothing:
            // Our close frame is on its way (lws waits up to a few seconds for the client's answer), or the peer's
            // close is being answered: no more data.
            return 0
        case let .drainThenClose(code, reason):
            // What is queued goes first (a flooding client's last `rate_limited` replies, a shutting-down
            // server's last acks), one batch per callback; then the close frame.
            let next = connection.next(bulk: writeTurns.take(connection))
            switch next {
            case .one, .write, .fragment:
                guard write(next, for: connection, to: wsi) else { return -1 }
                lws_callback_on_writable(wsi)
                return 0
            case .overBudget:
                writeTurns.wait(connection)
                return 0
            case .idle, .resync, .deferred:
                // Replies of intents the rooms were still carrying out when the close was asked for come first.
                guard connection.closeBarriers == 0 else { return 0 }
                connection.lifecycle.closeSent()
                connection.dropQueued()
                var bytes = Array(reason.utf8.prefix(120))
                lws_close_reason(wsi, lws_close_status(rawValue: UInt32(code)), &bytes, bytes.count)
                return -1
            }
        case .write:
            if connection.keepalive.pingDue { return writePing(connection, wsi) }
        }
        let next = connection.next(bulk: writeTurns.take(connection))
        switch next {
        case .idle:
            return 0
        case .overBudget:
            writeTurns.wait(connection)  // a writable callback comes with its turn
            return 0
        case let .resync(rooms):
            for name in rooms {
                if let room = connection.joined[name]?.room {
                    room.resyncAfterOverflow(connection)
                } else {
                    connection.cancelResync(room: name)  // left the room meanwhile
                }
            }
            return 0
        case .deferred:
            lws_callback_on_writable(wsi)
            return 0
        case .one, .write, .fragment:
            return write(next, for: connection, to: wsi) ? 0 : -1
        }
    }

    /// Writes the frames `next` handed out (one `send()`), asking for another writable callback when more
    /// wait; false when lws could not take them (the connection must close).
    func write(_ next: Outbox.Next, for connection: Connection, to wsi: OpaquePointer) -> Bool {
        switch next {
        case let .one(frame, more):
            guard lws_write(wsi, frame.unsafePayload, frame.count, LWS_WRITE_TEXT) >= frame.count else { return false }
            writeTurns.wrote(by: connection)
            if more { askToWrite(connection, wsi) }
        case let .write(frames, more):
            if frames.count == 1, let frame = frames.first {
                guard lws_write(wsi, frame.unsafePayload, frame.count, LWS_WRITE_TEXT) >= frame.count else { return false }
                writeTurns.wrote(by: connection)
            } else {
                // A backlog: frame each message ourselves and hand them to lws as one write (one send()).
                let (buffer, count) = writeBatch.frame(frames)
                // LWS_WRITE_HTTP is LWS_WRITE_RAW: the bytes as they are.
                guard lws_write(wsi, buffer, count, LWS_WRITE_HTTP) >= count else { return false }
                writeTurns.wrote(by: connection)
            }
            if more { askToWrite(connection, wsi) }
        case let .fragment(frame, offset, count, more):
            // Framed here, written raw like a batch: lws's own pongs and close frames can only come between fragments.
            let (buffer, length) = writeBatch.fragments(frame, offset: offset, count: count)
            guard lws_write(wsi, buffer, length, LWS_WRITE_HTTP) >= length else { return false }
            writeTurns.wrote(by: connection)
            if more { askToWrite(connection, wsi) }
        case .idle, .resync, .deferred, .overBudget:
            break
        }
        return true
    }

    /// Frames wait for `connection` (woken, or more after a write): the next writable callback — or, when that callback
    /// would only find the pass's budget spent and queue the connection for a turn, the place in line at once.
    func askToWrite(_ connection: Connection, _ wsi: OpaquePointer) {
        if writeTurns.isLimiting && connection.outbox.withLock({ $0.nextNeedsTurn }) {
            writeTurns.wait(connection)
        } else {
            lws_callback_on_writable(wsi)
        }
    }
}
