import Foundation

/// The server under test: LiveControls (protocol v1) or the libwebsockets mirror baseline.
enum Target {
    case livecontrols(room: String, template: String?)
    case mirror

    var subprotocol: String? {
        if case .mirror = self { return "lws-mirror-protocol" }
        return nil
    }
    var path: String {
        if case .mirror = self { return "/" }
        return "/ws"
    }
}

/// Connects `count` clients (at most `inFlight` handshakes at a time) and joins them; returns them ready.
func connectAll(_ loop: Loop, target: Target, count: Int, inFlight: Int = 256, timeoutSeconds: Double = 60,
                onMessage: @escaping (WSConn, UnsafeBufferPointer<UInt8>) -> Void) -> [WSConn] {
    var ready: [WSConn] = []
    var started = 0
    var pending = 0
    var failed = 0
    let deadline = nowNanos() + UInt64(timeoutSeconds * 1e9)
    let snapshotNeedle = Needle(#""type":"snapshot""#)
    func startMore() {
        while started < count && pending < inFlight {
            let tag = started
            started += 1
            pending += 1
            let conn = loop.connect(tag: tag, onOpen: { conn in
                switch target {
                case let .livecontrols(room, template):
                    var join = #"{"type":"join","room":"\#(room)""#
                    if let template { join += #","template":"\#(template)""# }
                    conn.sendText(join + "}")
                case .mirror:
                    pending -= 1
                    ready.append(conn)
                }
            }, onMessage: { conn, bytes in
                if case .livecontrols = target, !conn.joined, contains(bytes, snapshotNeedle) {
                    conn.joined = true
                    pending -= 1
                    ready.append(conn)
                    return
                }
                onMessage(conn, bytes)
            })
            conn?.onClose = { _ in pending -= 1; failed += 1 }
            if conn == nil { pending -= 1; failed += 1 }
        }
    }
    startMore()
    while ready.count + failed < count && nowNanos() < deadline {
        loop.run(until: { pending < inFlight && started < count || ready.count + failed >= count }, deadline: min(deadline, nowNanos() + 50_000_000))
        startMore()
        if count >= 1000 { progress("connected \(ready.count)/\(count)") }
    }
    if count >= 1000 { progress("") }
    return ready
}
