import LiveControlsProtocol

/// A config mistake: which file, where inside it (a JSON Pointer), and what is wrong.
public struct ConfigError: Error, Equatable, Sendable, CustomStringConvertible {
    public var file: String
    public var path: String
    public var message: String
    /// Where `path` is in the file (lines and columns from 1), when the config was read from text.
    public var line: Int?
    public var column: Int?

    public init(file: String = "<built-in>", path: String, message: String) {
        self.file = file
        self.path = path
        self.message = message
    }

    public var description: String {
        let place = line.map { ":\($0):\(column ?? 1)" } ?? ""
        return "\(file)\(place): at \(path.isEmpty ? "/" : path): \(message)"
    }
}

/// A value inside a config document that knows where it is, so every error can name its place.
public struct ConfigNode: Sendable {
    public var value: JSONValue
    public var pointer: JSONPointer
    public var file: String

    public init(_ value: JSONValue, file: String, pointer: JSONPointer = .root) {
        self.value = value
        self.file = file
        self.pointer = pointer
    }

    public func error(_ message: String) -> ConfigError {
        ConfigError(file: file, path: pointer.description, message: message)
    }

    public func error(at key: String, _ message: String) -> ConfigError {
        ConfigError(file: file, path: pointer.appending(key).description, message: message)
    }

    /// This node as an object, refusing keys outside `allowed` (catches typos like "mim").
    public func object(allowed: [String]? = nil) throws(ConfigError) -> JSONObject {
        guard let o = value.objectValue else { throw error("expected an object, got \(value.typeName)") }
        if let allowed {
            for key in o.keys where !allowed.contains(key) {
                throw error(at: key, "unknown key \"\(key)\" (allowed: \(allowed.joined(separator: ", ")))")
            }
        }
        return o
    }

    public subscript(key: String) -> ConfigNode? {
        guard let v = value.objectValue?[key], v != .null else { return nil }
        return ConfigNode(v, file: file, pointer: pointer.appending(key))
    }

    public func child(_ index: Int) -> ConfigNode? {
        guard let a = value.arrayValue, a.indices.contains(index) else { return nil }
        return ConfigNode(a[index], file: file, pointer: pointer.appending(String(index)))
    }

    public func array() throws(ConfigError) -> [ConfigNode] {
        guard let a = value.arrayValue else { throw error("expected an array, got \(value.typeName)") }
        return a.indices.map { ConfigNode(a[$0], file: file, pointer: pointer.appending(String($0))) }
    }

    /// The members of an object, in order, as nodes.
    public func members() throws(ConfigError) -> [(String, ConfigNode)] {
        let o = try object()
        return o.keys.map { ($0, ConfigNode(o[$0]!, file: file, pointer: pointer.appending($0))) }
    }

    public func int(_ key: String, default defaultValue: Int? = nil) throws(ConfigError) -> Int {
        guard let node = self[key] else {
            if let defaultValue { return defaultValue }
            throw error(at: key, "required integer is missing")
        }
        guard case .int(let i) = node.value else { throw node.error("expected an integer, got \(node.value.typeName)") }
        return i
    }

    public func optionalInt(_ key: String) throws(ConfigError) -> Int? {
        guard self[key] != nil else { return nil }
        return try int(key)
    }

    public func string(_ key: String, default defaultValue: String? = nil) throws(ConfigError) -> String {
        guard let node = self[key] else {
            if let defaultValue { return defaultValue }
            throw error(at: key, "required string is missing")
        }
        guard let s = node.value.stringValue else { throw node.error("expected a string, got \(node.value.typeName)") }
        return s
    }

    public func optionalString(_ key: String) throws(ConfigError) -> String? {
        guard self[key] != nil else { return nil }
        return try string(key)
    }

    public func bool(_ key: String, default defaultValue: Bool) throws(ConfigError) -> Bool {
        guard let node = self[key] else { return defaultValue }
        guard let b = node.value.boolValue else { throw node.error("expected true or false, got \(node.value.typeName)") }
        return b
    }

    /// Hold timing under `hold`, with per-kind default interval.
    public func holdTiming(defaultIntervalMs: Int) throws(ConfigError) -> HoldTiming {
        guard let node = self["hold"] else { return HoldTiming(intervalMs: defaultIntervalMs) }
        _ = try node.object(allowed: ["delayMs", "intervalMs", "minIntervalMs", "accelerationMs", "maxHoldMs"])
        let interval = try node.int("intervalMs", default: defaultIntervalMs)
        let timing = HoldTiming(
            delayMs: try node.int("delayMs", default: 500),
            intervalMs: interval,
            minIntervalMs: try node.int("minIntervalMs", default: interval),
            accelerationMs: try node.int("accelerationMs", default: 0),
            maxHoldMs: try node.int("maxHoldMs", default: 30_000))
        // At most a day each (HoldTiming.maxMs): deadlines are nanoseconds from the press, and no hold outlives that.
        let day = HoldTiming.maxMs
        guard (0...day).contains(timing.delayMs) else { throw node.error(at: "delayMs", "must be 0…\(day)") }
        guard (1...day).contains(timing.intervalMs) else { throw node.error(at: "intervalMs", "must be 1…\(day)") }
        guard timing.minIntervalMs >= 1, timing.minIntervalMs <= timing.intervalMs else {
            throw node.error(at: "minIntervalMs", "must be between 1 and intervalMs (\(timing.intervalMs))")
        }
        guard (0...day).contains(timing.accelerationMs) else { throw node.error(at: "accelerationMs", "must be 0…\(day)") }
        guard (1...day).contains(timing.maxHoldMs) else { throw node.error(at: "maxHoldMs", "must be 1…\(day)") }
        return timing
    }
}
