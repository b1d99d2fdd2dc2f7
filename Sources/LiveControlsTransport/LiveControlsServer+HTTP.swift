import CLibWebSockets
import Foundation
import LiveControlsProtocol
import LiveControlsRuntime

/// An HTTP response waiting for `HTTP_WRITEABLE`, where its headers and body are written.
struct PendingHTTPResponse {
    var status: Int
    var contentType: String
    var headers: [(String, String)] = []
    var body: [UInt8]
    /// End the connection after the body (its request's body was not read: it cannot be kept alive).
    var closeAfter = false
    /// The answer to a HEAD request: the headers (Content-Length included) without the body.
    var headOnly = false
}

extension LiveControlsServer {
    /// Service thread: `LWS_CALLBACK_HTTP` — the `/healthz`, `/readyz`, `/metrics` and `/api` mounts, and any path no
    /// file matched (404).
    func serveHTTP(_ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        let (method, path) = requestMethodAndPath(wsi)
        if APIRoute.isAPIPath(path) {  // the /api mount; the router answers 404 for what it lacks
            return serveAPI(wsi, method: method, path: path)
        }
        if ["/healthz", "/readyz", "/metrics"].contains(path) || resolvedWebRoot != nil, method != "GET" && method != "HEAD" {
            respond(wsi, PendingHTTPResponse(status: 405, contentType: "text/plain; charset=utf-8", headers: [("allow", "GET, HEAD")],
                                             body: Array("\(method) is not served here: GET or HEAD\n".utf8), closeAfter: declaresBody(wsi),
                                             headOnly: method == "HEAD"))
            return 0
        }
        switch path {
        case "/healthz":
            respond(wsi, PendingHTTPResponse(status: draining ? 503 : 200, contentType: "application/json", body: healthBody(), headOnly: method == "HEAD"))
        case "/readyz":
            let ready = !draining && registry.health().ready
            respond(wsi, PendingHTTPResponse(status: ready ? 200 : 503, contentType: "application/json", body: healthBody(), headOnly: method == "HEAD"))
        case "/metrics":
            if options.metricsNeedCredential, case let .failure(error) = options.auth.authorizeAPI(authorization: header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION)) {
                respond(wsi, PendingHTTPResponse(APIResponse.failure(APIError(status: APIError.status(of: error.code), error))))
                return 0
            }
            var text = registry.metrics.exposition(connections: connections.count, rooms: registry.count,
                                                   uptimeSeconds: Int(Date().timeIntervalSince(startedAt)))
            for line in registry.metricLines() { text += line + "\n" }
            respond(wsi, PendingHTTPResponse(status: 200, contentType: ServerMetrics.contentType, body: Array(text.utf8), headOnly: method == "HEAD"))
        default:
            serveFile(wsi, path: path, head: method == "HEAD")
        }
        return 0
    }

    /// A file of the web root, or 404 (also without a web root). A request's body is not read (`closeAfter`).
    private func serveFile(_ wsi: OpaquePointer, path: String, head: Bool) {
        let outcome = resolvedWebRoot.map { StaticFiles.read(root: $0, path: path) } ?? .notFound
        var response: PendingHTTPResponse
        switch outcome {
        case let .file(contentType, bytes):
            response = PendingHTTPResponse(status: 200, contentType: contentType, body: bytes)
        case let .redirect(location):
            response = PendingHTTPResponse(status: 301, contentType: "text/plain; charset=utf-8", headers: [("location", location)],
                                           body: Array("moved to \(location)\n".utf8))
        case .notFound:
            response = PendingHTTPResponse(status: 404, contentType: "text/plain; charset=utf-8", body: Array("not found\n".utf8))
        case .tooLarge:
            logger.warning("static file not served: larger than the web root's limit", metadata: ["path": "\(path)", "limit": "\(StaticFiles.maxFileBytes)"])
            response = PendingHTTPResponse(status: 500, contentType: "text/plain; charset=utf-8", body: Array("file too large to serve\n".utf8))
        }
        response.headOnly = head
        response.closeAfter = declaresBody(wsi)
        respond(wsi, response)
    }

    /// Whether libwebsockets will read a body after the request's headers (a route that reads none closes the
    /// connection after its answer, or the body — or the next request — would be read as a body): one declared
    /// (`Content-Length` above 0, a transfer coding), and also a POST, PUT or PATCH without `Content-Length`, for which
    /// lws 4.1 expects 100 MiB of body where HTTP/1.1 says none (RFC 9112 §6.3): its next request would be swallowed.
    func declaresBody(_ wsi: OpaquePointer) -> Bool {
        let length = header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH)
        let declared = length.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } ?? 0
        if declared > 0 || header(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) != nil { return true }
        return length == nil && ["POST", "PUT", "PATCH"].contains(requestMethodAndPath(wsi).method)
    }

    /// The request's method and path (without the query), whatever the method.
    func requestMethodAndPath(_ wsi: OpaquePointer) -> (method: String, path: String) {
        let methods: [(String, lws_token_indexes)] = [
            ("GET", WSI_TOKEN_GET_URI), ("POST", WSI_TOKEN_POST_URI), ("PUT", WSI_TOKEN_PUT_URI), ("PATCH", WSI_TOKEN_PATCH_URI),
            ("DELETE", WSI_TOKEN_DELETE_URI), ("OPTIONS", WSI_TOKEN_OPTIONS_URI), ("HEAD", WSI_TOKEN_HEAD_URI),
        ]
        for (method, token) in methods where lws_hdr_total_length(wsi, token) > 0 {
            return (method, header(wsi, token) ?? "")
        }
        return ("", "")
    }

    private func healthBody() -> [UInt8] {
        let health = registry.health()
        var body: JSONObject = [
            "status": draining ? "draining" : (health.ready ? "ok" : "degraded"),
            "protocol": .string(protocolName),
            "rooms": .int(registry.count),
            "connections": .int(connections.count),
            "uptimeSeconds": .int(Int(Date().timeIntervalSince(startedAt))),
        ]
        for (key, value) in health.fields { body[key] = value }
        var bytes = JSONWriter.encode(.object(body))
        bytes.append(0x0A)
        return bytes
    }

    /// Service thread: answers the request now (any time after it arrived, also long after `LWS_CALLBACK_HTTP`
    /// returned): headers and body are written at once, as `lws_return_http_status` does (lws keeps what the socket
    /// does not take and sends it first), and the transaction is completed, so a pipelined next request (RFC 9112
    /// §9.3) is parsed only after this one is answered. A response that ends the connection (its request's body was
    /// not read) waits for the writable callback instead, where the close can be returned to lws.
    func respond(_ wsi: OpaquePointer, _ response: PendingHTTPResponse) {
        serviceThread.assertOn()
        var response = response
        // Over TLS one request per connection: whether a request was pipelined cannot be told there (TLS data waiting
        // in OpenSSL looks the same to `inputWaitsUnparsed`), so none is parsed behind an answer.
        if lws_is_ssl(wsi) != 0 { response.closeAfter = true }
        guard !response.closeAfter else {
            lws_rx_flow_control(wsi, 1)  // (see below)
            httpResponses[wsi] = response
            lws_callback_on_writable(wsi)
            return
        }
        httpResponses[wsi] = nil
        if let exchange = apiExchanges.removeValue(forKey: wsi) { releaseBody(of: exchange) }
        lws_rx_flow_control(wsi, 1)  // (a server API request stopped reading until its answer: `handle`)
        guard writeHeaders(wsi, response), writeBody(wsi, response.headOnly ? [] : response.body),
              lws_http_transaction_completed(wsi) == 0 else {
            // The socket failed, or the client asked for the connection to end (HTTP/1.0, `Connection: close`).
            lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
            return
        }
        servedBefore.insert(wsi)  // its next request may come pipelined (`checkRequest`)
        // lws takes the next request only once it has seen the connection writable again (LRS_DEFERRING_ACTION).
        lws_callback_on_writable(wsi)
    }

    /// Whether a request arrived while an earlier one on the same connection is still unanswered: a server API
    /// request answered later, by a room. libwebsockets 4.1 would parse the new one into the header table the
    /// earlier one still uses, so the connection is closed instead (`checkRequest`) and neither is answered: a
    /// client that pipelines retries what was not answered (RFC 9112 §9.3.2).
    func isPipelinedBehindAnswer(_ wsi: OpaquePointer) -> Bool {
        apiExchanges[wsi] != nil || httpResponses[wsi] != nil
    }

    /// Service thread, `CLOSED_HTTP`.
    func forgetHTTP(_ wsi: OpaquePointer) {
        httpResponses[wsi] = nil
        servedBefore.remove(wsi)
        if let exchange = apiExchanges.removeValue(forKey: wsi) { releaseBody(of: exchange) }  // (its buffer goes with it)
    }

    /// Service thread, `HTTP_WRITEABLE`: writes a response that ends the connection (`respond`); nil when this
    /// connection has none.
    func writeHTTPResponse(_ wsi: OpaquePointer) -> Int32? {
        guard let response = httpResponses[wsi] else { return nil }
        httpResponses[wsi] = nil
        if let exchange = apiExchanges.removeValue(forKey: wsi) { releaseBody(of: exchange) }
        _ = writeHeaders(wsi, response) && writeBody(wsi, response.headOnly ? [] : response.body)
        return -1
    }

    private func writeBody(_ wsi: OpaquePointer, _ body: [UInt8]) -> Bool {
        var buffer = [UInt8](repeating: 0, count: Int(SHIM_LWS_PRE) + body.count)
        buffer.replaceSubrange(Int(SHIM_LWS_PRE)..., with: body)
        let written = buffer.withUnsafeMutableBufferPointer { b in
            lws_write(wsi, b.baseAddress! + Int(SHIM_LWS_PRE), body.count, LWS_WRITE_HTTP_FINAL)
        }
        return written == body.count
    }

    /// Service thread, inside `LWS_CALLBACK_HTTP`: writes the whole (small) response at once and ends the
    /// connection, before libwebsockets reads anything more from it — for a request whose remaining bytes it would
    /// misread as a next request (a chunked body). Returns the callback's result (-1: close).
    func respondAndClose(_ wsi: OpaquePointer, _ response: PendingHTTPResponse) -> Int32 {
        var response = response
        response.closeAfter = true
        _ = writeHeaders(wsi, response) && writeBody(wsi, response.body)
        return -1
    }

    private func writeHeaders(_ wsi: OpaquePointer, _ response: PendingHTTPResponse) -> Bool {
        var headers = response.headers
        headers.append(("cache-control", "no-store"))
        if response.closeAfter { headers.append(("connection", "close")) }
        let room = 1024 + headers.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count + 4 }
        var buffer = [UInt8](repeating: 0, count: Int(SHIM_LWS_PRE) + room)
        return buffer.withUnsafeMutableBufferPointer { b -> Bool in
            let start = b.baseAddress! + Int(SHIM_LWS_PRE)
            var p: UnsafeMutablePointer<UInt8>? = start
            let end = b.baseAddress! + b.count
            if lws_add_http_common_headers(wsi, UInt32(response.status), response.contentType, lws_filepos_t(response.body.count), &p, end) != 0 {
                return false
            }
            for (name, value) in headers {
                let added = (name + ":").withCString { n in
                    value.withCString { v in
                        lws_add_http_header_by_name(wsi, UnsafeRawPointer(n).assumingMemoryBound(to: UInt8.self),
                                                    UnsafeRawPointer(v).assumingMemoryBound(to: UInt8.self), Int32(value.utf8.count), &p, end)
                    }
                }
                if added != 0 { return false }
            }
            return lws_finalize_write_http_header(wsi, start, &p, end) == 0
        }
    }
}
