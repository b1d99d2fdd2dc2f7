import CLibWebSockets
import Foundation
import LiveControlsProtocol
import LiveControlsRuntime

extension LiveControlsServer {
    /// Service thread: `LWS_CALLBACK_HTTP` — the `/healthz` and `/metrics` mounts, and any path no file matched (404).
    func serveHTTP(_ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        switch requestPath(wsi) {
        case "/healthz":
            return respond(wsi, status: draining ? 503 : 200, contentType: "application/json", body: healthBody())
        case "/readyz":
            let ready = !draining && registry.health().ready
            return respond(wsi, status: ready ? 200 : 503, contentType: "application/json", body: healthBody())
        case "/metrics":
            var text = registry.metrics.exposition(connections: connections.count, rooms: registry.count,
                                                   uptimeSeconds: Int(Date().timeIntervalSince(startedAt)))
            for line in registry.metricLines() { text += line + "\n" }
            return respond(wsi, status: 200, contentType: ServerMetrics.contentType, body: Array(text.utf8))
        default:
            if lws_return_http_status(wsi, UInt32(HTTP_STATUS_NOT_FOUND.rawValue), nil) != 0 { return -1 }
            return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
        }
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

    /// Sends the headers now and queues `body` for `HTTP_WRITEABLE`.
    private func respond(_ wsi: OpaquePointer, status: UInt32, contentType: String, body bytes: [UInt8]) -> Int32 {
        var headers = [UInt8](repeating: 0, count: Int(SHIM_LWS_PRE) + 512)
        return headers.withUnsafeMutableBufferPointer { buffer -> Int32 in
            let start = buffer.baseAddress! + Int(SHIM_LWS_PRE)
            var p: UnsafeMutablePointer<UInt8>? = start
            let end = buffer.baseAddress! + buffer.count
            if lws_add_http_common_headers(wsi, status, contentType, lws_filepos_t(bytes.count), &p, end) != 0 { return 1 }
            if lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CACHE_CONTROL, "no-store", 8, &p, end) != 0 { return 1 }
            if lws_finalize_write_http_header(wsi, start, &p, end) != 0 { return 1 }
            httpBodies[wsi] = bytes
            lws_callback_on_writable(wsi)
            return 0
        }
    }

    /// Service thread: writes a pending `/healthz` or `/metrics` body; nil when this connection has none.
    func writeHTTPBody(_ wsi: OpaquePointer) -> Int32? {
        guard let body = httpBodies.removeValue(forKey: wsi) else { return nil }
        var buffer = [UInt8](repeating: 0, count: Int(SHIM_LWS_PRE) + body.count)
        buffer.replaceSubrange(Int(SHIM_LWS_PRE)..., with: body)
        let written = buffer.withUnsafeMutableBufferPointer { b in
            lws_write(wsi, b.baseAddress! + Int(SHIM_LWS_PRE), body.count, LWS_WRITE_HTTP_FINAL)
        }
        if written != body.count { return -1 }
        return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
    }
}
