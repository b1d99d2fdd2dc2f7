import LiveControlsProtocol

extension Stepper: StorableControl {
    public static let stateKeys: Set<String> = ["value", "hold"]

    /// `{label, min, max, step, wrap, value, timing, hold?}`.
    public var storedState: JSONValue {
        var o: JSONObject = [
            "label": .string(label), "min": .int(min), "max": .int(max), "step": .int(step), "wrap": .bool(wrap),
            "value": .int(value),
        ]
        storeHold(into: &o)
        return .object(o)
    }

    public init(storedState: JSONValue) throws(StoredStateError) {
        let s = StoredValue(storedState)
        let min = try s.int("min"), max = try s.int("max"), step = try s.int("step"), value = try s.int("value")
        guard min <= max else { throw s.error("min \(min) is above max \(max)") }
        guard step >= 1 else { throw s.error("step \(step) is below 1") }
        guard (min...max).contains(value) else { throw s.error("value \(value) is outside \(min)…\(max)") }
        self.init(label: try s.string("label"), min: min, max: max, value: value, step: step, wrap: try s.bool("wrap"),
                  timing: try HoldTiming(stored: try s.required("timing")))
        hold = try Self.storedHold(s)
    }
}
