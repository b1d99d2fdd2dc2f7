import CLibWebSockets

/// No reading while libwebsockets holds part of a write. When a socket takes less than a write, lws keeps the rest and
/// sends it first once the socket can take more. lws 4.1 then must not read that connection's end: a read of the
/// peer's FIN (or reset) closes it, the close waits for the rest to be flushed, and lws's service loop gives the same
/// socket the same event again, for good — one service pass that never ends, every client of the server stalled, a
/// SIGTERM too (`_lws_plat_service_forced_tsi` retries a slot whose close "happened"; found when 3,000 clients of a
/// flooded room exited at once, and reproduced by one client that half-closes while a write waits for it:
/// Tests/integration/test_partial_writes.py). So after a write lws did not finish, the connection is not read (its own
/// rx flow-control reason, apart from a full room's `pauseReadingIfBehind`) until lws has sent the rest: its next
/// writable callback, which lws gives only once it holds nothing: proof that the peer reads, which the keepalive counts
/// as hearing from it (a client kept behind by a busy room is read only as it catches up, and its pongs with it). A
/// peer that never reads again is closed by the idle timeout (or the slow-consumer timeout, once its outbox is full),
/// or by the sweep once it has closed its end (`sweepPausedConnections`).
extension LiveControlsServer {
    /// Our bit in lws's rx flow-control bitmap (`LWS_RXFLOW_REASON_USER_BOOL` is the room's pause).
    static let heldOutputReason = Int32(1 << 1)

    /// Service thread, after a write: when lws kept part of it, stop reading until it has gone.
    func holdReadingIfBuffered(_ connection: Connection, _ wsi: OpaquePointer) {
        serviceThread.assertOn()
        guard !connection.readingHeldForOutput, lws_partial_buffered(wsi) != 0 else { return }
        connection.readingHeldForOutput = true
        lws_rx_flow_control(wsi, Int32(LWS_RXFLOW_REASON_APPLIES_DISABLE) | Self.heldOutputReason)
        lws_callback_on_writable(wsi)  // the callback that comes once the rest has gone reads again
    }

    /// Service thread, in a writable callback (lws holds nothing then): reads again.
    func releaseHeldReading(_ connection: Connection, _ wsi: OpaquePointer) {
        guard connection.readingHeldForOutput, lws_partial_buffered(wsi) == 0 else { return }
        connection.readingHeldForOutput = false
        connection.keepalive.heard = true  // it took all we held: alive
        lws_rx_flow_control(wsi, Int32(LWS_RXFLOW_REASON_APPLIES_ENABLE) | Self.heldOutputReason)
    }
}
