import CLibWebSockets
import Foundation
import LiveControlsProtocol

/// Why an HTTP request is refused before any route sees it.
struct RequestRefusal: Equatable {
    var status: Int
    var reason: String
}

/// What libwebsockets 4.1 lets through and RFC 9112 does not: each is answered with a status and the connection
/// closed (its framing is in doubt, so nothing more is read from it).
enum RequestCheck {
    /// `version`: the request line's protocol (`HTTP/1.1`; empty when lws found none); `host`: the Host header's value; `contentLength`: every
    /// Content-Length value (lws joins repeated headers with commas); `spacedNames`: whether a header's name came with
    /// whitespace before its colon (RFC 9112 §5.1: must be refused with 400; it is how requests are smuggled past
    /// proxies that read it differently).
    static func refusal(version: String?, host: String?, contentLength: String?, transferEncoding: Bool,
                        spacedNames: Bool) -> RequestRefusal? {
        // (HTTP/2 streams, over TLS, have no version token and carry the host as `:authority`: the caller passes
        // their version as nil and their host as that.)
        // No version: an HTTP/0.9 request line, or (as lws decodes) a URI with a percent-encoded line break (`%0D`,
        // `%0A`), which ends the line there (`/api/v1/rooms/demo%0Ax` would be read as `/api/v1/rooms/demo`), so such a URL is refused.
        if version == "" {
            return RequestRefusal(status: 400, reason: "the request line has no HTTP version (a percent-encoded line break, %0D or %0A, in the URL ends the line)")
        }
        if let version, version != "HTTP/1.1" && version != "HTTP/1.0" {
            return RequestRefusal(status: 505, reason: "HTTP version not supported: send HTTP/1.1")
        }
        if version == "HTTP/1.1" && (host ?? "").isEmpty {
            return RequestRefusal(status: 400, reason: "an HTTP/1.1 request needs a Host header")
        }
        if spacedNames {
            return RequestRefusal(status: 400, reason: "no whitespace is allowed between a header's name and its colon")
        }
        if let contentLength {
            guard !contentLength.isEmpty, contentLength.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  contentLength.utf8.count <= 18
            else {
                return RequestRefusal(status: 400, reason: "Content-Length must be one decimal number")
            }
            if transferEncoding {
                return RequestRefusal(status: 400, reason: "a request may not have both Content-Length and Transfer-Encoding")
            }
        }
        return nil
    }

    /// The file a static request names may be served only if it lies inside the web root once every symlink is
    /// resolved: false for a path that resolves outside `root` (already resolved). A path that does not exist is
    /// left to the file mount (its 404).
    static func staysInside(root: String, path: String) -> Bool {
        // lws builds the file's path in 256 bytes and cuts what is longer: a path it would cut is never served.
        guard root.utf8.count + 1 + path.utf8.count + "/index.html".utf8.count < 256 else { return false }
        var file = root + path
        if file.hasSuffix("/") { file += "index.html" }
        guard let target = resolve(file) else {
            return errno == ENOENT || errno == ENOTDIR  // nothing there: the file mount answers 404
        }
        guard target == root || target.hasPrefix(root == "/" ? "/" : root + "/") else { return false }
        // A directory named without its slash: lws serves its index.html, which must stay inside too.
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: target, isDirectory: &isDirectory), isDirectory.boolValue {
            return staysInside(root: root, path: String(target.dropFirst(root.count)) + "/")
        }
        return true
    }

    private static func resolve(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

extension LiveControlsServer {
    /// Service thread, `LWS_CALLBACK_FILTER_HTTP_CONNECTION` (every HTTP request that is not a WebSocket upgrade, its
    /// headers complete, before any mount serves it): non-zero closes the connection, after the refusal was written.
    func checkRequest(_ wsi: OpaquePointer, uri: UnsafeMutableRawPointer?, length: Int) -> Int32 {
        if isPipelinedBehindAnswer(wsi) {
            logger.info("HTTP connection closed: a request was pipelined behind a server API request not yet answered")
            return 1
        }
        let path = uri.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: max(length, 0)), as: UTF8.self) } ?? ""
        let contentLength = header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH)?.filter { $0 != " " && $0 != "\t" }
        // libwebsockets reads no transfer coding of a request's body: chunks (or anything else) would be taken for the
        // next request. Chunked gets 411 (send a Content-Length), any other coding 501 (RFC 9112 §6.1); both close.
        if let coding = header(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING), contentLength == nil {
            let chunked = coding.trimmingCharacters(in: .whitespaces).lowercased() == "chunked"
            let refusal = chunked
                ? APIError(status: 411, ProtocolError(.invalidMessage, "send the body with a Content-Length (chunked bodies are not read)"))
                : APIError(status: 501, ProtocolError(.invalidMessage, "transfer coding \(coding) is not implemented: send the body with a Content-Length"))
            logger.info("HTTP request refused", metadata: ["status": "\(refusal.status)", "reason": "transfer coding \(coding)"])
            if APIRoute.isAPIPath(path) { return respondAndClose(wsi, PendingHTTPResponse(APIResponse.failure(refusal))) }
            return refuseAndClose(wsi, refusal.status, refusal.error.message)
        }
        let spaced = Self.spacedHeaderNames.contains { lws_hdr_custom_length(wsi, $0, Int32($0.utf8.count)) >= 0 }
        let isStream = lws_get_network_wsi(wsi) != wsi  // an HTTP/2 stream
        let host = isStream ? header(wsi, WSI_TOKEN_HTTP_COLON_AUTHORITY) ?? header(wsi, WSI_TOKEN_HOST) : header(wsi, WSI_TOKEN_HOST)
        if let refusal = RequestCheck.refusal(version: isStream ? nil : header(wsi, WSI_TOKEN_HTTP) ?? "", host: host,
                                              contentLength: contentLength,
                                              transferEncoding: header(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) != nil,
                                              spacedNames: spaced) {
            logger.info("HTTP request refused", metadata: ["status": "\(refusal.status)", "reason": "\(refusal.reason)"])
            if refusal.status == 400, APIRoute.isAPIPath(path) {  // the API's errors are JSON (its codes have no 505)
                _ = respondAndClose(wsi, PendingHTTPResponse(APIResponse.failure(
                    APIError(status: refusal.status, ProtocolError(.invalidMessage, refusal.reason)))))
                return 1
            }
            return refuseAndClose(wsi, refusal.status, refusal.reason)
        }
        // (A connection's first request is never pipelined: only one that has had an answer is checked.)
        if servedBefore.contains(wsi), let contentLength, let declared = Int(contentLength), declared > 0, inputWaitsUnparsed(wsi) {
            return refusePipelinedBody(wsi, path: path)
        }
        if let root = resolvedWebRoot, !path.isEmpty {
            if !isCallbackMount(path), !RequestCheck.staysInside(root: root, path: path) {
                logger.warning("static file refused: it resolves outside the web root", metadata: ["path": "\(path)"])
                return refuseAndClose(wsi, 404, "not found")
            }
        }
        return 0
    }

    /// Whether bytes libwebsockets has read wait in a connection's input list to be parsed — which is where a request
    /// pipelined behind another (sent before the earlier one's answer) is parsed from. libwebsockets 4.1 reads the body
    /// of such a request from the start of that list, its own header bytes: the body is wrong, and its parser then
    /// consumes nothing more and spins, the whole service thread with it (issue 42). lws 4.1 says this only for the
    /// whole service thread (`lws_service_adjust_timeout` is 0 when any connection has parsable input waiting), so
    /// another connection's waiting input can make a request that was not pipelined count as one, rarely: it is
    /// answered 503 `unavailable` with `Retry-After`, and sent again it is served (PROTOCOL.md, *HTTP*). Only asked for
    /// a request behind an earlier answer on a plain connection (`servedBefore`; over TLS, where OpenSSL's waiting
    /// data would count too, every connection carries one request).
    func inputWaitsUnparsed(_ wsi: OpaquePointer) -> Bool {
        lws_service_adjust_timeout(lws_get_context(wsi), 1, 0) == 0
    }

    /// A request with a body that may have been pipelined: answered 503 without reading its body, and the connection
    /// closed (returned to lws before it reads the body).
    private func refusePipelinedBody(_ wsi: OpaquePointer, path: String) -> Int32 {
        let reason = "a request with a body was sent before the previous answer on this connection (pipelined): it was not read; send it again after the answer, or on a new connection"
        logger.info("HTTP request refused: a body pipelined behind another request")
        var response = PendingHTTPResponse(APIResponse.failure(APIError(status: 503, ProtocolError(.unavailable, reason))))
        if !APIRoute.isAPIPath(path) {
            response = PendingHTTPResponse(status: 503, contentType: "text/plain; charset=utf-8", headers: [("retry-after", "1")],
                                           body: Array((reason + "\n").utf8))
        }
        return respondAndClose(wsi, response)
    }

    /// Every header name libwebsockets knows, spelled with whitespace before its colon: lws does not take such a line as
    /// that header, but keeps it as an unknown one under this name (`Authorization : …` would be silently dropped).
    /// lws 4.1 cannot list the unknown headers it kept, so a name it does not know (`X-Foo : …`) goes unseen.
    static let spacedHeaderNames: [String] = (0..<Int(WSI_TOKEN_COUNT.rawValue)).flatMap { index -> [String] in
        guard let raw = lws_token_to_string(lws_token_indexes(rawValue: UInt32(index))) else { return [] }
        let spelled = String(cString: raw)
        guard spelled.count > 1, spelled.hasSuffix(":"), !spelled.hasPrefix(":") else { return [] }  // not `get `, `:path`
        let name = spelled.dropLast().lowercased()
        return [name + " :", name + "\t:"]
    }

    private func isCallbackMount(_ path: String) -> Bool {
        APIRoute.isAPIPath(path) || ["/healthz", "/readyz", "/metrics"].contains { path == $0 || path.hasPrefix($0 + "/") }
    }

    private func refuseAndClose(_ wsi: OpaquePointer, _ status: Int, _ reason: String) -> Int32 {
        _ = respondAndClose(wsi, PendingHTTPResponse(status: status, contentType: "text/plain; charset=utf-8",
                                                     body: Array((reason + "\n").utf8)))
        return 1
    }
}
