import CLibWebSockets
import LiveControlsEngine
import LiveControlsProtocol
import Synchronization

/// The libwebsockets handle of one connection. Only ever used on the service thread.
struct WSI: @unchecked Sendable {
    /// `struct lws *`; libwebsockets allows touching it only from the service thread, and every
    /// use of this wrapper is in code that runs there (`LWSServer` callbacks).
    let raw: OpaquePointer
}

/// One WebSocket client: a session in zero or more rooms.
///
/// Thread rules:
/// - `wsi`, `receiveBuffer` and `joined` belong to the lws service thread only.
/// - `state` (outbox, close request) is guarded by its mutex: room queues append, the service
///   thread drains it in `SERVER_WRITEABLE`.
final class Connection: @unchecked Sendable {
    let session: SessionID
    let wsi: WSI

    /// Service thread only: bytes of a message still arriving in fragments.
    var receiveBuffer: [UInt8] = []
    /// Service thread only: rooms this connection has joined.
    var joined: [String: RoomRuntime] = [:]

    struct Outbox {
        var frames: [Frame] = []
        var head = 0
        /// A wake-up for this connection is pending with the server (avoids waking it twice).
        var writeScheduled = false
        /// Close with this code once the service thread gets to it.
        var closeRequest: (code: UInt16, reason: String)? = nil
        /// Closed: anything enqueued from now on is dropped.
        var closed = false
    }
    let state = Mutex(Outbox())

    init(session: SessionID, wsi: WSI) {
        self.session = session
        self.wsi = wsi
    }

    /// Appends a frame; returns true when the caller must ask the server to wake this connection.
    func enqueue(_ frame: Frame) -> Bool {
        state.withLock { box in
            guard !box.closed else { return false }
            box.frames.append(frame)
            if box.writeScheduled { return false }
            box.writeScheduled = true
            return true
        }
    }

    /// Asks for the connection to be closed with `code`; returns true when a wake is needed.
    func requestClose(code: UInt16, reason: String) -> Bool {
        state.withLock { box in
            guard !box.closed, box.closeRequest == nil else { return false }
            box.closeRequest = (code, reason)
            if box.writeScheduled { return false }
            box.writeScheduled = true
            return true
        }
    }

    enum Next {
        case write(Frame, more: Bool)
        case close(code: UInt16, reason: String)
        case idle
    }

    /// Service thread: what to do in this `SERVER_WRITEABLE`.
    func next() -> Next {
        state.withLock { box in
            if let close = box.closeRequest {
                box.frames.removeAll()
                box.head = 0
                return .close(code: close.code, reason: close.reason)
            }
            guard box.head < box.frames.count else {
                box.frames.removeAll(keepingCapacity: true)
                box.head = 0
                box.writeScheduled = false
                return .idle
            }
            let frame = box.frames[box.head]
            box.head += 1
            if box.head >= 64 && box.head * 2 >= box.frames.count {
                box.frames.removeFirst(box.head)
                box.head = 0
            }
            let more = box.head < box.frames.count
            if !more {
                // Drained: the next enqueue must wake the service thread again.
                box.frames.removeAll(keepingCapacity: true)
                box.head = 0
                box.writeScheduled = false
            }
            return .write(frame, more: more)
        }
    }

    /// Service thread: the socket is gone; drop what is queued and refuse more.
    func markClosed() {
        state.withLock { box in
            box.closed = true
            box.frames.removeAll()
            box.head = 0
        }
    }
}
