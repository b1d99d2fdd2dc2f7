import Dispatch
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends one webhook request. The dispatcher's only I/O, so tests can stand in for the network.
package protocol WebhookTransport: Sendable {
    /// POSTs `body` to `url`; `done` gets nil for a 2xx answer within `timeoutMs`, else why not (any thread).
    func post(url: String, headers: [(String, String)], body: [UInt8], timeoutMs: Int, done: @escaping @Sendable (_ failure: String?) -> Void)
}

/// Webhook requests through URLSession (FoundationNetworking on Linux: libcurl, which the toolchain brings; no
/// package to build). Redirects are not followed: a 3xx answer is a failed attempt (Standard Webhooks).
package final class URLSessionWebhookTransport: NSObject, WebhookTransport, URLSessionTaskDelegate, @unchecked Sendable {
    /// Set once in `init`; URLSession is thread-safe.
    private var session: URLSession!

    package override init() {
        super.init()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 8
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpShouldSetCookies = false
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }

    package func post(url: String, headers: [(String, String)], body: [UInt8], timeoutMs: Int,
                      done: @escaping @Sendable (_ failure: String?) -> Void) {
        guard let target = URL(string: url) else { return done("not a URL") }  // (the URL may carry credentials: never in a failure)
        var request = URLRequest(url: target, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: Double(timeoutMs) / 1000)
        request.httpMethod = "POST"
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = Data(body)
        // The whole attempt is bounded here: URLSession's own timeout on Linux only bounds the time between bytes.
        let timedOut = Atomic<Bool>(false)
        let task = session.dataTask(with: request) { _, response, error in
            if let error {
                let code = (error as NSError).code
                let expired = timedOut.load(ordering: .acquiring) || code == NSURLErrorTimedOut
                return done(expired ? "timed out after \(timeoutMs) ms" : error.localizedDescription)
            }
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            done((200..<300).contains(status) ? nil : "HTTP \(status)")
        }
        task.resume()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(timeoutMs)) {
            guard task.state == .running else { return }
            timedOut.store(true, ordering: .releasing)
            task.cancel()
        }
    }

    package func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                            newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}
