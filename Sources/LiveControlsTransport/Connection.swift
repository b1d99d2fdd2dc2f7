import CLibWebSockets
import Dispatch
import LiveControlsEngine
import LiveControlsProtocol
import LiveControlsRuntime
import Synchronization

/// The libwebsockets handle of one connection. Only ever used on the service thread.
struct WSI: @unchecked Sendable {
    /// `struct lws *`; libwebsockets allows touching it only from the service thread, and every
    /// use of this wrapper is in code that runs there (`LiveControlsServer` callbacks).
    let raw: OpaquePointer
}

/// One WebSocket client: a session in zero or more rooms.
///
/// Thread rules:
/// - `wsi`, `receiveBuffer`, `joined` and `rate` belong to the lws service thread only.
/// - `state` (the bounded outbox, resync bookkeeping, close request) is guarded by its mutex:
///   room queues append, the service thread drains it in `SERVER_WRITEABLE`.
final class Connection: RoomSubscriber, @unchecked Sendable {
    let session: SessionID
    let wsi: WSI
    private let limits: Limits

    /// Service thread only: bytes of a message still arriving in fragments.
    var receiveBuffer: [UInt8] = []
    /// Service thread only: rooms this connection has joined.
    var joined: [String: any RoomEndpoint] = [:]
    /// Service thread only: the intent rate limiter.
    var rate: TokenBucket
    /// Service thread only: the `?token=` of the WebSocket URL, used by joins that carry none.
    var urlToken: String?
    /// Service thread only: what this session may do in each joined room.
    var grants: [String: AuthPolicy.Grant] = [:]
    /// Service thread only: joined rooms that had more than 128 subscribers
    /// when this connection's intent last looked, so its intents there run on the room's queue
    /// (`RoomRuntime.intent`).
    var largeRooms: Set<String> = []
    /// Service thread only: intents this connection sent (a large room is looked at again every 64th).
    var intentsSent = 0
    /// Service thread only: the client sent a close frame; lws answers it, nothing else may be written.
    var peerClosing = false
    /// Service thread only: lws closed the connection (`CLOSED`); its `wsi` is gone.
    var socketGone = false
    /// Service thread only: the server sent (or is sending) its close frame: nothing more may be written.
    var closing = false

    struct Outbox {
        var frames: [Frame] = []
        var head = 0
        var bytes = 0
        /// A wake-up for this connection is pending with the server (avoids waking it twice).
        var writeScheduled = false
        /// Rooms whose state frames were dropped: their patches are dropped too until a fresh snapshot
        /// is queued. `true` once the snapshot has been asked of the room.
        var resync: [String: Bool] = [:]
        /// When the outbox first overflowed, while it has not caught up.
        var overflowedAt: DispatchTime? = nil
        /// When a frame was last handed to lws: a slow consumer that still makes progress is not stuck.
        var lastWrite: DispatchTime = .now()
        /// Close with this code once the service thread gets to it.
        var closeRequest: (code: UInt16, reason: String)? = nil
        /// Closed: anything enqueued from now on is dropped.
        var closed = false

        var queued: Int { frames.count - head }
    }
    let state = Mutex(Outbox())

    init(session: SessionID, wsi: WSI, limits: Limits) {
        self.session = session
        self.wsi = wsi
        self.limits = limits
        self.rate = TokenBucket(rate: limits.messagesPerSecond, burst: limits.messageBurst)
    }

    /// Appends a frame; returns true when the caller must ask the server to wake this connection.
    ///
    /// A queue past its limits drops every queued room-state frame (keeping replies) and marks those
    /// rooms for a fresh snapshot once the client has caught up: never a gap, never unbounded memory.
    func deliver(_ frame: Frame) -> Bool {
        state.withLock { box in
            guard !box.closed else { return false }
            if !box.resync.isEmpty, let room = frame.stateOfRoom, box.resync[room] != nil { return false }
            box.frames.append(frame)
            box.bytes += frame.count
            if box.queued > limits.outboxMessages || box.bytes > limits.outboxBytes {
                overflow(&box)
            }
            return schedule(&box)
        }
    }

    /// Queues the fresh snapshot of a room that was being resynced, ending its resync.
    func deliverResync(_ frame: Frame, room: String) -> Bool {
        state.withLock { box in
            guard !box.closed, box.resync.removeValue(forKey: room) != nil else { return false }
            box.frames.append(frame)
            box.bytes += frame.count
            return schedule(&box)
        }
    }

    /// Cluster mode: this connection missed room state (a gap in what Redis delivered, or a new epoch).
    /// Its state frames of `room` are dropped from now on until a fresh snapshot is queued with
    /// `deliverResync`; the service thread asks the room for one once the outbox has drained (as after an
    /// overflow). Returns true when the caller must wake the connection.
    func requireResync(room: String) -> Bool {
        state.withLock { box in
            guard !box.closed, box.resync[room] == nil else { return false }
            box.resync[room] = false
            return schedule(&box)
        }
    }

    /// Forgets a pending resync (the room was left).
    func cancelResync(room: String) {
        state.withLock { _ = $0.resync.removeValue(forKey: room) }
    }

    private func overflow(_ box: inout Outbox) {
        var kept: [Frame] = []
        for frame in box.frames[box.head...] {
            if let room = frame.stateOfRoom {
                box.resync[room] = box.resync[room] ?? false
            } else {
                kept.append(frame)
            }
        }
        box.frames = kept
        box.head = 0
        box.bytes = kept.reduce(0) { $0 + $1.count }
        if box.overflowedAt == nil { box.overflowedAt = .now() }
    }

    private func schedule(_ box: inout Outbox) -> Bool {
        if box.writeScheduled { return false }
        box.writeScheduled = true
        return true
    }

    /// Asks for the connection to be closed with `code`; returns true when a wake is needed.
    func requestClose(code: UInt16, reason: String) -> Bool {
        state.withLock { box in
            guard !box.closed, box.closeRequest == nil else { return false }
            box.closeRequest = (code, reason)
            return schedule(&box)
        }
    }

    enum Next {
        /// The one frame to write now (the usual case: nothing else was queued), and whether more wait.
        case one(Frame, more: Bool)
        /// Frames to write now, in order (a backlog built up), and whether more wait.
        case write(ArraySlice<Frame>, more: Bool)
        case close(code: UInt16, reason: String)
        /// Caught up, but these rooms need a fresh snapshot.
        case resync([String])
        case idle
        /// Only when asked for a direct write: a close or a resync is due, which needs the writable
        /// callback (nothing was taken).
        case deferred
    }

    /// Service thread: what to do in this `SERVER_WRITEABLE`: up to `maxFrames` queued frames of at most
    /// `maxBytes` together (always at least one), so a backlog leaves in few writes. With `direct`, the
    /// caller writes outside the connection's own writable callback and can only write frames: a due
    /// close or resync answers `.deferred` and is left for that callback.
    func next(direct: Bool = false, maxFrames: Int = 64, maxBytes: Int = 128 * 1024) -> Next {
        state.withLock { box in
            if direct && (box.closeRequest != nil || (box.head == box.frames.count && box.resync.contains { !$0.value })) {
                return .deferred
            }
            if let close = box.closeRequest {
                box.frames.removeAll()
                box.head = 0
                box.bytes = 0
                return .close(code: close.code, reason: close.reason)
            }
            guard box.head < box.frames.count else {
                box.frames.removeAll(keepingCapacity: true)
                box.head = 0
                box.bytes = 0
                box.writeScheduled = false
                let toAsk = box.resync.filter { !$0.value }.map(\.key)
                if box.resync.isEmpty { box.overflowedAt = nil }
                guard !toAsk.isEmpty else { return .idle }
                for room in toAsk { box.resync[room] = true }
                return .resync(toAsk)
            }
            if box.head + 1 == box.frames.count {
                // The usual case: exactly one frame waits. No slice, no batch.
                let frame = box.frames[box.head]
                if box.overflowedAt != nil { box.lastWrite = .now() }
                if box.resync.isEmpty {
                    // Drained: the next enqueue must wake the service thread again.
                    box.frames.removeAll(keepingCapacity: true)
                    box.head = 0
                    box.bytes = 0
                    box.writeScheduled = false
                    box.overflowedAt = nil
                    return .one(frame, more: false)
                }
                box.head += 1
                box.bytes -= frame.count
                return .one(frame, more: true)
            }
            let first = box.head
            var bytes = 0
            while box.head < box.frames.count, box.head - first < maxFrames,
                  box.head == first || bytes + box.frames[box.head].count <= maxBytes {
                bytes += box.frames[box.head].count
                box.head += 1
            }
            let batch = box.frames[first..<box.head]
            if box.overflowedAt != nil { box.lastWrite = .now() }
            box.bytes -= bytes
            if box.head >= 64 && box.head * 2 >= box.frames.count {
                box.frames.removeFirst(box.head)
                box.head = 0
            }
            let more = box.head < box.frames.count
            if !more && box.resync.isEmpty {
                // Drained: the next enqueue must wake the service thread again.
                box.frames.removeAll(keepingCapacity: true)
                box.head = 0
                box.writeScheduled = false
                box.overflowedAt = nil
            }
            return .write(batch, more: more || !box.resync.isEmpty)
        }
    }

    /// Service thread: whether this connection overflowed and then took nothing for longer than `timeout`.
    func isStuck(now: DispatchTime, timeoutMilliseconds: Int) -> Bool {
        state.withLock { box in
            guard let overflowed = box.overflowedAt else { return false }
            let since = max(overflowed.uptimeNanoseconds, box.lastWrite.uptimeNanoseconds)
            return now.uptimeNanoseconds > since + UInt64(timeoutMilliseconds) * 1_000_000
        }
    }

    /// Service thread: the socket is gone; drop what is queued and refuse more.
    func markClosed() {
        state.withLock { box in
            box.closed = true
            box.frames.removeAll()
            box.head = 0
            box.bytes = 0
        }
    }
}

/// A token bucket: `burst` tokens, refilled at `rate` per second; one message costs one token.
struct TokenBucket {
    let rate: Double
    let burst: Double
    private var tokens: Double
    private var last: UInt64 = DispatchTime.now().uptimeNanoseconds
    /// Consecutive refusals.
    private(set) var strikes = 0

    init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = burst
        self.tokens = burst
    }

    mutating func take(now: UInt64 = DispatchTime.now().uptimeNanoseconds) -> Bool {
        tokens = min(burst, tokens + Double(now &- last) / 1e9 * rate)
        last = now
        if tokens >= 1 {
            tokens -= 1
            strikes = 0
            return true
        }
        strikes += 1
        return false
    }
}
