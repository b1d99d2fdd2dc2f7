import LiveControlsProtocol

/// A control whose exact state the store keeps, as a `JSONValue`.
///
/// `storedState` holds everything needed to rebuild the control as it is (not what clients see: that is
/// `render()`), and `init(storedState:)` rebuilds it. The shape of each kind is fixed: it is the shape the
/// synthesized `Codable` of earlier releases wrote (absent optionals left out, `SessionID` as
/// `{"rawValue": …}`, `Instant` as `{"nanoseconds": …}`), so data directories written by those releases
/// restore as they are. Numbers keep their type: a double stays a double (`JSONWriter` writes `1.0`).
public protocol StorableControl: Control {
    /// The control's exact state.
    var storedState: JSONValue { get }
    /// Rebuilds the control from `storedState`, or says what is missing or malformed, and where.
    init(storedState: JSONValue) throws(StoredStateError)
    /// Settings kept inside a key of `storedState` that use changes (`ControlCoding.stateKeys`), for the changed-config
    /// rule; none for most kinds.
    var settingsInsideState: JSONObject { get }
    /// Keys of `storedState` whose value the config resolved when the control was made (a pager's `"current"`
    /// bound: that day's month), left out of the changed-config rule: the setting that made them is stored beside.
    var settingsResolvedAtCreation: [String] { get }
    /// The keys of the stored state that hold what use changed (values, selections, holds, items, steps gone
    /// through): the other keys hold what the config set (`ControlCoding.configuration(of:)`).
    static var stateKeys: Set<String> { get }
    /// A state stored by an earlier release, brought to this one's shape before it is read: a setting it did not keep
    /// yet is taken from `configured`, the control as the template makes it now. None for most kinds.
    static func upgradeStored(_ state: inout JSONObject, configuredAs configured: Self)
}

extension StorableControl {
    public var settingsInsideState: JSONObject { [:] }
    public var settingsResolvedAtCreation: [String] { [] }
    public static func upgradeStored(_ state: inout JSONObject, configuredAs configured: Self) {}
}

/// Why a stored state cannot be restored: where inside it (a JSON Pointer) and what is wrong.
public struct StoredStateError: Error, Equatable, Sendable, CustomStringConvertible {
    public var path: String
    public var message: String

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { "stored state at \(path.isEmpty ? "/" : path): \(message)" }
}

/// A value inside a stored state that knows where it is, so every error names its place.
///
/// Members that are absent or `null` read as missing: optionals are left out when `nil`.
public struct StoredValue: Sendable {
    public var value: JSONValue
    public var pointer: JSONPointer

    public init(_ value: JSONValue, pointer: JSONPointer = .root) {
        self.value = value
        self.pointer = pointer
    }

    public func error(_ message: String) -> StoredStateError {
        StoredStateError(path: pointer.description, message: message)
    }

    /// The member `key`, or nil when it is absent or `null`.
    public subscript(key: String) -> StoredValue? {
        guard let v = value.objectValue?[key], v != .null else { return nil }
        return StoredValue(v, pointer: pointer.appending(key))
    }

    /// The member `key`; absent or `null` is an error.
    public func required(_ key: String) throws(StoredStateError) -> StoredValue {
        guard value.objectValue != nil else { throw error("expected an object, got \(value.typeName)") }
        guard let member = self[key] else { throw StoredStateError(path: pointer.appending(key).description, message: "missing") }
        return member
    }

    /// The member `key` as it is, `null` included; only an absent key is an error.
    public func json(_ key: String) throws(StoredStateError) -> JSONValue {
        guard let o = value.objectValue else { throw error("expected an object, got \(value.typeName)") }
        guard let v = o[key] else { throw StoredStateError(path: pointer.appending(key).description, message: "missing") }
        return v
    }

    public func int() throws(StoredStateError) -> Int {
        guard case let .int(i) = value else { throw error("expected an integer, got \(value.typeName)") }
        return i
    }

    public func string() throws(StoredStateError) -> String {
        guard let s = value.stringValue else { throw error("expected a string, got \(value.typeName)") }
        return s
    }

    public func bool() throws(StoredStateError) -> Bool {
        guard let b = value.boolValue else { throw error("expected true or false, got \(value.typeName)") }
        return b
    }

    public func array() throws(StoredStateError) -> [StoredValue] {
        guard let a = value.arrayValue else { throw error("expected an array, got \(value.typeName)") }
        return a.indices.map { StoredValue(a[$0], pointer: pointer.appending(String($0))) }
    }

    /// A string that must be one of an enum's raw values.
    public func raw<T: RawRepresentable>(_ type: T.Type) throws(StoredStateError) -> T where T.RawValue == String {
        let s = try string()
        guard let v = T(rawValue: s) else { throw error("unknown \(T.self) \"\(s)\"") }
        return v
    }

    public func int(_ key: String) throws(StoredStateError) -> Int { try required(key).int() }
    public func string(_ key: String) throws(StoredStateError) -> String { try required(key).string() }
    public func bool(_ key: String) throws(StoredStateError) -> Bool { try required(key).bool() }
    public func array(_ key: String) throws(StoredStateError) -> [StoredValue] { try required(key).array() }
    public func optionalInt(_ key: String) throws(StoredStateError) -> Int? { try self[key]?.int() }
    public func optionalString(_ key: String) throws(StoredStateError) -> String? { try self[key]?.string() }
}

extension JSONObject {
    /// Sets `key` only when `value` is not nil: a stored state leaves absent optionals out.
    mutating func setIfPresent(_ key: String, _ value: JSONValue?) {
        if let value { self[key] = value }
    }
}
