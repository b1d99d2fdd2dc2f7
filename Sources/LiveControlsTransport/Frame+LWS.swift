import CLibWebSockets
import LiveControlsRuntime

extension Frame {
    /// Checked once when the server starts: lws writes its frame header into the `LWS_PRE` bytes in front of
    /// the payload, which must fit in the runtime's headroom.
    static let headroomFitsLWS: Bool = Int(SHIM_LWS_PRE) <= Frame.headroom

    /// Service thread: `body` gets the payload's first byte, for `lws_write`, which writes the frame header
    /// into the headroom in front of it (nothing else reads those bytes; one write at a time, on this thread).
    func withLWSPayload<R>(_ body: (UnsafeMutablePointer<UInt8>) -> R) -> R {
        body(unsafePayload)
    }
}
