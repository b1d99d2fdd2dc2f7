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
