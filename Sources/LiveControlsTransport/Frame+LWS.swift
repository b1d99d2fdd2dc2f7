import CLibWebSockets
import LiveControlsRuntime

extension Frame {
    /// Checked once when the server starts: lws writes its frame header into the `LWS_PRE` bytes in front of
    /// the payload, which must fit in the runtime's headroom.
    static let headroomFitsLWS: Bool = Int(SHIM_LWS_PRE) <= Frame.headroom
}
