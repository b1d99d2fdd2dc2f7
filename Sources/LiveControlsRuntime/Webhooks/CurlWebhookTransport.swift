import CCurl
import Foundation
import Synchronization

/// Webhook requests through libcurl's multi interface, all on one thread of their own. Only the status counts: the
/// attempt's outcome is told as soon as the answer's head has arrived, and of its body at most `maxBodyBytes` are read
/// (and dropped) — enough for the usual short answer, so that the connection can serve the next attempt; a longer
/// body ends the transfer and the connection, so a receiver answering with an endless or huge body costs nothing
/// (issue 38: URLSession on Linux buffered it whole — 3.5 GB — and went on after a cancel). An answer's head is
/// bounded too (`maxHeadBytes`). Each attempt is bounded by its `timeoutMs` from the moment it is posted; at most
/// `maxConnectionsPerHost` connections per host and `maxConnections` in all (the server's open files: `SocketBudget`).
/// Redirects are not followed: a 3xx answer is a failed attempt (Standard Webhooks).
///
/// Intent hooks (`HookTransport`) need the answer itself: a transfer made by `exchange` reads a 2xx answer's body, up to
/// its `maxAnswerBytes` (a longer one fails the call and ends its connection). Hooks have a transport of their own
/// (their own thread and connections), so webhook deliveries queued for a slow receiver never delay a hook call.
package final class CurlWebhookTransport: WebhookTransport, HookTransport, @unchecked Sendable {
    /// Webhooks' bounds; intent hooks' transport is made with more (`forHooks`): a call waits for nobody's retries.
    static let maxConnectionsPerHost = 8
    static let maxConnections = 64
    static let hookConnectionsPerHost = 32
    static let hookConnections = 128
    /// The longest answer head read (status line and headers); a longer one fails the attempt.
    static let maxHeadBytes = 64 * 1024
    /// Body bytes read (and dropped) after the status was told, so the connection can be used again.
    static let maxBodyBytes = 16 * 1024

    /// One attempt, from `post` to its `done`. Its fields are the curl thread's once it is handed over.
    final class Transfer: @unchecked Sendable {  // handed over whole to the curl thread by `post`
        let easy: OpaquePointer
        var headers: UnsafeMutablePointer<curl_slist>?
        let timeoutMs: Int
        let done: @Sendable (_ failure: String?, _ answer: [UInt8]) -> Void
        /// `exchange`: the most answer body bytes kept (nil: `post`, the body is dropped).
        let collect: Int?
        var answer: [UInt8] = []
        var answerTooLarge = false
        var status: Int?
        var headBytes = 0
        var headTooLarge = false
        var bodyBytes = 0
        /// `done` was called (at the head, or at the end).
        var told = false

        /// Tells the outcome once.
        func tell(_ failure: String?) {
            guard !told else { return }
            told = true
            done(failure, failure == nil ? answer : [])
        }

        init(easy: OpaquePointer, timeoutMs: Int, collect: Int?, done: @escaping @Sendable (_ failure: String?, _ answer: [UInt8]) -> Void) {
            self.easy = easy
            self.timeoutMs = timeoutMs
            self.collect = collect
            self.done = done
        }

        deinit {
            curl_slist_free_all(headers)
            curl_easy_cleanup(UnsafeMutableRawPointer(easy))
        }
    }

    private let multi: OpaquePointer
    /// Transfers posted, not yet added to the multi handle (any thread → the curl thread).
    private let incoming = Mutex<[Transfer]>([])
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// The intent hooks' transport: up to `hookConnectionsPerHost` connections to a host (name and port), `hookConnections`
    /// in all (rooms call at most `RoomRuntime.hookCallsPerRoom` at once each, so a few slow rooms cannot take a host's all).
    package static func forHooks() -> CurlWebhookTransport {
        CurlWebhookTransport(connectionsPerHost: hookConnectionsPerHost, connections: hookConnections, threadName: "intent-hooks")
    }

    package init(connectionsPerHost: Int = CurlWebhookTransport.maxConnectionsPerHost, connections: Int = CurlWebhookTransport.maxConnections,
                 threadName: String = "webhooks") {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
        multi = OpaquePointer(curl_multi_init())
        _ = lc_curl_multi_set_long(UnsafeMutableRawPointer(multi), CURLMOPT_MAX_HOST_CONNECTIONS, connectionsPerHost)
        _ = lc_curl_multi_set_long(UnsafeMutableRawPointer(multi), CURLMOPT_MAX_TOTAL_CONNECTIONS, connections)
        _ = lc_curl_multi_set_long(UnsafeMutableRawPointer(multi), CURLMOPT_MAXCONNECTS, connections)
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = threadName
        thread.start()
    }

    /// Ends the thread: attempts under way are abandoned (told "stopped"), nothing more is sent. The dispatcher stops
    /// first, so no outcome is recorded from here (at least once: they are attempted again at the next start).
    package func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        curl_multi_wakeup(UnsafeMutableRawPointer(multi))
        finished.wait()
        for transfer in incoming.withLock({ list in defer { list.removeAll() }; return list }) {
            transfer.tell("stopped")
            Unmanaged.passUnretained(transfer).release()
        }
        curl_multi_cleanup(UnsafeMutableRawPointer(multi))
    }

    package func post(url: String, headers: [(String, String)], body: [UInt8], timeoutMs: Int,
                      done: @escaping @Sendable (_ failure: String?) -> Void) {
        start(url: url, headers: headers, body: body, timeoutMs: timeoutMs, collect: nil) { failure, _ in done(failure) }
    }

    package func exchange(url: String, headers: [(String, String)], body: [UInt8], timeoutMs: Int, maxAnswerBytes: Int,
                          done: @escaping @Sendable (Result<[UInt8], HookCallFailure>) -> Void) {
        start(url: url, headers: headers, body: body, timeoutMs: timeoutMs, collect: maxAnswerBytes) { failure, answer in
            done(failure.map { .failure(HookCallFailure($0)) } ?? .success(answer))
        }
    }

    private func start(url: String, headers: [(String, String)], body: [UInt8], timeoutMs: Int, collect: Int?,
                       done: @escaping @Sendable (_ failure: String?, _ answer: [UInt8]) -> Void) {
        guard !stopped.load(ordering: .acquiring) else { return done("stopped", []) }
        guard let raw = curl_easy_init() else { return done("could not start a request (out of memory)", []) }
        let easy = OpaquePointer(raw)
        let transfer = Transfer(easy: easy, timeoutMs: timeoutMs, collect: collect, done: done)
        var list: UnsafeMutablePointer<curl_slist>? = nil
        for (name, value) in headers { list = curl_slist_append(list, "\(name): \(value)") }
        list = curl_slist_append(list, "Expect:")  // no `100 Continue` round trip
        transfer.headers = list
        guard set(raw, CURLOPT_URL, url), set(raw, CURLOPT_PROTOCOLS_STR, "http,https"),
              lc_curl_set_long(raw, CURLOPT_NOSIGNAL, 1) == CURLE_OK,
              lc_curl_set_long(raw, CURLOPT_FOLLOWLOCATION, 0) == CURLE_OK,
              lc_curl_set_long(raw, CURLOPT_TIMEOUT_MS, max(1, timeoutMs)) == CURLE_OK,
              lc_curl_set_long(raw, CURLOPT_POST, 1) == CURLE_OK,
              lc_curl_set_size(raw, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)) == CURLE_OK,
              body.withUnsafeBytes({ lc_curl_set_pointer(raw, CURLOPT_COPYPOSTFIELDS, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1)) }) == CURLE_OK,
              lc_curl_set_pointer(raw, CURLOPT_HTTPHEADER, UnsafeRawPointer(list)) == CURLE_OK,
              lc_curl_set_callback(raw, CURLOPT_HEADERFUNCTION, curlHead) == CURLE_OK,
              lc_curl_set_callback(raw, CURLOPT_WRITEFUNCTION, curlBody) == CURLE_OK,
              lc_curl_set_pointer(raw, CURLOPT_WRITEDATA, Unmanaged.passUnretained(transfer).toOpaque()) == CURLE_OK
        else { return done("not a request libcurl takes (the URL?)", []) }
        let opaque = Unmanaged.passRetained(transfer).toOpaque()  // released when it is done (`finish`)
        _ = lc_curl_set_pointer(raw, CURLOPT_HEADERDATA, opaque)
        _ = lc_curl_set_pointer(raw, CURLOPT_PRIVATE, opaque)
        incoming.withLock { $0.append(transfer) }
        curl_multi_wakeup(UnsafeMutableRawPointer(multi))
    }

    private func set(_ easy: UnsafeMutableRawPointer, _ option: CURLoption, _ text: String) -> Bool {
        text.withCString { lc_curl_set_pointer(easy, option, $0) } == CURLE_OK  // (libcurl copies strings it is given)
    }

    /// The curl thread: adds what was posted, drives the transfers, finishes those done, sleeps until a socket or a
    /// `post` wakes it.
    private func run() {
        var running: Int32 = 0
        var active: [UnsafeMutableRawPointer] = []  // the easy handles added (each transfer's, retained until `finish`)
        while !stopped.load(ordering: .acquiring) {
            for transfer in incoming.withLock({ list in defer { list.removeAll() }; return list }) {
                let easy = UnsafeMutableRawPointer(transfer.easy)
                if curl_multi_add_handle(UnsafeMutableRawPointer(multi), easy) == CURLM_OK {
                    active.append(easy)
                } else {
                    finish(easy, CURLE_FAILED_INIT)
                }
            }
            curl_multi_perform(UnsafeMutableRawPointer(multi), &running)
            var left: Int32 = 0
            while let message = curl_multi_info_read(UnsafeMutableRawPointer(multi), &left) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
                let result = message.pointee.data.result
                curl_multi_remove_handle(UnsafeMutableRawPointer(multi), easy)
                active.removeAll { $0 == easy }
                finish(easy, result)
            }
            curl_multi_poll(UnsafeMutableRawPointer(multi), nil, 0, 1_000, nil)
        }
        for easy in active {  // stopped: what was under way is abandoned
            curl_multi_remove_handle(UnsafeMutableRawPointer(multi), easy)
            finish(easy, CURLE_ABORTED_BY_CALLBACK, stopped: true)
        }
    }

    private func finish(_ easy: UnsafeMutableRawPointer, _ result: CURLcode, stopped: Bool = false) {
        guard let opaque = lc_curl_private(easy) else { return }
        let transfer = Unmanaged<Transfer>.fromOpaque(opaque).takeRetainedValue()
        let failure: String?
        if stopped {
            failure = "stopped"
        } else if transfer.answerTooLarge {
            failure = "the answer is longer than \(transfer.collect ?? 0) bytes"
        } else if transfer.collect != nil, let status = transfer.status, (200..<300).contains(status) {
            // An answer wanted whole: it is one only if the transfer ended well.
            failure = result == CURLE_OK ? nil
                : result == CURLE_OPERATION_TIMEDOUT ? "timed out after \(transfer.timeoutMs) ms" : String(cString: curl_easy_strerror(result))
        } else if let status = transfer.status {
            failure = (200..<300).contains(status) ? nil : "HTTP \(status)"  // (the transfer was ended at the head)
        } else if transfer.headTooLarge {
            failure = "the answer's head is longer than \(Self.maxHeadBytes) bytes"
        } else if result == CURLE_OPERATION_TIMEDOUT {
            failure = "timed out after \(transfer.timeoutMs) ms"
        } else {
            failure = String(cString: curl_easy_strerror(result))
        }
        transfer.tell(failure)
    }
}

/// libcurl's header callback: one line of the answer's head at a time. At the blank line ending a final (not 1xx)
/// head, the status is kept and the transfer ended (returning less than given), so no body byte is read.
private func curlHead(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ user: UnsafeMutableRawPointer?) -> Int {
    guard let user else { return 0 }
    let transfer = Unmanaged<CurlWebhookTransport.Transfer>.fromOpaque(user).takeUnretainedValue()
    let length = size * count
    transfer.headBytes += length
    if transfer.headBytes > CurlWebhookTransport.maxHeadBytes {
        transfer.headTooLarge = true
        return 0
    }
    let blank = length <= 2 && (length == 0 || data?[0] == 0x0D || data?[0] == 0x0A)
    if blank {
        let code = lc_curl_response_code(UnsafeMutableRawPointer(transfer.easy))
        if code >= 200 {
            transfer.status = code
            let ok = (200..<300).contains(code)
            // The outcome, before any body (an `exchange` told of a 2xx answer waits for its body).
            if !ok || transfer.collect == nil { transfer.tell(ok ? nil : "HTTP \(code)") }
        }
    }
    return length
}

/// libcurl's body callback: up to `maxBodyBytes` are read and dropped (so a short answer leaves the connection usable);
/// past that the transfer, and its connection, end.
private func curlBody(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ user: UnsafeMutableRawPointer?) -> Int {
    guard let user else { return 0 }
    let transfer = Unmanaged<CurlWebhookTransport.Transfer>.fromOpaque(user).takeUnretainedValue()
    let length = size * count
    if let limit = transfer.collect, !transfer.told {
        guard transfer.answer.count + length <= limit, let data else {
            transfer.answerTooLarge = true
            return 0
        }
        data.withMemoryRebound(to: UInt8.self, capacity: length) { transfer.answer.append(contentsOf: UnsafeBufferPointer(start: $0, count: length)) }
        return length
    }
    transfer.bodyBytes += length
    return transfer.bodyBytes > CurlWebhookTransport.maxBodyBytes ? 0 : length
}
