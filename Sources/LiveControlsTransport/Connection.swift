import CLibWebSockets
import Dispatch
import LiveControlsEngine
import LiveControlsProtocol
import LiveControlsRuntime
import Synchronization

/// The libwebsockets handle of one connection. Only ever used on the service thread.
struct WSI {
    /// `struct lws *`; libwebsockets allows touching it only from the service thread, and every
    /// use of this wrapper is in code that runs there (`LiveControlsServer` callbacks).
    let raw: OpaquePointer
}

/// One WebSocket client: a session in zero or more rooms, and a `RoomSubscriber` of each.
///
/// Thread rules:
/// - `wsi`, `receiveBuffer`, `joined`, `rate`, `lifecycle` and the large-room bookkeeping belong to
///   the lws service thread only (`ServiceThread.assertOn` checks it in debug builds).
/// - `outbox` (the bounded queue, resync bookkeeping) is behind its mutex: room queues append, the service
///   thread drains it in `SERVER_WRITEABLE` or right after a service pass.
final class Connection: RoomSubscriber, @unchecked Sendable {
    let session: SessionID
    let wsi: WSI

    /// Service thread only: bytes of a message still arriving in fragments.
    var receiveBuffer: [UInt8] = []
    /// Service thread only: rooms this connection has joined, and what its session may do in each (one map: a second
    /// one for the grants cost ~0.1 KiB more per joined connection).
    var joined: [String: Membership] = [:]
    /// Service thread only: the message rate limiter.
    var rate: RateLimiter
    /// Service thread only: the drag this connection's intents continue, if any (its frames cost less: `DragPace`).
    var dragPace = DragPace()
    /// Service thread only: where the connection is between open and gone. Read on every write, so (like `socket`) not
    /// checked for exclusive access at run time: the service thread's own (`LiveControlsServer.writeTurns`).
    @exclusivity(unchecked) var lifecycle: ConnectionLifecycle = .open
    /// Service thread only: the `?token=` of the WebSocket URL, used by joins that carry none.
    var urlToken: String?
    /// Service thread only: joined rooms that had more than `LiveControlsServer.inlineIntentLimit` subscribers
    /// when this connection's intent last looked, so its intents there run on the room's queue.
    var largeRooms: Set<String> = []
    /// Service thread only: reading is paused until a room that was behind drains (`pauseReadingIfBehind`).
    var readingPaused: Bool { pausedSince != nil }
    /// Service thread only: when reading was paused (nil: it is not).
    var pausedSince: Instant? = nil
    /// Service thread only: not read while libwebsockets holds part of a write for it (`LiveControlsServer+HeldOutput.swift`).
    var readingHeldForOutput = false
    /// Service thread only: intents this connection sent (a large room is looked at again every 64th).
    var intentsSent = 0
    /// Service thread only: the keepalive's view of this connection (`LiveControlsServer+Keepalive.swift`).
    var keepalive: Keepalive
    /// Service thread only: waiting for a share of a pass's write budget, and holding one (`WriteTurns`).
    var waitingForTurn = false
    var writeTurn = false
    /// Service thread only: rooms whose work queued before this connection's close was asked for is not done yet
    /// (`LiveControlsServer.beginClose`): the close frame waits for the replies it makes.
    var closeBarriers = 0
    /// Service thread only: the socket that framed bytes may be sent to directly (`LiveControlsServer.put`), or -1: a
    /// TLS connection or an HTTP/2 stream, whose bytes only lws may write. Set when the WebSocket opens.
    @exclusivity(unchecked) var socket: Int32 = -1

    let outbox: Mutex<Outbox>

    init(session: SessionID, wsi: WSI, limits: Limits, now: Instant) {
        self.session = session
        self.wsi = wsi
        self.rate = RateLimiter(rate: limits.messagesPerSecond, burst: limits.messageBurst, strikeLimit: limits.rateLimitStrikes, now: now)
        self.outbox = Mutex(Outbox(maxMessages: limits.outboxMessages, maxBytes: limits.outboxBytes))
        self.keepalive = Keepalive(now: now)
    }

    // MARK: RoomSubscriber (any thread)

    func deliver(_ frame: Frame) -> Bool {
        outbox.withLock { $0.enqueue(frame, now: Transport.now()) } == .wake
    }

    func deliverResync(_ frame: Frame, room: String) -> Bool {
        outbox.withLock { $0.enqueueResync(frame, room: room) } == .wake
    }

    func requireResync(room: String) -> Bool {
        outbox.withLock { $0.requireResync(room: room) } == .wake
    }

    func cancelResync(room: String) {
        outbox.withLock { $0.cancelResync(room: room) }
    }

    // MARK: Service thread

    /// What to write now (`Outbox.next`).
    func next(direct: Bool = false, bulk: Bool = true) -> Outbox.Next {
        outbox.withLock { $0.next(now: Transport.now(), direct: direct, bulk: bulk) }
    }

    /// Whether this connection overflowed and then took nothing for longer than the timeout.
    func isStuck(now: Instant, timeoutMilliseconds: Int) -> Bool {
        outbox.withLock { $0.isStuck(now: now, timeoutNanoseconds: UInt64(timeoutMilliseconds) * 1_000_000) }
    }

    /// The socket is gone: drop what is queued and refuse more.
    func markClosed() {
        lifecycle.socketClosed()
        socket = -1
        gone.store(true, ordering: .releasing)
        dropQueued()
    }

    /// lws began closing the connection (`WS_SERVER_DROP_PROTOCOL`): nothing more is written; its intents still waiting for
    /// a room are dropped.
    func libraryClosing() {
        lifecycle.libraryClosed()
        gone.store(true, ordering: .releasing)
    }

    /// Service thread, when a shutdown's grace is over: the rooms drop whatever this connection still has queued
    /// (never acked, so nothing it was told of is lost), instead of applying it before they can stop.
    func abandon() {
        gone.store(true, ordering: .releasing)
    }

    /// The client address this connection counts against (`AddressShares`); nil when it was refused before being
    /// counted. Service thread.
    var countedAddress: String?

    /// Set once a close was asked for, lws began one itself (`libraryClosing`), or the socket closed (service thread); read
    /// by rooms on any thread.
    private let gone = Atomic<Bool>(false)

    /// Whether the connection is closing or closed: rooms drop the intents it left queued (`RoomSubscriber.isGone`).
    var isGone: Bool { gone.load(ordering: .acquiring) }

    /// Service thread: asks for a close with `code` (`LiveControlsServer.beginClose`): false when one is under way. Its
    /// intents still waiting for a room are dropped from now on (never applied, never acked); the outbox is sealed once
    /// the rooms have carried out what was queued before (`seal`), so the patch and ack of an intent a room was applying
    /// still come, in order.
    func requestClose(code: UInt16, reason: String) -> Bool {
        guard lifecycle.requestClose(code: code, reason: reason) else { return false }
        gone.store(true, ordering: .releasing)
        return true
    }

    /// Service thread: nothing new is queued from now on; what is queued goes out, then the close frame.
    func seal() {
        outbox.withLock { $0.seal() }
    }

    /// Our close frame goes out now: what is queued will never be written.
    func dropQueued() {
        outbox.withLock { $0.close() }
    }
}

/// The transport's clock: the same monotonic time rooms use.
enum Transport {
    static func now() -> Instant { Instant(nanoseconds: DispatchTime.now().uptimeNanoseconds) }
}

/// A room a connection has joined, and the grant its session joined (or last re-joined) it with.
struct Membership {
    let room: any RoomEndpoint
    var grant: AuthPolicy.Grant
}
