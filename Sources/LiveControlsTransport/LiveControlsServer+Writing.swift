import CLibWebSockets
#if canImport(Glibc)
import Glibc
#endif
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
        if draining { lastSealAt = .now() }
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
        releaseHeldReading(connection, wsi)
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
    /// wait; false when the socket failed (the connection must close).
    func write(_ next: Outbox.Next, for connection: Connection, to wsi: OpaquePointer) -> Bool {
        switch next {
        case let .one(frame, more):
            guard writeOne(frame, for: connection, to: wsi) else { return false }
            writeTurns.wrote(by: connection)
            if more { askToWrite(connection, wsi) }
        case let .write(frames, more):
            if frames.count == 1, let frame = frames.first {
                guard writeOne(frame, for: connection, to: wsi) else { return false }
            } else {
                // A backlog: frame each message ourselves and write them as one (one send()).
                let (buffer, count) = writeBatch.frame(frames)
                guard put(buffer, count, for: connection, to: wsi) else { return false }
            }
            writeTurns.wrote(by: connection)
            if more { askToWrite(connection, wsi) }
        case let .fragment(frame, offset, count, more):
            // Framed here, written raw like a batch: lws's own pongs and close frames can only come between fragments.
            let (buffer, length) = writeBatch.fragments(frame, offset: offset, count: count)
            guard put(buffer, length, for: connection, to: wsi) else { return false }
            writeTurns.wrote(by: connection)
            if more { askToWrite(connection, wsi) }
        case .idle, .resync, .deferred, .overBudget:
            break
        }
        return true
    }

    /// One whole message. On a socket of its own, framed in the frame's headroom (the same header for every connection
    /// it goes to; one write at a time, on this thread) and sent; otherwise lws frames it there.
    private func writeOne(_ frame: Frame, for connection: Connection, to wsi: OpaquePointer) -> Bool {
        let payload = frame.unsafePayload
        guard connection.socket >= 0 else {
            defer { holdReadingIfBuffered(connection, wsi) }
            return lws_write(wsi, payload, frame.count, LWS_WRITE_TEXT) >= frame.count
        }
        let start = payload - FrameHeader.length(payload: frame.count)
        _ = FrameHeader.write(at: start, first: 0x81, count: frame.count)
        return put(start, payload + frame.count - start, for: connection, to: wsi)
    }

    /// Writes framed bytes. On a plain TCP socket of its own (`Connection.socket`) with nothing of lws's waiting to go
    /// first, with one `send()`: lws's write path costs ~550 instructions a call in Debian's build (docs/benchmarks/HISTORY.md,
    /// "Stop 37"). What the socket does not take at once is handed to lws, which keeps it and sends it before anything
    /// else of this connection's (its pongs, and the close frame of a close we asked for) when the socket can take more —
    /// the same as when lws's own write is partial (docs/ARCHITECTURE.md, "Writing"). A TLS connection or an HTTP/2 stream is always written through lws.
    ///
    /// One `put` per callback or direct write: when lws already holds data, `lws_issue_raw` answers with the length of
    /// *its* oldest piece, not ours, so a second write in the same turn could read as a failed one. Each caller makes
    /// one write and, for more, asks for the next writable callback (which lws gives only once it holds nothing).
    func put(_ bytes: UnsafeMutablePointer<UInt8>, _ count: Int, for connection: Connection, to wsi: OpaquePointer) -> Bool {
        guard connection.socket >= 0, lws_partial_buffered(wsi) == 0 else {
            // LWS_WRITE_HTTP is LWS_WRITE_RAW: the bytes as they are.
            defer { holdReadingIfBuffered(connection, wsi) }
            return lws_write(wsi, bytes, count, LWS_WRITE_HTTP) >= count
        }
        var sent = Glibc.send(connection.socket, bytes, count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
        if sent == count { return true }
        if sent < 0 {
            guard errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else { return false }
            sent = 0
        }
        defer { holdReadingIfBuffered(connection, wsi) }
        return lws_write(wsi, bytes + sent, count - sent, LWS_WRITE_HTTP) >= count - sent
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
