/// Sends one webhook request. The dispatcher's only I/O, so tests can stand in for the network.
package protocol WebhookTransport: Sendable {
    /// POSTs `body` to `url`; `done` gets nil for a 2xx answer within `timeoutMs`, else why not (any thread).
    func post(url: String, headers: [(String, String)], body: [UInt8], timeoutMs: Int, done: @escaping @Sendable (_ failure: String?) -> Void)
    func stop()
}

extension WebhookTransport {
    /// Ends the transport's own work (threads, connections); what is under way is abandoned. Called once, after the
    /// dispatcher stopped.
    package func stop() {}
}

/// Makes intent hook calls: a POST whose answer body is read (at most `maxAnswerBytes`). The hook client's only I/O.
package protocol HookTransport: Sendable {
    /// `done` gets the body of a 2xx answer within `timeoutMs`, else why not (any thread).
    func exchange(url: String, headers: [(String, String)], body: [UInt8], timeoutMs: Int, maxAnswerBytes: Int,
                  done: @escaping @Sendable (Result<[UInt8], HookCallFailure>) -> Void)
    func stop()
}

/// Why a hook call got no answer (a time-out, a refused connection, a non-2xx status, an answer too long).
package struct HookCallFailure: Error, Sendable, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

extension HookTransport {
    package func stop() {}
}
