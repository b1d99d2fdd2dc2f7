/// Where a connection is between open and gone, as a value: every transition is a method that says what
/// the caller (the transport's service thread, which alone owns it) must do.
///
/// ```
/// open ──requestClose──▶ closeRequested ──(queue drained) closeSent──▶ closing(code) ──socketClosed──▶ closed
///   │                                                     ▲
///   ├──closeNow(code) (1003, 1009, slow consumer) ────────┘
///   ├──peerSentClose──▶ peerClosing ──socketClosed──▶ closed
///   └──libraryClosing (lws found a protocol error) ──▶ libraryClosing ──socketClosed──▶ closed
/// ```
/// Once our close frame is on its way (`closing`), the peer's close is being answered (`peerClosing`) or lws is
/// closing the connection itself (`libraryClosing`), nothing more may be written.
enum ConnectionLifecycle: Equatable, Sendable {
    case open
    /// A close was asked for; the writable callbacks send what is still queued (the client's last replies),
    /// then the close.
    case closeRequested(code: UInt16, reason: String)
    /// Our close frame is sent, or on its way: nothing more is written.
    case closing(code: UInt16)
    /// The client sent a close frame; the library answers it: nothing more is written by us.
    case peerClosing
    /// The library is closing the connection itself — a protocol error it found (invalid UTF-8: 1007; a malformed
    /// frame: 1002) — and sends its own close frame: nothing more is written by us.
    case libraryClosing
    /// The socket is gone.
    case closed

    /// Asks for a close with `code`; true when the caller must ask for a writable callback. Only an open
    /// connection takes it (one already closing keeps its first code).
    mutating func requestClose(code: UInt16, reason: String) -> Bool {
        guard self == .open else { return false }
        self = .closeRequested(code: code, reason: reason)
        return true
    }

    /// Closing at once, from inside a callback (a binary frame, a message too large, a slow consumer): true
    /// when the caller must send the close now; false when it is already closing or gone.
    mutating func closeNow(code: UInt16) -> Bool {
        switch self {
        case .open, .closeRequested:
            self = .closing(code: code)
            return true
        case .closing, .peerClosing, .libraryClosing, .closed:
            return false
        }
    }

    enum Writable: Equatable {
        /// Write queued frames.
        case write
        /// Write what is queued; once nothing is, send this close frame (`closeSent`).
        case drainThenClose(code: UInt16, reason: String)
        /// Write nothing.
        case nothing
    }

    /// The connection's writable callback: what it does.
    func writable() -> Writable {
        switch self {
        case .open:
            return .write
        case let .closeRequested(code, reason):
            return .drainThenClose(code: code, reason: reason)
        case .closing, .peerClosing, .libraryClosing, .closed:
            return .nothing
        }
    }

    /// The requested close frame goes out now (the queue is empty): nothing more is written.
    mutating func closeSent() {
        if case let .closeRequested(code, _) = self { self = .closing(code: code) }
    }

    enum Direct: Equatable {
        /// Frames may be written now, outside the writable callback.
        case write
        /// Leave it to the writable callback (a close is due).
        case deferToWritable
        /// Write nothing (closing or gone; its socket may not be touched once `closed`).
        case skip
    }

    /// After a service pass, writing a connection's frames outside its writable callback.
    var direct: Direct {
        switch self {
        case .open: return .write
        case .closeRequested: return .deferToWritable
        case .closing, .peerClosing, .libraryClosing, .closed: return .skip
        }
    }

    /// Open, with no close under way: the connection's messages are acted on (once per message: a case test,
    /// not the synthesized `==`).
    var isOpen: Bool { if case .open = self { return true } else { return false } }

    /// The socket is gone: its `wsi` may not be touched (checked once per woken connection).
    var isGone: Bool { if case .closed = self { return true } else { return false } }

    /// The client sent a close frame.
    mutating func peerSentClose() {
        if case .closed = self { return }
        if case .closing = self { return }  // our close went first; this is its answer
        self = .peerClosing
    }

    /// The library began closing the connection (`WS_SERVER_DROP_PROTOCOL`: whatever the reason, the connection is
    /// past writing; after a close of ours or the peer's, the state says so already).
    mutating func libraryClosed() {
        if case .open = self { self = .libraryClosing } else if case .closeRequested = self { self = .libraryClosing }
    }

    /// The socket is gone.
    mutating func socketClosed() {
        self = .closed
    }
}
