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
public struct JSONObject: Sendable, Equatable, Sequence {
    public private(set) var keys: [String] = []
    private var storage: [String: JSONValue] = [:]

    public init() {}

    public init(_ pairs: KeyValuePairs<String, JSONValue>) {
        keys.reserveCapacity(pairs.count)
        storage.reserveCapacity(pairs.count)
        for (k, v) in pairs { self[k] = v }
    }

    public init(pairs: [(String, JSONValue)]) {
        keys.reserveCapacity(pairs.count)
        storage.reserveCapacity(pairs.count)
        for (k, v) in pairs { self[k] = v }
    }

    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }

    /// Reading is O(1); setting a new key appends it; setting `nil` removes the key (O(n)).
    public subscript(key: String) -> JSONValue? {
        get { storage[key] }
        set {
            if let newValue {
                if storage.updateValue(newValue, forKey: key) == nil { keys.append(key) }
            } else if storage.removeValue(forKey: key) != nil {
                keys.removeAll { $0 == key }
            }
        }
    }

    public func makeIterator() -> AnyIterator<(key: String, value: JSONValue)> {
        var index = 0
        return AnyIterator {
            guard index < keys.count else { return nil }
            defer { index += 1 }
            let key = keys[index]
            return (key, storage[key]!)
        }
    }

    /// Objects are equal when they hold the same keys with equal values, in any order (RFC 8259).
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.storage == rhs.storage
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
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(pairs: elements))
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(pairs: elements)
    }
}
