/// Messages between the network and the reader, at most `limit` of them: when it is full the network side waits,
/// so the transport stops reading the socket and the server sees the client's pace (TCP backpressure).
actor Inbox {
    private var buffer: [String] = []
    private var head = 0
    private var end: (any Error)?? = nil  // .some(nil): closed by us; .some(error): ended with it
    private var reader: CheckedContinuation<String?, any Error>?
    private var writer: CheckedContinuation<Void, Never>?
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    /// Adds a message; waits while `limit` messages are waiting to be read.
    func push(_ text: String) async {
        guard end == nil else { return }
        if let reader {
            self.reader = nil
            reader.resume(returning: text)
            return
        }
        buffer.append(text)
        if buffer.count - head >= limit {
            await withCheckedContinuation { writer = $0 }
        }
    }

    /// The next message; nil after ``finish(_:)`` without an error, throws its error otherwise.
    func pop() async throws -> String? {
        if head < buffer.count {
            let text = buffer[head]
            head += 1
            if head == buffer.count { buffer.removeAll(keepingCapacity: true); head = 0 }
            if let writer { self.writer = nil; writer.resume() }
            return text
        }
        if let end {
            if let error = end { throw error }
            return nil
        }
        return try await withCheckedThrowingContinuation { reader = $0 }
    }

    /// Ends the inbox (the first end wins); a waiting network side is let go. With an error (the server closed,
    /// the connection broke) the messages already here are still read first; without one (closed by us) they are
    /// dropped: the reader gets nil at once.
    func finish(_ error: (any Error)?) {
        guard end == nil else { return }
        end = .some(error)
        if error == nil {
            buffer.removeAll()
            head = 0
        }
        if let writer { self.writer = nil; writer.resume() }
        if let reader {
            self.reader = nil
            if let error { reader.resume(throwing: error) } else { reader.resume(returning: nil) }
        }
    }
}
