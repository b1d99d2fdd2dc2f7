import CLibWebSockets
import LiveControlsRuntime

/// Service thread only: reusable memory where several queued messages are framed back to back
/// (RFC 6455 server frames: FIN + text opcode, unmasked; no extension is negotiated), so a client with
/// a backlog gets them in one `lws_write(…, LWS_WRITE_RAW)` — one `send()` instead of one per message; and where a
/// large message's fragments are framed (a fragment of a frame shared by many connections cannot be framed in place).
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
        // Through the slice's storage: the frames are read where they are, without a retain and a release of each per
        // pass (~40 instructions a frame, docs/benchmarks/HISTORY.md).
        frames.withUnsafeBufferPointer { frames in
            var needed = 0
            for i in frames.indices { needed += FrameHeader.maxLength + frames[i].count }
            reserve(needed)
            let start = self.start
            var p = start
            for i in frames.indices {
                let count = frames[i].count
                p = FrameHeader.write(at: p, first: 0x81, count: count)
                p.update(from: frames[i].unsafePayload, count: count)
                p += count
            }
            return (start, p - start)
        }
    }

    /// Fragments of a large message (RFC 6455 §5.4), back to back: `count` bytes of `frame` from `offset`, cut into
    /// pieces of `Outbox.fragmentBytes` — the message's first is a text frame without FIN, then continuations without
    /// FIN, and its final one a continuation with FIN.
    func fragments(_ frame: Frame, offset: Int, count: Int) -> (UnsafeMutablePointer<UInt8>, Int) {
        reserve(count + FrameHeader.maxLength * (count / Outbox.fragmentBytes + 1))
        var p = start
        var at = offset
        while at < offset + count {
            let n = min(Outbox.fragmentBytes, offset + count - at)
            let last = at + n == frame.count
            p = FrameHeader.write(at: p, first: (last ? 0x80 : 0) | (at == 0 ? 0x01 : 0x00), count: n)
            p.update(from: frame.unsafePayload + at, count: n)
            p += n
            at += n
        }
        return (start, p - start)
    }

    private var start: UnsafeMutablePointer<UInt8> { (storage + Int(SHIM_LWS_PRE)).assumingMemoryBound(to: UInt8.self) }

    private func reserve(_ needed: Int) {
        guard needed > capacity else { return }
        storage.deallocate()
        capacity = max(needed, capacity * 2)
        storage = UnsafeMutableRawPointer.allocate(byteCount: Int(SHIM_LWS_PRE) + capacity, alignment: 16)
    }
}
