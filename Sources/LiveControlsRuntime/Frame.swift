import LiveControlsProtocol

/// One encoded text message, with headroom in front of it for a transport's frame header.
///
/// Encoded once and shared by every subscriber it goes to. After `init` the payload is never written
/// again. The `headroom` bytes in front of it belong to the transport: libwebsockets writes the WebSocket
/// frame header there (`LWS_PRE`, which the transport checks is no larger), only on its service thread
/// and one write at a time — so sharing one `Frame` between connections is safe. Nothing in Swift reads
/// the headroom.
public final class Frame: Sendable {
    /// Bytes reserved in front of the payload (libwebsockets' `LWS_PRE` is 16 on 64-bit systems).
    public static let headroom = 16

    /// `headroom` zero bytes, then the payload.
    public let storage: ContiguousArray<UInt8>
    public let count: Int
    /// Set for room state (`snapshot`, `resumed`, `patch`): a slow consumer may drop these and get a
    /// fresh snapshot of this room instead. Replies (`ack`, `error`, …) are never dropped.
    public let stateOfRoom: String?
    /// For room state: the epoch and version it shows (cluster replies carry them in their envelope).
    public let stateVersion: (epoch: String, version: Int)?

    public init<Bytes: Collection<UInt8>>(bytes: Bytes, stateOfRoom: String? = nil, stateVersion: (epoch: String, version: Int)? = nil) {
        var storage = ContiguousArray<UInt8>()
        storage.reserveCapacity(Self.headroom + bytes.count)
        storage.append(contentsOf: repeatElement(0, count: Self.headroom))
        storage.append(contentsOf: bytes)
        self.storage = storage
        self.count = storage.count - Self.headroom
        self.stateOfRoom = stateOfRoom
        self.stateVersion = stateVersion
    }

    public convenience init(_ message: ServerMessage) {
        switch message {
        case let .snapshot(room, epoch, version, _, _, _), let .resumed(room, epoch, _, version, _), let .patch(room, epoch, version, _, _):
            self.init(bytes: message.encoded(), stateOfRoom: room, stateVersion: (epoch, version))
        default:
            self.init(bytes: message.encoded())
        }
    }

    /// The payload.
    public var bytes: ArraySlice<UInt8> { storage[Self.headroom...] }

    public var text: String { String(decoding: bytes, as: UTF8.self) }
}
