import LiveControlsProtocol

/// The operations that turn one stored state into the next, exactly: applied in order (`JSONValue.applying`) to the
/// old state they give the new one byte for byte once encoded — objects keep their key order, `1` stays apart from
/// `1.0`. `JSONDiff` (for clients) takes objects as unordered; a stored list item's value must come back as it was
/// sent. What is unchanged is found by identity first: a state built again shares its strings, arrays and objects with
/// the one before, so a change costs what it changes, not the state's size.
enum StoredStateDiff {
    static func diff(from old: JSONValue, to new: JSONValue) -> [PatchOp] {
        var ops: [PatchOp] = []
        diff(old, new, .root, &ops)
        return ops
    }

    private static func diff(_ old: JSONValue, _ new: JSONValue, _ path: JSONPointer, _ ops: inout [PatchOp]) {
        switch (old, new) {
        case let (.object(a), .object(b)) where orderKept(a, b):
            for (key, _) in a where b[key] == nil { ops.append(.remove(path: path.appending(key))) }
            for (key, value) in b {
                if let before = a[key] { diff(before, value, path.appending(key), &ops) } else { ops.append(.add(path: path.appending(key), value: value)) }
            }
        case let (.array(a), .array(b)):
            var start = 0
            while start < a.count, start < b.count, same(a[start], b[start]) { start += 1 }
            var end = 0
            while end < a.count - start, end < b.count - start, same(a[a.count - 1 - end], b[b.count - 1 - end]) { end += 1 }
            let paired = min(a.count, b.count) - start - end
            for i in 0..<paired { diff(a[start + i], b[start + i], path.appending(String(start + i)), &ops) }
            for i in (start + paired)..<(b.count - end) { ops.append(.add(path: path.appending(String(i)), value: b[i])) }
            for _ in (start + paired)..<(a.count - end) { ops.append(.remove(path: path.appending(String(start + paired)))) }
        default:
            if !same(old, new) { ops.append(.replace(path: path, value: new)) }
        }
    }

    /// Whether removing `a`'s keys that `b` lacks, then adding `b`'s new keys at the end, gives `b`'s order.
    private static func orderKept(_ a: JSONObject, _ b: JSONObject) -> Bool {
        var kept = b.makeIterator()
        var sawNew = false
        var next = kept.next()
        for (key, _) in a where b[key] != nil {
            // Skip b's keys that are new (they must all come after the kept ones).
            while let (k, _) = next, a[k] == nil { sawNew = true; next = kept.next() }
            guard let (k, _) = next, !sawNew, exactKey(k, key) else { return false }
            next = kept.next()
        }
        return true
    }

    /// The same bytes (canonically equal spellings differ): the same storage at once, else compared.
    private static func exactKey(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        let shared = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in x.baseAddress == y.baseAddress }
        }
        if shared == true { return true }
        return a.utf8.elementsEqual(b.utf8)
    }

    /// Exact equality: key order, number types and spellings (canonically equal strings of another length differ).
    static func same(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case let (.int(x), .int(y)): return x == y
        case let (.double(x), .double(y)): return x.bitPattern == y.bitPattern  // 0.0 and -0.0 are written apart
        case let (.string(x), .string(y)): return exactKey(x, y)
        case let (.bool(x), .bool(y)): return x == y
        case (.null, .null): return true
        case let (.array(x), .array(y)):
            return x.count == y.count && (x.withUnsafeBufferPointer { a in y.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress } }
                                          || zip(x, y).allSatisfy { same($0, $1) })
        case let (.object(x), .object(y)):
            return x.count == y.count && (x.sharesStorage(with: y) || zip(x, y).allSatisfy { exactKey($0.0, $1.0) && same($0.1, $1.1) })
        default: return false
        }
    }
}
