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
    /// For room state: the epoch and version it shows (cluster replies carry them in their envelope).
    let stateVersion: (epoch: String, version: Int)?

    init<Bytes: Collection<UInt8>>(bytes: Bytes, stateOfRoom: String? = nil, stateVersion: (epoch: String, version: Int)? = nil) {
        count = bytes.count
        self.stateOfRoom = stateOfRoom
        self.stateVersion = stateVersion
        storage = UnsafeMutableRawPointer.allocate(byteCount: Self.headroom + max(count, 1), alignment: 16)
        let target = UnsafeMutableRawBufferPointer(start: storage + Self.headroom, count: count)
        if bytes.withContiguousStorageIfAvailable({ target.copyMemory(from: UnsafeRawBufferPointer($0)) }) == nil {
            _ = target.initializeMemory(as: UInt8.self, from: bytes)
        }
    }

    convenience init(_ message: ServerMessage) {
        switch message {
        case let .snapshot(room, epoch, version, _, _, _), let .resumed(room, epoch, _, version, _), let .patch(room, epoch, version, _, _):
            self.init(bytes: message.encoded(), stateOfRoom: room, stateVersion: (epoch, version))
        default:
            self.init(bytes: message.encoded())
        }
    }

    deinit { storage.deallocate() }

    /// The payload's first byte; lws may write the header in the `headroom` bytes before it.
    var payload: UnsafeMutablePointer<UInt8> {
        (storage + Self.headroom).assumingMemoryBound(to: UInt8.self)
    }

    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: payload, count: count) }

    var text: String { String(decoding: UnsafeRawBufferPointer(start: payload, count: count), as: UTF8.self) }
}
