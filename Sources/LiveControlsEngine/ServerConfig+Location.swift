import LiveControlsProtocol

/// Where in a config file an error is: the line and column of the value its JSON Pointer names (or of the nearest
/// value on the way that the file has, when the pointer names a member that is missing).
extension ServerConfig {
    /// The byte offset of the value at `pointer` (`/templates/t/controls/x`) in `bytes`, a valid JSON document; the
    /// deepest value on the way when the document stops short of it.
    static func offset(ofPointer pointer: String, in bytes: [UInt8]) -> Int {
        let tokens = JSONPointer(parsing: pointer)?.tokens ?? []
        var scanner = JSONScanner(bytes: bytes)
        scanner.skipSpace()
        var found = scanner.at
        for token in tokens {
            guard let next = scanner.enter(token) else { break }
            found = next
        }
        return found
    }
}

/// Walks JSON text without building it: enough to find where a member or an element begins.
private struct JSONScanner {
    let bytes: [UInt8]
    var at = 0

    mutating func skipSpace() {
        while at < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[at]) { at += 1 }
    }

    /// At an object or array: moves to the start of member `token` (or element number `token`) and returns it.
    mutating func enter(_ token: String) -> Int? {
        skipSpace()
        guard at < bytes.count else { return nil }
        if bytes[at] == UInt8(ascii: "{") {
            at += 1
            while true {
                skipSpace()
                guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") else { return nil }
                let keyStart = at
                skipString()
                let key = (try? JSONParser.parse(Array(bytes[keyStart..<at])))?.stringValue
                skipSpace()
                guard at < bytes.count, bytes[at] == UInt8(ascii: ":") else { return nil }
                at += 1
                skipSpace()
                if key == token { return at }
                skipValue()
                skipSpace()
                guard at < bytes.count, bytes[at] == UInt8(ascii: ",") else { return nil }
                at += 1
            }
        }
        if bytes[at] == UInt8(ascii: "["), let index = Int(token), index >= 0 {
            at += 1
            for _ in 0..<index {
                skipSpace()
                skipValue()
                skipSpace()
                guard at < bytes.count, bytes[at] == UInt8(ascii: ",") else { return nil }
                at += 1
            }
            skipSpace()
            return at < bytes.count && bytes[at] != UInt8(ascii: "]") ? at : nil
        }
        return nil
    }

    mutating func skipString() {
        at += 1  // the opening quote
        while at < bytes.count, bytes[at] != UInt8(ascii: "\"") { at += bytes[at] == UInt8(ascii: "\\") ? 2 : 1 }
        at += 1
    }

    mutating func skipValue() {
        guard at < bytes.count else { return }
        switch bytes[at] {
        case UInt8(ascii: "\""): skipString()
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            repeat {
                switch bytes[at] {
                case UInt8(ascii: "\""): skipString(); continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
                default: break
                }
                at += 1
            } while depth > 0 && at < bytes.count
        default:
            while at < bytes.count, ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D].contains(bytes[at]) { at += 1 }
        }
    }
}
