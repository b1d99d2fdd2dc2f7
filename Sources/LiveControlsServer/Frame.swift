import CLibWebSockets
import LiveControlsProtocol

/// One encoded text message, with the `LWS_PRE` headroom libwebsockets needs in front of it.
///
/// Encoded once and shared by every subscriber it goes to. After `init` the payload is never
/// written again; lws writes only the frame header into the headroom, and only on the service
/// thread, one write at a time — so sharing one `Frame` between connections is safe.
final class Frame: @unchecked Sendable {
    static let headroom = Int(SHIM_LWS_PRE)

    /// `headroom` bytes, then the payload.
    let storage: UnsafeMutableRawPointer
    let count: Int
    /// Set for room state (`snapshot`, `resumed`, `patch`): a slow consumer may drop these and get a
    /// fresh snapshot of this room instead. Replies (`ack`, `error`, …) are never dropped.
    let stateOfRoom: String?

    init(bytes: [UInt8], stateOfRoom: String? = nil) {
        count = bytes.count
        self.stateOfRoom = stateOfRoom
        storage = UnsafeMutableRawPointer.allocate(byteCount: Self.headroom + max(count, 1), alignment: 16)
        bytes.withUnsafeBytes { src in
            if let base = src.baseAddress { (storage + Self.headroom).copyMemory(from: base, byteCount: count) }
        }
    }

    convenience init(_ message: ServerMessage) {
        let room: String?
        switch message {
        case let .snapshot(r, _, _, _, _, _), let .resumed(r, _, _, _, _), let .patch(r, _, _, _, _): room = r
        default: room = nil
        }
        self.init(bytes: message.encoded(), stateOfRoom: room)
    }

    deinit { storage.deallocate() }

    /// The payload's first byte; lws may write the header in the `headroom` bytes before it.
    var payload: UnsafeMutablePointer<UInt8> {
        (storage + Self.headroom).assumingMemoryBound(to: UInt8.self)
    }

    var text: String { String(decoding: UnsafeRawBufferPointer(start: payload, count: count), as: UTF8.self) }
}
