import CLibWebSockets
import LiveControlsEngine
import LiveControlsRuntime

/// What the keepalive knows of one connection: when it was last heard from, and whether a ping is on its way.
///
/// Any message or pong from the client counts (lws answers a client's ping itself and reports no empty pong).
/// Receiving only sets `heard`, a store; the once-a-second sweep turns it into a time, so the per-frame cost is nothing
/// and the per-connection cost is one visit a second — where libwebsockets' own keepalive re-sorted a list of every
/// connection's timer on each pong.
struct Keepalive {
    enum Action { case none, ping, drop }

    /// Set when a frame arrives; read and cleared by the sweep.
    var heard = false
    /// When the sweep last saw `heard` (or when the connection opened).
    var lastHeard: Instant
    /// A ping is waiting for the next writable callback.
    var pingDue = false
    /// When a ping went out since the connection was last heard from (nil: none did).
    var pingedAt: Instant?
    /// When the sweep first saw the connection closing (ours asked for, or the peer's): nil while it is open.
    var closingSince: Instant?

    init(now: Instant) { lastHeard = now }

    /// The sweep's decision at `now`: ping a connection silent for `pingInterval`; drop one silent for `idleTimeout`
    /// whose ping went out at least `idleTimeout − pingInterval` before (so a late sweep never drops a connection
    /// it did not give that long to answer).
    mutating func sweep(now: Instant, pingIntervalMilliseconds: Int, idleTimeoutMilliseconds: Int) -> Action {
        if heard {
            heard = false
            lastHeard = now
            pingedAt = nil
            pingDue = false
            return .none
        }
        guard let pingedAt else {
            guard now >= lastHeard.adding(milliseconds: pingIntervalMilliseconds) else { return .none }
            self.pingedAt = now
            pingDue = true
            return .ping
        }
        let silentTooLong = now >= lastHeard.adding(milliseconds: idleTimeoutMilliseconds)
        let hadTimeToAnswer = now >= pingedAt.adding(milliseconds: idleTimeoutMilliseconds - pingIntervalMilliseconds)
        return silentTooLong && hadTimeToAnswer ? .drop : .none
    }

    /// The sweep's decision for a connection whose close has begun: lws bounds its own close handshakes, but not
    /// a close we asked for (its frame waits behind queued data a peer may never read) nor a peer's close it is
    /// still answering. Such a connection is dropped once it has been closing for `idleTimeout`.
    mutating func sweepClosing(now: Instant, idleTimeoutMilliseconds: Int) -> Action {
        guard let closingSince else {
            closingSince = now
            return .none
        }
        return now >= closingSince.adding(milliseconds: idleTimeoutMilliseconds) ? .drop : .none
    }
}

extension LiveControlsServer {
    /// Service thread, once a second: pings connections silent for `--ping-interval`, drops those silent for
    /// `--idle-timeout` (their socket is closed; they sent nothing, so nothing of theirs is lost).
    func sweepKeepalive(now: Instant) {
        let pingInterval = options.limits.pingIntervalSeconds * 1000, idleTimeout = options.limits.idleTimeoutSeconds * 1000
        for connection in connections.values where !connection.lifecycle.isGone {
            let open = connection.lifecycle.isOpen
            // Not read from on purpose (its room is behind): its silence is ours, not its own.
            if connection.readingPaused { connection.keepalive.heard = true }
            let action = open
                ? connection.keepalive.sweep(now: now, pingIntervalMilliseconds: pingInterval, idleTimeoutMilliseconds: idleTimeout)
                : connection.keepalive.sweepClosing(now: now, idleTimeoutMilliseconds: idleTimeout)
            switch action {
            case .none:
                break
            case .ping:
                lws_callback_on_writable(connection.wsi.raw)
            case .drop:
                logger.info(open ? "dropping a connection silent past the idle timeout" : "dropping a connection still closing after the idle timeout",
                            metadata: ["session": "\(connection.session)", "idleTimeout": "\(options.limits.idleTimeoutSeconds) s"])
                dropNow(connection)
            }
        }
    }

    /// `SERVER_WRITEABLE` with a ping due: the ping goes alone in this callback (one `lws_write` per callback), and
    /// another callback is asked for whatever else waits. The ping carries a payload: libwebsockets 4.1 does not
    /// report an empty pong (`RECEIVE_PONG`), and the pong echoes the ping's payload.
    func writePing(_ connection: Connection, _ wsi: OpaquePointer) -> Int32 {
        connection.keepalive.pingDue = false
        let payload = Array("livecontrols".utf8)
        var buffer = [UInt8](repeating: 0, count: Int(SHIM_LWS_PRE)) + payload
        let written = buffer.withUnsafeMutableBufferPointer {
            lws_write(wsi, $0.baseAddress! + Int(SHIM_LWS_PRE), payload.count, LWS_WRITE_PING)
        }
        guard written >= 0 else { return -1 }
        holdReadingIfBuffered(connection, wsi)
        lws_callback_on_writable(wsi)
        return 0
    }
}

extension LiveControlsServer {
    /// Service thread: ends a connection at once, without a close frame (its client sees 1006): what is queued for it
    /// is dropped and lws closes the socket on its next pass.
    func dropNow(_ connection: Connection) {
        _ = connection.lifecycle.closeNow(code: 1006)
        connection.dropQueued()
        lws_set_timeout(connection.wsi.raw, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
    }
}
