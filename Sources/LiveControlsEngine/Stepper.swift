import LiveControlsProtocol

/// An integer stepper (Swift Talk's hold-to-increment stepper), shared by everyone in the room.
///
/// State: `value` in `min…max`, moved by `step` (clamped to the bound it would pass); with `wrap`,
/// stepping past a bound lands on the other one. `next`/`prev`, `set {value}`, and hold-to-repeat.
public struct Stepper: HoldableControl {
    public static let kind = "stepper"
    /// The largest magnitude of `min`, `max` and `step`: 2^53 − 1, JSON's safe integer.
    public static let maxMagnitude = 9_007_199_254_740_991
    public static let intents = ["next", "prev", "set", "press", "release"]

    public var label: String
    public var min: Int
    public var max: Int
    public var step: Int
    public var wrap: Bool
    public private(set) var value: Int
    public var timing: HoldTiming
    public var hold: Hold?

    public init(label: String, min: Int, max: Int, value: Int, step: Int = 1, wrap: Bool = false, timing: HoldTiming = HoldTiming()) {
        precondition(min <= max && step >= 1 && (min...max).contains(value))
        self.label = label
        self.min = min
        self.max = max
        self.value = value
        self.step = step
        self.wrap = wrap
        self.timing = timing
    }

    public func render() -> JSONValue {
        [
            "kind": .string(Self.kind), "label": .string(label),
            "value": .int(value), "min": .int(min), "max": .int(max), "step": .int(step), "wrap": .bool(wrap),
            "canNext": .bool(canStep(.next)), "canPrev": .bool(canStep(.prev)),
            "holding": holdingJSON,
        ]
    }

    public func canStep(_ direction: Direction) -> Bool {
        guard min < max else { return false }
        if wrap { return true }
        return direction == .next ? value < max : value > min
    }

    public mutating func step(_ direction: Direction) {
        switch direction {
        case .next: value = value >= max ? min : value + Swift.min(step, max - value)
        case .prev: value = value <= min ? max : value - Swift.min(step, value - min)
        }
    }

    /// `count` steps at once, exactly as `count` calls of `step(_:)` would go: clamped to the bound it passes, and with
    /// `wrap` on from that bound to the other one and round the cycle (in closed form: `count` may be 2^53 − 1).
    public mutating func step(_ direction: Direction, count: Int) {
        switch direction {
        case .next: value = Self.advance(value, by: count, step: step, min: min, max: max, wrap: wrap)
        case .prev: value = -Self.advance(-value, by: count, step: step, min: -max, max: -min, wrap: wrap)  // mirrored
        }
    }

    /// `value` moved `count` steps toward `max`; `min < max`, all within ±(2^53 − 1).
    static func advance(_ value: Int, by count: Int, step: Int, min: Int, max: Int, wrap: Bool) -> Int {
        /// `from` moved `n` steps up, clamped at `max`.
        func up(_ from: Int, _ n: Int) -> Int {
            let (d, overflow) = n.multipliedReportingOverflow(by: step)
            return overflow || d >= max - from ? max : from + d
        }
        guard wrap else { return up(value, count) }
        let toMax = (max - value + step - 1) / step  // steps that reach max (0 at max)
        if count <= toMax { return up(value, count) }
        let cycle = (max - min + step - 1) / step + 1  // min → … → max → min
        return up(min, (count - toMax - 1) % cycle)
    }

    public mutating func apply(_ intent: String, args: IntentArgs, by session: SessionID, at now: Instant, room: RoomView) throws(IntentError) -> ControlEvents {
        if let events = try applySequential(intent, args: args, by: session, at: now) { return events }
        guard intent == "set" else { throw Self.unknownIntent(intent, known: Self.intents) }
        let newValue = try args.int("value")
        guard (min...max).contains(newValue) else {
            throw IntentError(.outOfRange, "value \(newValue) is outside \(min)…\(max)")
        }
        value = newValue
        var events = ControlEvents()
        if let hold, !canStep(hold.direction) {
            self.hold = nil
            events.ended.append(HoldEnd(session: hold.session, reason: .bound))
        }
        return events
    }
}

extension Stepper {
    /// Reads a stepper from its template entry.
    public init(config node: ConfigNode, id: ControlID) throws(ConfigError) {
        _ = try node.object(allowed: ["kind", "label", "min", "max", "step", "value", "wrap", "hold"])
        // JSON's safe integers (±(2^53 − 1)): every client reads them exactly, and no step can overflow.
        let limit = Self.maxMagnitude
        let min = try node.int("min", default: 0)
        guard (-limit...limit).contains(min) else { throw node.error(at: "min", "must be within ±\(limit)") }
        let max = try node.int("max", default: 100)
        guard (-limit...limit).contains(max) else { throw node.error(at: "max", "must be within ±\(limit)") }
        guard min <= max else { throw node.error(at: "max", "max (\(max)) must be ≥ min (\(min))") }
        let step = try node.int("step", default: 1)
        guard (1...limit).contains(step) else { throw node.error(at: "step", "must be 1…\(limit)") }
        let value = try node.int("value", default: min)
        guard (min...max).contains(value) else { throw node.error(at: "value", "\(value) is outside \(min)…\(max)") }
        self.init(label: try node.string("label", default: id.rawValue), min: min, max: max, value: value,
                  step: step, wrap: try node.bool("wrap", default: false),
                  timing: try node.holdTiming(defaultIntervalMs: 100))
    }
}
