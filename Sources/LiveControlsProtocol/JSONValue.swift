/// A JSON value as the protocol sees it.
///
/// Integers and doubles are kept apart, and each keeps its type through `JSONWriter` and `JSONParser`:
/// an integer is written without fraction or exponent, a double always with one (`1.0`), so `1` and `1.0`
/// round-trip as themselves. `==` compares numbers by value (`1 == 1.0`); `JSONDiff` tells them apart.
/// Objects keep the order their keys were first inserted in, so documents render in a stable,
/// meaningful order (controls in template order) and encode deterministically.
public enum JSONValue: Sendable, Equatable {
    /// `null`
    case null
    /// `true` or `false`
    case bool(Bool)
    /// A number written without fraction or exponent that fits in `Int`. Written as plain digits.
    case int(Int)
    /// Any other number. Written with a fraction or exponent (`1.0`, `0.1`, `1e+300`); NaN and
    /// infinities, which JSON cannot express, are written as `null`.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object with insertion-ordered keys.
    case object(JSONObject)

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.int(a), .int(b)): return a == b
        case let (.double(a), .double(b)): return a == b
        case let (.int(a), .double(b)), let (.double(b), .int(a)): return Double(a) == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)): return a == b
        default: return false
        }
    }

    /// The JSON type name, for error messages ("expected an integer, got string").
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .int: return "integer"
        case .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    public var objectValue: JSONObject? { if case let .object(o) = self { return o } else { return nil } }
    public var stringValue: String? { if case let .string(s) = self { return s } else { return nil } }
    public var boolValue: Bool? { if case let .bool(b) = self { return b } else { return nil } }
    public var arrayValue: [JSONValue]? { if case let .array(a) = self { return a } else { return nil } }

    /// The value as an `Int` when it is an integer, or a double with an exact integral value.
    public var intValue: Int? {
        switch self {
        case let .int(i): return i
        case let .double(d) where d.rounded() == d && abs(d) < 9.0e15: return Int(d)
        default: return nil
        }
    }

    /// The value as a `Double` when it is any number.
    public var doubleValue: Double? {
        switch self {
        case let .int(i): return Double(i)
        case let .double(d): return d
        default: return nil
        }
    }

    /// `self[key]` for objects, `nil` otherwise.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }
}

/// A JSON object whose keys keep their first insertion order.
///
/// The members live in one array in order; a small object (most are: a control's render, a message) finds a key by
/// comparing it with each (a short key compares faster than it hashes), a large one (a room's presence, a big item)
/// also keeps a dictionary of positions. Measured with callgrind on the fan-out path (docs/benchmarks/HISTORY.md): the
/// dictionary-and-key-list form hashed every key on each insert, lookup and iteration step.
public struct JSONObject: Sendable, Equatable, Sequence {
    public typealias Element = (key: String, value: JSONValue)

    /// A member (a struct, not the `Element` tuple: an array of tuples is destroyed through the runtime's generic
    /// tuple code).
    fileprivate struct Member: Sendable {
        let key: String
        var value: JSONValue
    }

    private var entries: [Member] = []
    /// Positions by key, only while the object has more than `indexedCount` members.
    private var index: [String: Int]? = nil
    static let indexedCount = 16

    public init() {}

    public init(_ pairs: KeyValuePairs<String, JSONValue>) {
        entries.reserveCapacity(pairs.count)
        for (k, v) in pairs { self[k] = v }
    }

    public init(pairs: [(String, JSONValue)]) {
        entries.reserveCapacity(pairs.count)
        for (k, v) in pairs { self[k] = v }
    }

    /// Members whose keys are known to differ (a literal written in code): appended without looking for each key
    /// (a control's rendering is one per intent, and the look is a string comparison per pair of keys).
    init(distinctKeys pairs: [(String, JSONValue)]) {
        assert(Set(pairs.map(\.0)).count == pairs.count, "duplicate keys in \(pairs.map(\.0))")
        entries.reserveCapacity(pairs.count)
        for (k, v) in pairs { entries.append(Member(key: k, value: v)) }
        if entries.count > Self.indexedCount { reindex() }
    }

    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }
    /// The keys in order.
    public var keys: [String] { entries.map(\.key) }

    private func position(of key: String) -> Int? {
        if let index { return index[key] }
        for i in entries.indices where entries[i].key == key { return i }
        return nil
    }

    /// Setting a new key appends it; setting an existing one keeps its place; setting `nil` removes the key (O(n)).
    public subscript(key: String) -> JSONValue? {
        get { position(of: key).map { entries[$0].value } }
        set {
            if let i = position(of: key) {
                if let newValue {
                    entries[i].value = newValue
                } else {
                    entries.remove(at: i)
                    if index != nil {
                        if entries.count > Self.indexedCount {
                            // Only the members after the removed one moved.
                            index![key] = nil
                            for j in i..<entries.count { index![entries[j].key] = j }
                        } else {
                            index = nil
                        }
                    }
                }
            } else if let newValue {
                append(key, newValue)
            }
        }
    }

    /// Removes the members whose keys are in `keys`, in one pass (O(n), however many go).
    public mutating func removeAll(keys: Set<String>) {
        guard !keys.isEmpty else { return }
        entries.removeAll { keys.contains($0.key) }
        index = nil
        if entries.count > Self.indexedCount { reindex() }
    }

    /// Appends a member unless `key` is present (then returns false): the parser's duplicate check and insert in one
    /// look for the key.
    mutating func appendNew(_ key: String, _ value: JSONValue) -> Bool {
        guard position(of: key) == nil else { return false }
        append(key, value)
        return true
    }

    /// Appends a member whose key is not present, keeping the index.
    private mutating func append(_ key: String, _ value: JSONValue) {
        entries.append(Member(key: key, value: value))
        if index != nil {
            index![key] = entries.count - 1
        } else if entries.count > Self.indexedCount {
            reindex()  // the object just grew past the size searched
        }
    }

    private mutating func reindex() {
        var positions = [String: Int](minimumCapacity: Swift.max(entries.count, entries.capacity))
        for (i, entry) in entries.enumerated() { positions[entry.key] = i }
        index = positions
    }

    /// Whether both are one storage (a copy, not a rebuild): then they are the same in every respect, key order and
    /// spellings and number types included. O(1): a list renders its items' kept objects again for every intent, and
    /// comparing each member by member was most of a step's cost in a long list (docs/benchmarks/HISTORY.md, Stop 40).
    public func sharesStorage(with other: JSONObject) -> Bool {
        entries.count == other.entries.count
            && entries.withUnsafeBufferPointer { a in other.entries.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress } }
    }

    /// Whether `other` has exactly these keys, in the same order.
    func hasKeys(inTheOrderOf other: JSONObject) -> Bool {
        entries.count == other.entries.count && zip(entries, other.entries).allSatisfy { $0.key == $1.key }
    }

    public struct Iterator: IteratorProtocol {
        fileprivate var members: IndexingIterator<[Member]>
        public mutating func next() -> Element? {
            members.next().map { ($0.key, $0.value) }
        }
    }

    public func makeIterator() -> Iterator {
        Iterator(members: entries.makeIterator())
    }

    /// Objects are equal when they hold the same keys with equal values, in any order (RFC 8259).
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.entries.count == rhs.entries.count else { return false }
        for (i, entry) in lhs.entries.enumerated() {
            // In the same order (the usual case) members compare pairwise; otherwise by key (keys are unique, and
            // the counts are equal, so every key of one found in the other means the same keys).
            if rhs.entries[i].key == entry.key {
                guard rhs.entries[i].value == entry.value else { return false }
            } else {
                guard let j = rhs.position(of: entry.key), rhs.entries[j].value == entry.value else { return false }
            }
        }
        return true
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// A literal's keys must differ (checked in debug builds only).
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(distinctKeys: elements))
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// A literal's keys must differ (checked in debug builds only).
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(distinctKeys: elements)
    }
}
