/// Serialises `JSONValue` to compact UTF-8 JSON, keys in the object's insertion order.
public struct JSONWriter {
    public private(set) var bytes: [UInt8]

    public init(reservingCapacity capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public static func encode(_ value: JSONValue) -> [UInt8] {
        var writer = JSONWriter()
        writer.write(value)
        return writer.bytes
    }

    public static func string(_ value: JSONValue) -> String {
        String(decoding: encode(value), as: UTF8.self)
    }

    public mutating func write(_ value: JSONValue) {
        switch value {
        case .null: writeRaw("null")
        case let .bool(b): writeRaw(b ? "true" : "false")
        case let .int(i): writeInt(i)
        case let .double(d): writeDouble(d)
        case let .string(s): writeString(s)
        case let .array(a):
            bytes.append(UInt8(ascii: "["))
            for (i, element) in a.enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                write(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case let .object(o):
            bytes.append(UInt8(ascii: "{"))
            var first = true
            for (key, element) in o {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                writeString(key)
                bytes.append(UInt8(ascii: ":"))
                write(element)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    public mutating func write(_ id: RequestID) {
        switch id {
        case let .string(s): writeString(s)
        case let .int(i): writeInt(i)
        }
    }

    /// Appends raw, already valid JSON text (used to splice pre-encoded parts).
    public mutating func writeRaw(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    public mutating func writeRaw(_ raw: [UInt8]) {
        bytes.append(contentsOf: raw)
    }

    /// A double keeps a fraction or an exponent, so it reads back as a double (`1.0`, not `1`): Swift's
    /// `description` is the shortest text that reads back as the same `Double`, and it always has a `.` or
    /// an `e` (`1.0`, `0.1`, `1e+300`, `-2.5e-07`, `-0.0`). JSON has no NaN or infinity: those are written
    /// as `null` (the parser never makes them, it refuses numbers beyond `Double`'s range).
    private mutating func writeDouble(_ d: Double) {
        writeRaw(d.isFinite ? d.description : "null")
    }

    public mutating func writeString(_ s: String) {
        bytes.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { utf8 in
            // Runs without anything to escape (most strings are one run) are copied whole.
            var run = 0
            for i in utf8.indices where utf8[i] < 0x20 || utf8[i] == UInt8(ascii: "\"") || utf8[i] == UInt8(ascii: "\\") {
                if run < i { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run..<i])) }
                appendEscaped(utf8[i])
                run = i + 1
            }
            if run < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run...])) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// An integer's decimal digits, written without making a `String` of them.
    mutating func writeInt(_ i: Int) {
        var magnitude = i.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if i < 0 { bytes.append(UInt8(ascii: "-")) }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// One RFC 6902 operation: the bytes of `write(op.json)`, without building the object or the path string.
    public mutating func write(_ op: PatchOp) {
        switch op {
        case let .add(path, value):
            writeRaw(#"{"op":"add","path":"#)
            writePointer(path)
            writeRaw(#","value":"#)
            write(value)
        case let .remove(path):
            writeRaw(#"{"op":"remove","path":"#)
            writePointer(path)
        case let .replace(path, value):
            writeRaw(#"{"op":"replace","path":"#)
            writePointer(path)
            writeRaw(#","value":"#)
            write(value)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// A JSON Pointer as a JSON string: the bytes of `writeString(pointer.description)`.
    public mutating func writePointer(_ pointer: JSONPointer) {
        bytes.append(UInt8(ascii: "\""))
        for token in pointer.tokens {
            bytes.append(UInt8(ascii: "/"))
            for byte in token.utf8 {
                switch byte {
                case UInt8(ascii: "~"): bytes.append(UInt8(ascii: "~")); bytes.append(UInt8(ascii: "0"))
                case UInt8(ascii: "/"): bytes.append(UInt8(ascii: "~")); bytes.append(UInt8(ascii: "1"))
                default: appendEscaped(byte)
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func appendEscaped(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "\\"))
        case 0x0A: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "t"))
        case 0..<0x20:
            let hex: [UInt8] = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                      hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
        default: bytes.append(byte)
        }
    }
}
