import Foundation

/// The server under test: LiveControls (protocol v1) or the libwebsockets mirror baseline.
enum Target {
    case livecontrols(room: String, template: String?)
    /// LiveControls, the clients spread over `rooms` rooms: tag `t` joins `"\(prefix)-\(t % rooms)"`.
    case livecontrolsRooms(prefix: String, rooms: Int, template: String?)
    case mirror

    /// The room client `tag` joins (LiveControls targets).
    func room(forTag tag: Int) -> String? {
        switch self {
        case let .livecontrols(room, _): return room
        case let .livecontrolsRooms(prefix, rooms, _): return "\(prefix)-\(tag % rooms)"
        case .mirror: return nil
        }
    }
    var isLiveControls: Bool { room(forTag: 0) != nil }
    var template: String? {
        switch self {
        case let .livecontrols(_, template), let .livecontrolsRooms(_, _, template): return template
        case .mirror: return nil
        }
    }

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
/// Every client makes one exchange before it counts as ready: LiveControls clients join a room (join →
/// snapshot), mirror clients ping (ping → pong; a mirror message would go to every client).
///
/// With several servers (a cluster's nodes) the clients are spread round-robin by tag (tag `firstTag + i`
/// goes to node `(firstTag + i) % nodes`) unless `node` pins them all to one. The room's owner is the node
/// of the first join, so with several nodes tag 0 (node 0) joins alone first: node 0 owns the room.
func connectAll(_ loop: Loop, target: Target, count: Int, inFlight: Int = 256, timeoutSeconds: Double = 60,
                node: Int? = nil, firstTag: Int = 0,
                onMessage: @escaping (WSConn, UnsafeBufferPointer<UInt8>) -> Void) -> [WSConn] {
    if loop.endpoints.count > 1, node == nil, firstTag == 0, count > 1 {
        let first = connectAll(loop, target: target, count: 1, timeoutSeconds: timeoutSeconds, node: 0, onMessage: onMessage)
        guard first.count == 1 else { return first }
        return first + connectAll(loop, target: target, count: count - 1, inFlight: inFlight, timeoutSeconds: timeoutSeconds,
                                  firstTag: 1, onMessage: onMessage)
    }
    var ready: [WSConn] = []
    var started = 0
    var pending = 0
    var failed = 0
    let deadline = nowNanos() + UInt64(timeoutSeconds * 1e9)
    let snapshotNeedle = Needle(#""type":"snapshot""#), errorNeedle = Needle(#""type":"error""#)
    func startMore() {
        while started < count && pending < inFlight {
            let tag = firstTag + started
            started += 1
            pending += 1
            let conn = loop.connect(tag: tag, node: node ?? tag % loop.endpoints.count, onOpen: { conn in
                switch target {
                case .livecontrols, .livecontrolsRooms:
                    var join = #"{"type":"join","room":"\#(target.room(forTag: conn.tag)!)""#
                    if let template = target.template { join += #","template":"\#(template)""# }
                    conn.sendText(join + "}")
                case .mirror:
                    // The mirror has no join: a ping, answered to this client alone, is its exchange. It
                    // leaves the client's TCP socket in the state a LiveControls join leaves it in (see
                    // docs/benchmarks/HISTORY.md, "Same client state for both servers").
                    conn.onPong = { conn in
                        guard !conn.joined else { return }
                        conn.joined = true
                        pending -= 1
                        ready.append(conn)
                    }
                    conn.sendPing()
                }
            }, onMessage: { conn, bytes in
                if target.isLiveControls, !conn.joined, contains(bytes, snapshotNeedle) {
                    conn.joined = true
                    pending -= 1
                    ready.append(conn)
                    return
                }
                if target.isLiveControls, !conn.joined, contains(bytes, errorNeedle) {  // the join was refused
                    if failed == 0 { progress("join refused: \(String(decoding: bytes, as: UTF8.self))\n") }
                    loop.close(conn)
                    conn.onClose?(conn)
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
