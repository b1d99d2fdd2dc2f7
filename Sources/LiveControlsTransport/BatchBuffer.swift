import CLibWebSockets
import LiveControlsRuntime

/// Service thread only: reusable memory where several queued messages are framed back to back
/// (RFC 6455 server frames: FIN + text opcode, unmasked; no extension is negotiated), so a client with
/// a backlog gets them in one `lws_write(…, LWS_WRITE_RAW)` — one `send()` instead of one per message.
final class BatchBuffer {
    private var storage: UnsafeMutableRawPointer
    private var capacity: Int

    init(capacity: Int = 256 * 1024) {
        self.capacity = capacity
        storage = UnsafeMutableRawPointer.allocate(byteCount: Int(SHIM_LWS_PRE) + capacity, alignment: 16)
    }

    deinit { storage.deallocate() }

    /// Frames the messages into the buffer; returns the first byte (after `LWS_PRE` headroom) and the length.
    func frame(_ frames: ArraySlice<Frame>) -> (UnsafeMutablePointer<UInt8>, Int) {
        let needed = frames.reduce(0) { $0 + 10 + $1.count }
        if needed > capacity {
            storage.deallocate()
            capacity = max(needed, capacity * 2)
            storage = UnsafeMutableRawPointer.allocate(byteCount: Int(SHIM_LWS_PRE) + capacity, alignment: 16)
        }
        let start = (storage + Int(SHIM_LWS_PRE)).assumingMemoryBound(to: UInt8.self)
        var p = start
        for frame in frames {
            let n = frame.count
            p.pointee = 0x81
            p += 1
            if n < 126 {
                p.pointee = UInt8(n)
                p += 1
            } else if n < 65_536 {
                p[0] = 126; p[1] = UInt8(n >> 8); p[2] = UInt8(n & 0xFF)
                p += 3
            } else {
                p.pointee = 127
                for i in 0..<8 { p[1 + i] = UInt8(truncatingIfNeeded: n >> ((7 - i) * 8)) }
                p += 9
            }
            p.update(from: frame.unsafePayload, count: n)
            p += n
        }
        return (start, p - start)
    }
}
