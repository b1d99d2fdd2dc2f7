import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Why the client failed.
public struct ClientError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// A small blocking RFC 6455 client over a plain TCP socket (`ws://` only), for the command line.
/// Text messages only; answers pings; reassembles fragments.
public final class WebSocketClient {
    private let fd: Int32
    private var buffer: [UInt8] = []
    public private(set) var closeCode: UInt16?

    /// Connects and performs the opening handshake.
    public init(url: String, timeout: TimeInterval = 10) throws {
        guard let components = URLComponents(string: url), components.scheme == "ws", let host = components.host else {
            throw ClientError("only ws:// URLs are supported (got \(url))")
        }
        let port = components.port ?? 80
        var hints = addrinfo(ai_flags: 0, ai_family: AF_UNSPEC, ai_socktype: Int32(SOCK_STREAM.rawValue), ai_protocol: 0,
                             ai_addrlen: 0, ai_addr: nil, ai_canonname: nil, ai_next: nil)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &result) == 0, let first = result else { throw ClientError("cannot resolve \(host)") }
        defer { freeaddrinfo(result) }
        var connected: Int32 = -1
        var info: UnsafeMutablePointer<addrinfo>? = first
        while let ai = info {
            let s = socket(ai.pointee.ai_family, ai.pointee.ai_socktype, ai.pointee.ai_protocol)
            if s >= 0, connect(s, ai.pointee.ai_addr, ai.pointee.ai_addrlen) == 0 { connected = s; break }
            if s >= 0 { Glibc.close(s) }
            info = ai.pointee.ai_next
        }
        guard connected >= 0 else { throw ClientError("cannot connect to \(host):\(port)") }
        fd = connected
        let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        var path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { path += "?" + query }
        let request = "GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: livecontrols.v1\r\n\r\n"
        try writeAll(Array(request.utf8))
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let end = buffer.firstRange(of: Array("\r\n\r\n".utf8)) {
                let head = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
                buffer.removeSubrange(..<end.upperBound)
                guard head.hasPrefix("HTTP/1.1 101") else {
                    throw ClientError("the server refused the WebSocket: \(head.split(separator: "\r\n").first ?? "")")
                }
                return
            }
            try fill(until: deadline)
        }
    }

    deinit { Glibc.close(fd) }

    public func send(text: String) throws {
        let payload = Array(text.utf8)
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count < 65_536 {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            frame += (0..<8).reversed().map { UInt8(truncatingIfNeeded: payload.count >> ($0 * 8)) }
        }
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        try writeAll(frame)
    }

    /// The next text message, or nil when the server closed the connection (see `closeCode`).
    public func receive(timeout: TimeInterval?) throws -> String? {
        let deadline = timeout.map { Date().addingTimeInterval($0) }
        var message: [UInt8] = []
        while true {
            guard let (fin, opcode, payload) = try nextFrame(deadline: deadline) else { return nil }
            switch opcode {
            case 0x1, 0x0:
                message += payload
                if fin { return String(decoding: message, as: UTF8.self) }
            case 0x8:
                closeCode = payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil
                return nil
            case 0x9:
                try writeControl(opcode: 0xA, payload: payload)
            default:
                continue
            }
        }
    }

    public func close(code: UInt16 = 1000) {
        try? writeControl(opcode: 0x8, payload: [UInt8(code >> 8), UInt8(code & 0xFF)])
    }

    private func nextFrame(deadline: Date?) throws -> (Bool, UInt8, [UInt8])? {
        do {
            try need(2, deadline)
            let fin = buffer[0] & 0x80 != 0
            let opcode = buffer[0] & 0x0F
            var length = Int(buffer[1] & 0x7F)
            var header = 2
            if length == 126 {
                try need(4, deadline)
                length = Int(buffer[2]) << 8 | Int(buffer[3])
                header = 4
            } else if length == 127 {
                try need(10, deadline)
                length = (2..<10).reduce(0) { $0 << 8 | Int(buffer[$1]) }
                header = 10
            }
            try need(header + length, deadline)
            let payload = Array(buffer[header..<header + length])
            buffer.removeSubrange(..<(header + length))
            return (fin, opcode, payload)
        } catch is EndOfStream {
            return nil
        }
    }

    private struct EndOfStream: Error {}

    private func need(_ count: Int, _ deadline: Date?) throws {
        while buffer.count < count { try fill(until: deadline) }
    }

    private func fill(until deadline: Date?) throws {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let waitMs = deadline.map { max(0, Int32($0.timeIntervalSinceNow * 1000)) } ?? -1
        let ready = poll(&pfd, 1, waitMs)
        guard ready > 0 else { throw ClientError("timed out waiting for the server") }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = read(fd, &chunk, chunk.count)
        guard n > 0 else { throw EndOfStream() }
        buffer += chunk[..<n]
    }

    private func writeControl(opcode: UInt8, payload: [UInt8]) throws {
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        try writeAll([0x80 | opcode, 0x80 | UInt8(payload.count)] + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] })
    }

    private func writeAll(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw ClientError("the connection was lost while sending") }
            offset += n
        }
    }
}
