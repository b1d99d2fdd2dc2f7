/// One RFC 6902 operation. The server only ever emits `add`, `remove` and `replace`.
public enum PatchOp: Sendable, Equatable {
    case add(path: JSONPointer, value: JSONValue)
    case remove(path: JSONPointer)
    case replace(path: JSONPointer, value: JSONValue)

    /// Where the operation applies.
    public var path: JSONPointer {
        switch self {
        case let .add(path, _), let .replace(path, _): return path
        case let .remove(path): return path
        }
    }

    /// The value it puts there (nil for `remove`).
    public var value: JSONValue? {
        switch self {
        case let .add(_, value), let .replace(_, value): return value
        case .remove: return nil
        }
    }

    public var json: JSONValue {
        switch self {
        case let .add(path, value): return ["op": "add", "path": .string(path.description), "value": value]
        case let .remove(path): return ["op": "remove", "path": .string(path.description)]
        case let .replace(path, value): return ["op": "replace", "path": .string(path.description), "value": value]
        }
    }
}

/// An RFC 6901 JSON Pointer, kept as its unescaped reference tokens.
public struct JSONPointer: Sendable, Equatable, Hashable, CustomStringConvertible {
    public var tokens: [String]

    public init(_ tokens: [String] = []) { self.tokens = tokens }

    public static let root = JSONPointer()

    public func appending(_ token: String) -> JSONPointer {
        var longer: [String] = []
        longer.reserveCapacity(tokens.count + 1)
        longer.append(contentsOf: tokens)
        longer.append(token)
        return JSONPointer(longer)
    }

    /// `/a~1b/c~0d` for tokens `a/b`, `c~d`.
    public var description: String {
        tokens.map { "/" + $0.replacingAll("~", with: "~0").replacingAll("/", with: "~1") }.joined()
    }

    public init?(parsing text: String) {
        if text.isEmpty { self.init(); return }
        guard text.hasPrefix("/") else { return nil }
        var tokens: [String] = []
        for part in text.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            tokens.append(String(part).replacingAll("~1", with: "/").replacingAll("~0", with: "~"))
        }
        self.init(tokens)
    }
}

extension String {
    func replacingAll(_ target: String, with replacement: String) -> String {
        guard contains(target) else { return self }
        return components(separatedBy: target).joined(separator: replacement)
    }

    private func components(separatedBy separator: String) -> [String] {
        var parts: [String] = []
        var rest = Substring(self)
        while let range = rest.range(of: separator) {
            parts.append(String(rest[..<range.lowerBound]))
            rest = rest[range.upperBound...]
        }
        parts.append(String(rest))
        return parts
    }
}

extension Substring {
    fileprivate func range(of needle: String) -> Range<Index>? {
        guard !needle.isEmpty else { return nil }
        var start = startIndex
        while start < endIndex {
            if self[start...].hasPrefix(needle) {
                return start..<index(start, offsetBy: needle.count)
            }
            start = index(after: start)
        }
        return nil
    }
}

/// Computes the operations that turn one JSON value into another.
public enum JSONDiff {
    /// Objects are diffed key by key (removals, then replacements in place, then additions in the new
    /// order); arrays element by element where they differ, after their common start and end, with `add` for what
    /// was inserted and `remove` for what went (so appending one item to a long list is one `add` of that item, not
    /// the list again), and one element moved, or one out and another in with the rest shifted, as one `remove` and
    /// one `add`; anything else is replaced whole.
    public static func diff(from old: JSONValue, to new: JSONValue, at path: JSONPointer = .root) -> [PatchOp] {
        var ops: [PatchOp] = []
        diff(old, new, path, &ops)
        return ops
    }

    private static func diff(_ old: JSONValue, _ new: JSONValue, _ path: JSONPointer, _ ops: inout [PatchOp]) {
        switch (old, new) {
        case let (.object(a), .object(b)) where a.hasKeys(inTheOrderOf: b):
            // The usual case (a control rendered again): the same keys in the same order, walked side by side.
            // (The new object's spelling of a key names the path: `==` holds for canonically equal spellings.)
            for ((_, oldValue), (key, value)) in zip(a, b) { diffMember(oldValue, value, path, key, &ops) }
        case let (.object(a), .object(b)):
            for (key, _) in a where b[key] == nil { ops.append(.remove(path: path.appending(key))) }
            for (key, value) in b {
                if let oldValue = a[key] {
                    diffMember(oldValue, value, path, key, &ops)
                } else {
                    ops.append(.add(path: path.appending(key), value: value))
                }
            }
        case let (.array(a), .array(b)) where a.count == b.count:
            // Only the span between the first and the last element that differ changes. One element out at one end of
            // it and one in at the other, the rest shifted (a list's `move`; a removal and an append) is one `remove`
            // and one `add`, not a `replace` of every element it shifted.
            var first = 0
            while first < a.count, sameElement(a[first], b[first]) { first += 1 }
            guard first < a.count else { break }
            var last = a.count - 1
            while last > first, sameElement(a[last], b[last]) { last -= 1 }
            if last > first, let (from, to) = singleMove(a, b, first, last) {
                ops.append(.remove(path: path.appending(String(from))))
                ops.append(.add(path: path.appending(String(to)), value: b[to]))
            } else {
                for i in first...last { diffMember(a[i], b[i], path, String(i), &ops) }
            }
        case let (.array(a), .array(b)):
            // The common start and end stay; in between, elements are diffed pairwise, then the rest of the new
            // ones added (in order) or the rest of the old ones removed (each at the same index, as they shift).
            var start = 0
            while start < a.count, start < b.count, sameElement(a[start], b[start]) { start += 1 }
            var end = 0
            while end < a.count - start, end < b.count - start, sameElement(a[a.count - 1 - end], b[b.count - 1 - end]) { end += 1 }
            let old = a[start..<(a.count - end)], new = b[start..<(b.count - end)]
            let paired = min(old.count, new.count)
            for i in 0..<paired { diff(old[old.startIndex + i], new[new.startIndex + i], path.appending(String(start + i)), &ops) }
            for i in paired..<new.count { ops.append(.add(path: path.appending(String(start + i)), value: new[new.startIndex + i])) }
            for _ in paired..<old.count { ops.append(.remove(path: path.appending(String(start + paired)))) }
        default:
            if !sameValue(old, new) { ops.append(.replace(path: path, value: new)) }
        }
    }

    /// `diff` of a member at `path`/`token`, the member's path made only where it is needed (a container to walk, or
    /// a change): most members of a re-rendered control are unchanged scalars.
    private static func diffMember(_ old: JSONValue, _ new: JSONValue, _ path: JSONPointer, _ token: @autoclosure () -> String,
                                   _ ops: inout [PatchOp]) {
        switch (old, new) {
        case (.object, .object), (.array, .array): diff(old, new, path.appending(token()), &ops)
        default: if !sameValue(old, new) { ops.append(.replace(path: path.appending(token()), value: new)) }
        }
    }

    /// Whether `b` is `a` with one element out at one end of `first...last` and one in at the other, the rest shifted
    /// by one: (from, to), such that removing `a[from]` and then adding `b[to]` at `to` makes `b`.
    private static func singleMove(_ a: [JSONValue], _ b: [JSONValue], _ first: Int, _ last: Int) -> (Int, Int)? {
        // What lies between shifted by one: one element went at one end of the span and one came at the other — the
        // same one (a `move`) or another (a list's selected item removed and a new one appended, `selectionPolicy`
        // `append`): one `remove` and one `add` either way.
        if (first..<last).allSatisfy({ sameElement(a[$0 + 1], b[$0]) }) { return (first, last) }
        if (first..<last).allSatisfy({ sameElement(a[$0], b[$0 + 1]) }) { return (last, first) }
        return nil
    }

    /// Equality of two values that are not both objects or both arrays (those are walked): also tells `1` from `1.0`,
    /// so the rendered number type always reaches clients, and strings by their bytes, not canonically (`"é"` as one
    /// scalar or as `e` and a combining accent differ: a client counting scalars — a text's offsets — must get the change).
    private static func sameValue(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.int, .double), (.double, .int): return false
        case let (.string(x), .string(y)): return x.utf8.elementsEqual(y.utf8)
        default: return a == b
        }
    }

    /// Equality of array elements compared whole: tells `1` from `1.0` at any depth (`==` does not), so an element
    /// differs when a number inside it changed type.
    private static func sameElement(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case let (.array(x), .array(y)):
            return x.count == y.count && (sharesStorage(x, y) || zip(x, y).allSatisfy { sameElement($0, $1) })
        case let (.object(x), .object(y)):
            guard x.count == y.count else { return false }
            if x.sharesStorage(with: y) { return true }
            if x.hasKeys(inTheOrderOf: y) { return zip(x, y).allSatisfy { sameElement($0.1, $1.1) } }
            return x.allSatisfy { key, value in y[key].map { sameElement(value, $0) } ?? false }
        default: return sameValue(a, b)
        }
    }

    /// Whether two arrays are one storage (then the same, element for element): O(1).
    static func sharesStorage(_ x: [JSONValue], _ y: [JSONValue]) -> Bool {
        x.withUnsafeBufferPointer { a in y.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress && a.count == b.count } }
    }
}
