import LiveControlsProtocol

/// A connection's identity inside rooms (`welcome.session`).
public struct SessionID: Hashable, Sendable, Codable, CustomStringConvertible, Comparable {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
    public static func < (a: SessionID, b: SessionID) -> Bool { a.rawValue < b.rawValue }
}

/// A control's id inside its room (`/controls/<id>`).
public struct ControlID: Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
}

/// A point on a monotonic clock, in nanoseconds from an arbitrary origin.
public struct Instant: Comparable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var nanoseconds: UInt64
    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }
    public static func milliseconds(_ ms: Int) -> Instant { Instant(nanoseconds: UInt64(ms) * 1_000_000) }
    public static func < (a: Instant, b: Instant) -> Bool { a.nanoseconds < b.nanoseconds }
    public func adding(milliseconds ms: Int) -> Instant { Instant(nanoseconds: nanoseconds &+ UInt64(max(0, ms)) * 1_000_000) }
    public var description: String { "\(Double(nanoseconds) / 1e6)ms" }
}

/// Where a sequential control moves.
public enum Direction: String, Sendable, Codable, CaseIterable {
    case next, prev
}

/// A refused intent: its protocol error code and a message for people.
public struct IntentError: Error, Equatable, Sendable {
    public var code: ErrorCode
    public var message: String
    /// Who made the change an undo conflicts with (`{session, name, user}`), when a member did.
    public var by: JSONObject?
    public init(_ code: ErrorCode, _ message: String) { self.code = code; self.message = message }
}

/// Typed access to an intent's `args`, with `invalid_args` errors that name the field.
public struct IntentArgs: Sendable {
    public var object: JSONObject
    public init(_ object: JSONObject = JSONObject()) { self.object = object }

    public func value(_ key: String) throws(IntentError) -> JSONValue {
        guard let v = object[key] else { throw IntentError(.invalidArgs, "missing args.\(key)") }
        return v
    }

    public func int(_ key: String) throws(IntentError) -> Int {
        let v = try value(key)
        guard case .int(let i) = v else { throw IntentError(.invalidArgs, "args.\(key) must be an integer, got \(describe(v))") }
        return i
    }

    public func bool(_ key: String) throws(IntentError) -> Bool {
        let v = try value(key)
        guard case .bool(let b) = v else { throw IntentError(.invalidArgs, "args.\(key) must be true or false, got \(v.typeName)") }
        return b
    }

    public func string(_ key: String) throws(IntentError) -> String {
        let v = try value(key)
        guard let s = v.stringValue else { throw IntentError(.invalidArgs, "args.\(key) must be a string, got \(v.typeName)") }
        return s
    }

    public func optionalString(_ key: String) throws(IntentError) -> String? {
        guard let v = object[key], v != .null else { return nil }
        guard let s = v.stringValue else { throw IntentError(.invalidArgs, "args.\(key) must be a string, got \(v.typeName)") }
        return s
    }

    /// The largest `count` a relative move takes: 2^53 − 1, JSON's safe integer.
    public static let maxCount = 9_007_199_254_740_991

    /// `args.count` of a relative move (`next`/`prev`): 1 when absent or null, else an integer in 1…2^53 − 1.
    public func count(_ key: String = "count") throws(IntentError) -> Int {
        guard let v = object[key], v != .null else { return 1 }
        guard case .int(let n) = v else { throw IntentError(.invalidArgs, "args.\(key) must be an integer, got \(describe(v))") }
        guard (1...Self.maxCount).contains(n) else { throw IntentError(.invalidArgs, "args.\(key) must be 1…\(Self.maxCount), got \(n)") }
        return n
    }

    public func direction(_ key: String = "direction") throws(IntentError) -> Direction {
        let s = try string(key)
        guard let d = Direction(rawValue: s) else { throw IntentError(.invalidArgs, "args.\(key) must be \"next\" or \"prev\", got \"\(s)\"") }
        return d
    }

    private func describe(_ v: JSONValue) -> String {
        if case .double(let d) = v { return "\(d)" }
        return v.typeName
    }
}
