/// RFC 6455 §5.2 headers of the frames this server sends: unmasked, no extension negotiated (so no RSV bits).
enum FrameHeader {
    /// The largest header: 2 bytes, then a 64-bit length.
    static let maxLength = 10

    /// Bytes of the header in front of a payload of `count` bytes.
    @inline(__always)
    static func length(payload count: Int) -> Int {
        count < 126 ? 2 : count < 65_536 ? 4 : 10
    }

    /// Writes a header at `p` (`first`: FIN and opcode, 0x81 for a whole text message); returns where the payload goes.
    @inline(__always)
    static func write(at p: UnsafeMutablePointer<UInt8>, first: UInt8, count n: Int) -> UnsafeMutablePointer<UInt8> {
        p[0] = first
        if n < 126 {
            p[1] = UInt8(n)
            return p + 2
        } else if n < 65_536 {
            p[1] = 126; p[2] = UInt8(n >> 8); p[3] = UInt8(n & 0xFF)
            return p + 4
        }
        p[1] = 127
        for i in 0..<8 { p[2 + i] = UInt8(truncatingIfNeeded: n >> ((7 - i) * 8)) }
        return p + 10
    }
}
