import CEpoll
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Monotonic nanoseconds.
func nowNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// One client WebSocket on a non-blocking socket, driven by `Loop`.
final class WSConn {
    enum State { case connecting, handshaking, open, closed }
    let fd: Int32
    var state = State.connecting
    var rx: [UInt8] = []
    var rxStart = 0
    /// A fragmented message's payload so far.
    var fragments: [UInt8] = []
    var tx: [UInt8] = []
    var onOpen: ((WSConn) -> Void)?
    var onMessage: ((WSConn, UnsafeBufferPointer<UInt8>) -> Void)?
    var onClose: ((WSConn) -> Void)?
    /// A pong frame arrived (the answer to `sendPing`).
    var onPong: ((WSConn) -> Void)?
    var tag = 0
    /// Which of the loop's servers (`Loop.endpoints`) it is connected to.
    var node = 0
    /// LiveControls: the snapshot of the joined room has arrived.
    var joined = false

    init(fd: Int32) { self.fd = fd }

    func sendText(_ text: String) {
        var payload = Array(text.utf8)
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        var frame: [UInt8] = [0x81]
        if payload.count < 126 { frame.append(0x80 | UInt8(payload.count)) }
        else if payload.count < 65536 { frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)] }
        else { frame.append(0x80 | 127); frame += (0..<8).reversed().map { UInt8(truncatingIfNeeded: payload.count >> ($0 * 8)) } }
        frame += mask
        for i in payload.indices { payload[i] ^= mask[i & 3] }
        frame += payload
        tx += frame
        flush()
    }

    /// A masked ping frame with no payload; the server answers it with a pong to this client only.
    func sendPing() {
        tx += [0x89, 0x80, 0x12, 0x34, 0x56, 0x78]
        flush()
    }

    func flush() {
        while !tx.isEmpty {
            let n = tx.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return }
            tx.removeFirst(n)
        }
    }

    /// Parses complete frames out of `rx`.
    func drainFrames() {
        while true {
            let avail = rx.count - rxStart
            guard avail >= 2 else { break }
            let b1 = rx[rxStart + 1] & 0x7F
            var header = 2
            var length = Int(b1)
            if b1 == 126 {
                guard avail >= 4 else { break }
                length = Int(rx[rxStart + 2]) << 8 | Int(rx[rxStart + 3]); header = 4
            } else if b1 == 127 {
                guard avail >= 10 else { break }
                length = (2..<10).reduce(0) { $0 << 8 | Int(rx[rxStart + $1]) }; header = 10
            }
            guard avail >= header + length else { break }
            let opcode = rx[rxStart] & 0x0F
            let start = rxStart + header
            rxStart += header + length
            let fin = rx[start - header] & 0x80 != 0
            if (opcode == 0x1 || opcode == 0x2) && fin {
                rx.withUnsafeBufferPointer { onMessage?(self, UnsafeBufferPointer(rebasing: $0[start..<start + length])) }
            } else if opcode <= 0x2 {
                // A message in fragments (the server sends large ones so): put together, delivered with the last.
                fragments.append(contentsOf: rx[start..<start + length])
                if fin {
                    fragments.withUnsafeBufferPointer { onMessage?(self, $0) }
                    fragments.removeAll()
                }
            } else if opcode == 0x8 {
                state = .closed
            } else if opcode == 0x9 {
                tx += [0x8A, 0x80, 0, 0, 0, 0]
                flush()
            } else if opcode == 0xA {
                onPong?(self)
            }
        }
        if rxStart > 65536 || rxStart == rx.count { rx.removeFirst(rxStart); rxStart = 0 }
    }
}

/// A single-threaded epoll loop over many client connections.
final class Loop {
    let epfd = epoll_create1(0)
    var conns: [Int32: WSConn] = [:]
    /// The servers (one, or the nodes of a cluster); a connection goes to one of them.
    let endpoints: [(host: String, port: UInt16)]
    let path: String
    let subprotocol: String?
    /// Local addresses the sockets are spread over (round-robin by tag), each with its own ephemeral ports: one
    /// address gives at most ~28,000 connections to one server port. Empty: the kernel picks (127.0.0.1).
    var sourceAddresses: [String] = []
    private var readBuffer = [UInt8](repeating: 0, count: 256 * 1024)

    init(endpoints: [(host: String, port: UInt16)], path: String, subprotocol: String?) {
        precondition(!endpoints.isEmpty)
        self.endpoints = endpoints; self.path = path; self.subprotocol = subprotocol
    }

    /// Starts a connection to `endpoints[node]`; `onOpen` runs after the handshake.
    @discardableResult
    func connect(tag: Int = 0, node: Int = 0, onOpen: @escaping (WSConn) -> Void, onMessage: @escaping (WSConn, UnsafeBufferPointer<UInt8>) -> Void) -> WSConn? {
        let (host, port) = endpoints[node]
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return nil }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        if !sourceAddresses.isEmpty, !bindSource(fd, sourceAddresses[tag % sourceAddresses.count]) { Glibc.close(fd); return nil }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        inet_pton(AF_INET, host, &addr.sin_addr)
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard rc == 0 || errno == EINPROGRESS else { Glibc.close(fd); return nil }
        let conn = WSConn(fd: fd)
        conn.tag = tag
        conn.node = node
        conn.onOpen = onOpen
        conn.onMessage = onMessage
        conns[fd] = conn
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | EPOLLOUT.rawValue | EPOLLRDHUP.rawValue
        event.data.fd = fd
        epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &event)
        return conn
    }

    /// Binds `fd` to `address` with the port left to `connect` (IP_BIND_ADDRESS_NO_PORT), so ports are only
    /// unique per destination, as without a bind.
    private func bindSource(_ fd: Int32, _ address: String) -> Bool {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_IP), 24 /* IP_BIND_ADDRESS_NO_PORT */, &one, socklen_t(MemoryLayout<Int32>.size))
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, address, &local.sin_addr)
        return withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    func close(_ conn: WSConn, abort: Bool = false) {
        if abort {
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(conn.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        }
        epoll_ctl(epfd, EPOLL_CTL_DEL, conn.fd, nil)
        conns[conn.fd] = nil
        conn.state = .closed
        Glibc.close(conn.fd)
    }

    /// Runs until `until()` is true or `deadline` (monotonic ns) passes.
    func run(until: () -> Bool, deadline: UInt64) {
        var events = [epoll_event](repeating: epoll_event(), count: 1024)
        while !until() && nowNanos() < deadline {
            let n = epoll_wait(epfd, &events, Int32(events.count), 5)
            if n <= 0 { continue }
            for i in 0..<Int(n) {
                guard let conn = conns[events[i].data.fd] else { continue }
                let flags = events[i].events
                if flags & EPOLLOUT.rawValue != 0 {
                    if conn.state == .connecting {
                        conn.state = .handshaking
                        var request = "GET \(path) HTTP/1.1\r\nHost: \(endpoints[conn.node].host):\(endpoints[conn.node].port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                        if let subprotocol { request += "Sec-WebSocket-Protocol: \(subprotocol)\r\n" }
                        conn.tx += Array((request + "\r\n").utf8)
                        var event = epoll_event()
                        event.events = EPOLLIN.rawValue | EPOLLRDHUP.rawValue
                        event.data.fd = conn.fd
                        epoll_ctl(epfd, EPOLL_CTL_MOD, conn.fd, &event)
                    }
                    conn.flush()
                }
                if flags & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 {
                    readAll(conn)
                }
            }
        }
    }

    private func readAll(_ conn: WSConn) {
        while true {
            let n = read(conn.fd, &readBuffer, readBuffer.count)
            if n > 0 {
                conn.rx += readBuffer[0..<n]
                if conn.state == .handshaking {
                    guard let end = conn.rx.firstRange(of: [13, 10, 13, 10]) else { continue }
                    let ok = conn.rx.starts(with: Array("HTTP/1.1 101".utf8))
                    conn.rx.removeSubrange(..<end.upperBound)
                    guard ok else { close(conn); conn.onClose?(conn); return }
                    conn.state = .open
                    conn.onOpen?(conn)
                }
                if conn.state == .open { conn.drainFrames() }
                if n < readBuffer.count { return }
            } else if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) {
                close(conn)
                conn.onClose?(conn)
                return
            } else {
                return
            }
        }
    }
}
