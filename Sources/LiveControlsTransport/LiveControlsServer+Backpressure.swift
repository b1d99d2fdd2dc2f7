import CLibWebSockets
import LiveControlsEngine
import LiveControlsRuntime
#if canImport(Glibc)
import Glibc
#endif

/// Backpressure on incoming intents. When a client's intent finds its room's queue full (`--room-queue` intents wait),
/// the transport stops reading from that client until the room has drained to half (`lws_rx_flow_control`): its next
/// messages wait in its socket, and TCP makes its sends wait in turn, instead of each costing the service thread a
/// read, a decode and an `overloaded` reply. So a room flooded by thousands of clients does not fill every pass of
/// the service thread, and clients of other rooms keep getting answers.
///
/// A paused connection is not read, so neither its pongs nor its close are seen: the keepalive counts it as heard,
/// the sweep closes one whose peer has gone (its socket in `CLOSE_WAIT`: what it sent, unread, is dropped, as a closed
/// connection's queued intents are) and reads one that is closing again, as a shutdown does for all, so closes
/// complete. A FIN stuck behind data the server has not read is only seen once the pause ends (5 s at most).
/// Cluster mode forwards intents to the room's owner: there `whenQueueDrains` is false and nothing pauses.
extension LiveControlsServer {
    /// Service thread, after an intent went to `room`'s queue: pauses reading when that queue is full.
    func pauseReadingIfBehind(_ connection: Connection, _ room: any RoomEndpoint) {
        let hub = self.hub
        let paused = room.whenQueueDrains { [weak connection] in
            let waiting = connection
            hub.perform { [weak self] in
                guard let self, let connection = waiting else { return }
                self.resumeReading(connection)
            }
        }
        guard paused else { return }
        connection.pausedSince = Transport.now()
        lws_rx_flow_control(connection.wsi.raw, 0)
    }

    /// Service thread: reads from a paused connection again (or closes it when its peer has gone meanwhile).
    func resumeReading(_ connection: Connection) {
        guard connection.readingPaused, !connection.lifecycle.isGone else { return }
        connection.pausedSince = nil
        if dropIfPeerClosed(connection) { return }
        lws_rx_flow_control(connection.wsi.raw, 1)
    }

    /// Service thread, once a second: paused connections whose peer has closed are closed now; one paused for
    /// `longestPause` is read again whatever its room says (a room that stopped never tells; a room still full
    /// pauses it again at its next message).
    func sweepPausedConnections(now: Instant) {
        for connection in connections.values where !connection.lifecycle.isGone {
            if connection.readingHeldForOutput, !connection.readingPaused {
                _ = dropIfPeerClosed(connection)  // not read until lws has sent the rest of a write (`+HeldOutput`)
                continue
            }
            guard let since = connection.pausedSince else { continue }
            if dropIfPeerClosed(connection) { continue }
            // Closing (a close of ours or the peer's): read again, so the close handshake can complete.
            if !connection.lifecycle.isOpen { resumeReading(connection); continue }
            if now >= since.adding(milliseconds: Self.longestPauseMilliseconds) { resumeReading(connection) }
        }
    }

    static let longestPauseMilliseconds = 5_000

    /// Service thread, as a shutdown begins: every paused connection is read again, so it sees its close frame.
    func resumeAllReading() {
        for connection in connections.values where connection.readingPaused { resumeReading(connection) }
    }

    /// The peer sent its FIN (TCP `CLOSE_WAIT`), which a paused connection does not read: close it without reading
    /// what it sent before. True when it was closed.
    private func dropIfPeerClosed(_ connection: Connection) -> Bool {
        let fd = lws_get_socket_fd(connection.wsi.raw)
        var info = tcp_info()
        var length = socklen_t(MemoryLayout<tcp_info>.size)
        guard fd >= 0, getsockopt(fd, Int32(IPPROTO_TCP), TCP_INFO, &info, &length) == 0,
              info.tcpi_state == UInt8(TCP_CLOSE_WAIT) else { return false }
        connection.pausedSince = nil
        dropNow(connection)  // its peer has gone: no close frame to exchange
        return true
    }
}
