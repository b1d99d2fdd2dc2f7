import LiveControlsProtocol

/// One encoded text message, with headroom in front of it for a transport's frame header.
///
/// Encoded once and shared by every subscriber it goes to. After `make` the payload is never written
/// again. The `headroom` bytes in front of it belong to the transport: it writes the WebSocket frame header
/// there (itself, or libwebsockets in its `LWS_PRE`, which the transport checks is no larger), only on its
/// service thread and one write at a time, the same bytes for every connection — so sharing one `Frame`
/// between connections is safe. Nothing else reads the headroom.
///
/// The bytes are one plain allocation owned by the frame (the runtime's only pointer code, all of it in this
/// file): a transport reads them once per delivery, and through a stored pointer that costs no reference
/// counting, where an array's storage cost a retain and a release per delivery (docs/benchmarks/HISTORY.md,
/// "Runtime and transport apart").
public final class Frame: @unchecked Sendable {
    /// Bytes reserved in front of the payload (libwebsockets' `LWS_PRE` is 16 on 64-bit systems).
    public static let headroom = 16

    /// `headroom` zero bytes, then the payload; written only by `init` (and the headroom by the transport).
    @usableFromInline let storage: UnsafeMutablePointer<UInt8>
    public let count: Int
    /// Set for room state (`snapshot`, `resumed`, `patch`): a slow consumer may drop these and get a
    /// fresh snapshot of this room instead. Replies (`ack`, `error`, …) are never dropped.
    public let stateOfRoom: String?
    /// For room state: the epoch and version it shows (cluster replies carry them in their envelope).
    public let stateVersion: (epoch: String, version: Int)?
    /// Room state sent to more than `inlineSubscriberLimit` subscribers: a transport with more to write than it can
    /// in one go writes other frames first (a quiet room's ack does not wait behind a crowd's fan-out).
    public let toMany: Bool
    /// Set for a `broadcast` of this room: not state, and not a reply — a slow consumer drops it (no snapshot makes up
    /// for it), and so does a subscriber waiting for the room's fresh snapshot (it would come before the patches the
    /// snapshot carries).
    public let ephemeralOfRoom: String?

    private init<Bytes: Collection<UInt8>>(bytes: Bytes, stateOfRoom: String?, stateVersion: (epoch: String, version: Int)?, toMany: Bool,
                                           ephemeralOfRoom: String? = nil) {
        let count = bytes.count
        self.count = count
        self.stateOfRoom = stateOfRoom
        self.ephemeralOfRoom = ephemeralOfRoom
        self.stateVersion = stateVersion
        self.toMany = toMany
        storage = .allocate(capacity: Self.headroom + max(count, 1))
        storage.initialize(repeating: 0, count: Self.headroom)
        let payload = UnsafeMutableBufferPointer(start: storage + Self.headroom, count: count)
        let copied = bytes.withContiguousStorageIfAvailable { source -> Bool in
            guard let from = source.baseAddress, let to = payload.baseAddress else { return true }  // nothing to copy
            to.initialize(from: from, count: source.count)
            return true
        }
        if copied == nil { _ = payload.initialize(from: bytes) }
    }

    deinit { storage.deallocate() }

    /// A frame of `bytes` (room state when `stateOfRoom` is set).
    public static func make<Bytes: Collection<UInt8>>(bytes: Bytes, stateOfRoom: String? = nil,
                                                      stateVersion: (epoch: String, version: Int)? = nil, toMany: Bool = false) -> Frame {
        Frame(bytes: bytes, stateOfRoom: stateOfRoom, stateVersion: stateVersion, toMany: toMany && stateOfRoom != nil)
    }

    /// A broadcast of `room` (`ephemeralOfRoom`); `toMany` as for state, when it goes to a crowd.
    public static func broadcast<Bytes: Collection<UInt8>>(bytes: Bytes, room: String, toMany: Bool = false) -> Frame {
        Frame(bytes: bytes, stateOfRoom: nil, stateVersion: nil, toMany: toMany, ephemeralOfRoom: room)
    }

    /// The message, encoded once (`toMany`: room state for more than `inlineSubscriberLimit` subscribers).
    public static func make(_ message: ServerMessage, toMany: Bool = false) -> Frame {
        switch message {
        case let .snapshot(room, epoch, version, _, _, _), let .resumed(room, epoch, _, version, _), let .patch(room, epoch, version, _, _):
            return make(bytes: message.encoded(), stateOfRoom: room, stateVersion: (epoch, version), toMany: toMany)
        default:
            return make(bytes: message.encoded())
        }
    }

    /// For a transport, on the one thread that writes frames out: the payload's first byte. The `headroom`
    /// bytes before it may be written (a frame header); nothing else may be, and the pointer is valid only
    /// while the frame is.
    @inlinable public var unsafePayload: UnsafeMutablePointer<UInt8> { storage + Frame.headroom }

    /// The payload, for as long as `body` runs.
    public func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: storage + Self.headroom, count: count))
    }

    /// A copy of the payload.
    public var bytes: [UInt8] { Array(UnsafeBufferPointer(start: storage + Self.headroom, count: count)) }

    public var text: String { String(decoding: UnsafeBufferPointer(start: storage + Self.headroom, count: count), as: UTF8.self) }
}
