import LiveControlsProtocol

extension Fader: StorableControl {
    public static let stateKeys: Set<String> = ["value"]

    /// `{label, min, max, step, minIntervalMs, value}`: the numbers as the config wrote them, and the latest value (a drag
    /// and a value not yet sent do not outlive the process: the value is stored as sent to nobody yet, and shown at load).
    public var storedState: JSONValue {
        [
            "label": .string(label), "min": bounds.min, "max": bounds.max, "step": bounds.step,
            "minIntervalMs": .int(minIntervalMs), "value": grid.json(value),
        ]
    }

    public init(storedState: JSONValue) throws(StoredStateError) {
        let s = StoredValue(storedState)
        let label = try s.string("label"), min = try s.json("min"), max = try s.json("max"), step = try s.json("step")
        let value = try s.json("value"), interval = try s.int("minIntervalMs")
        guard (0...Self.maxIntervalMs).contains(interval) else { throw s.error("minIntervalMs \(interval) is outside 0…\(Self.maxIntervalMs)") }
        do throws(FaderError) {
            try self.init(label: label, min: min, max: max, step: step, value: value, minIntervalMs: interval)
        } catch {
            throw s.error("\(error.key): \(error.message)")
        }
    }
}
