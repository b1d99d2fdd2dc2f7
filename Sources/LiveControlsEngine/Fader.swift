import LiveControlsProtocol

/// A fader or slider (kind `range`): a number in `min…max` on a grid of `step` (integers or decimals, exact), dragged by
/// one person while everyone watches it move.
///
/// A drag sends `set` at display rate. Every `set` applies (and is acked), but the room sends the control's patches at
/// most every `minIntervalMs` while it changes: a `set` sooner than that after the last patch waits in `value` and goes
/// out with the room's timer at the end of the interval, so the last value is always delivered. The session that sets
/// it holds it (`holding`) until it sends `release`, leaves, or sets nothing for `dragIdleMs`.
public struct Fader: ConfigurableControl {
    public static let kind = "range"
    public static let intents = ["set", "nudge", "release"]
    /// A drag ends this long after its last `set` (reason `lease`).
    public static let dragIdleMs = 1_000
    /// The longest `minIntervalMs`.
    public static let maxIntervalMs = 1_000
    public static var takesDrags: Bool { true }

    /// Who is dragging, and when they last set it.
    public struct Drag: Sendable, Equatable {
        public var session: SessionID
        public var lastSetAt: Instant
    }

    public var label: String
    let grid: DecimalGrid
    /// `min`, `max` and `step` as the config wrote them (rendered so), and in grid units.
    let bounds: (min: JSONValue, max: JSONValue, step: JSONValue)
    let minUnits: Int, maxUnits: Int, stepUnits: Int
    public let minIntervalMs: Int
    /// The latest value, in grid units.
    private(set) var value: Int
    /// The value the room last sent (what `render()` shows), and when.
    private(set) var shown: Int
    private(set) var shownAt: Instant?
    public private(set) var drag: Drag?

    /// A range from its configured numbers (checked by the config reader and the store).
    init(label: String, min: JSONValue, max: JSONValue, step: JSONValue, value: JSONValue?, minIntervalMs: Int) throws(FaderError) {
        guard let pMin = DecimalGrid.places(of: min), let pMax = DecimalGrid.places(of: max), let pStep = DecimalGrid.places(of: step) else {
            throw FaderError(key: "step", "min, max and step must be numbers with at most \(DecimalGrid.maxPlaces) decimal places")
        }
        let grid = DecimalGrid(places: Swift.max(pMin, pMax, pStep))
        guard let lo = grid.units(min.doubleValue!), let hi = grid.units(max.doubleValue!), let st = grid.units(step.doubleValue!) else {
            throw FaderError(key: "max", "min, max and step must be within ±\(DecimalGrid.maxUnits) units of \(grid.places) decimal places")
        }
        guard lo < hi else { throw FaderError(key: "max", "max must be above min") }
        guard st > 0, st <= hi - lo else { throw FaderError(key: "step", "must be above 0 and at most max − min") }
        self.label = label
        self.grid = grid
        self.bounds = (min, max, step)
        self.minUnits = lo
        self.maxUnits = hi
        self.stepUnits = st
        self.minIntervalMs = minIntervalMs
        var start = lo
        if let value {
            guard let v = value.doubleValue, let u = grid.units(v), (lo...hi).contains(u) else {
                throw FaderError(key: "value", "must be a number within min…max")
            }
            start = Self.snap(u, min: lo, max: hi, step: st)
        }
        self.value = start
        self.shown = start
    }

    /// The grid point nearest `units` within `min…max` (the grid runs from `min` by `step`; `max` is on it too), in
    /// integers (exact for every unit count).
    static func snap(_ units: Int, min: Int, max: Int, step: Int) -> Int {
        let offset = units - min  // 0…max − min: both within ±(2^53 − 1)
        var k = offset / step
        if (offset % step) * 2 >= step { k += 1 }
        var u = min + k * step
        if u > max { u -= step }
        if max - units < units - u { u = max }
        return u
    }

    /// The grid point nearest `number` (a value a client sent): found from the number itself, not from its rounding to
    /// the grid's decimal places (0.29 on a grid of 0.2 is 0.2, not 0.4).
    func snap(_ number: Double) -> Int {
        let scale = grid.scale
        let k = ((number * scale - Double(minUnits)) / Double(stepUnits)).rounded(.down)
        let below = Swift.min(maxUnits, minUnits + Swift.max(0, Int(k)) * stepUnits)
        let above = Swift.min(maxUnits, below + stepUnits)
        let candidates = [below, above, maxUnits]
        return candidates.min { abs(Double($0) / scale - number) < abs(Double($1) / scale - number) }!
    }

    public func render() -> JSONValue {
        [
            "kind": .string(Self.kind), "label": .string(label),
            "min": bounds.min, "max": bounds.max, "step": bounds.step, "value": grid.json(shown),
            "minIntervalMs": .int(minIntervalMs),
            "holding": drag.map { ["session": .string($0.session.rawValue)] } ?? .null,
        ]
    }

    public var stateBytes: Int { 256 }
    public var holder: SessionID? { drag?.session }

    public var wakeDeadline: Instant? {
        let flush = shown != value ? shownAt.map { $0.adding(milliseconds: minIntervalMs) } : nil
        let idle = drag.map { $0.lastSetAt.adding(milliseconds: Self.dragIdleMs) }
        switch (flush, idle) {
        case let (f?, i?): return Swift.min(f, i)
        case let (f, i): return f ?? i
        }
    }

    public mutating func apply(_ intent: String, args: IntentArgs, by session: SessionID, at now: Instant, room: RoomView) throws(IntentError) -> ControlEvents {
        switch intent {
        case "set":
            let requested = try number(args, "value")
            guard let u = grid.units(requested), (minUnits...maxUnits).contains(u),
                  requested >= bounds.min.doubleValue!, requested <= bounds.max.doubleValue! else {
                throw IntentError(.outOfRange, "value \(args.object["value"].map(JSONWriter.string) ?? "") is outside \(JSONWriter.string(bounds.min))…\(JSONWriter.string(bounds.max))")
            }
            return move(to: snap(requested), by: session, at: now)
        case "nudge":
            let by = try number(args, "by")
            guard let delta = grid.units(by) else { throw IntentError(.invalidArgs, "args.by is too large") }
            guard delta != 0 else { return .none }
            guard delta > 0 ? value < maxUnits : value > minUnits else {
                throw IntentError(.atBound, "cannot go \(delta > 0 ? "up" : "down"): at the bound")
            }
            let target = Swift.min(maxUnits, Swift.max(minUnits, value + delta))
            return move(to: Self.snap(target, min: minUnits, max: maxUnits, step: stepUnits), by: session, at: now)
        case "release":
            guard let current = drag else { throw IntentError(.notHolder, "nobody is moving \(label)") }
            guard current.session == session else { throw IntentError(.notHolder, "\(label) is being moved by \(current.session)") }
            drag = nil
            flush(at: now)
            return ControlEvents(ended: [HoldEnd(session: session, reason: .release)])
        default:
            throw Self.unknownIntent(intent, known: Self.intents)
        }
    }

    private func number(_ args: IntentArgs, _ key: String) throws(IntentError) -> Double {
        let v = try args.value(key)
        guard let d = v.doubleValue else { throw IntentError(.invalidArgs, "args.\(key) must be a number, got \(v.typeName)") }
        return d
    }

    /// A `set` or `nudge` by `session`: the value moves at once; the patch goes out now when the interval since the last
    /// one has passed (or the move starts a drag, or the server API sent it), else at the end of the interval.
    private mutating func move(to units: Int, by session: SessionID, at now: Instant) -> ControlEvents {
        guard units != value else {
            // Nothing moves (the same value, or a nudge under half a step): the dragger's own hold is kept alive; nobody
            // else's is taken over.
            if drag?.session == session { drag?.lastSetAt = now }
            return .none
        }
        value = units
        guard session != .server else {
            flush(at: now)
            return .none
        }
        var events = ControlEvents()
        if let current = drag, current.session != session { events.ended.append(HoldEnd(session: current.session, reason: .replaced)) }
        let starts = drag?.session != session
        drag = Drag(session: session, lastSetAt: now)
        if starts || shownAt.map({ now >= $0.adding(milliseconds: minIntervalMs) }) ?? true { flush(at: now) }
        return events
    }

    private mutating func flush(at now: Instant) {
        guard shown != value || shownAt == nil else { return }
        shown = value
        shownAt = now
    }

    public mutating func wake(at now: Instant) -> ControlEvents {
        var events = ControlEvents()
        if shown != value, let at = shownAt, now >= at.adding(milliseconds: minIntervalMs) { flush(at: now) }
        if let current = drag, now >= current.lastSetAt.adding(milliseconds: Self.dragIdleMs) {
            drag = nil
            flush(at: now)
            events.ended.append(HoldEnd(session: current.session, reason: .lease))
        }
        return events
    }

    public mutating func sessionLeft(_ session: SessionID, reason: HoldEndReason) -> ControlEvents {
        guard let current = drag, current.session == session else { return .none }
        drag = nil
        shown = value  // what it set is delivered with its leaving
        return ControlEvents(ended: [HoldEnd(session: session, reason: reason)])
    }
}

/// Why a range's numbers do not make a range: the config (or stored) key, and what is wrong.
struct FaderError: Error {
    var key: String
    var message: String
    init(key: String, _ message: String) { self.key = key; self.message = message }
}

extension Fader {
    /// Reads a range from its template entry.
    public init(config node: ConfigNode, id: ControlID, today: CivilDate) throws(ConfigError) {
        _ = try node.object(allowed: ["kind", "label", "min", "max", "step", "value", "minIntervalMs"])
        func number(_ key: String, _ fallback: JSONValue) throws(ConfigError) -> JSONValue {
            guard let v = node[key]?.value, v != .null else { return fallback }
            guard v.doubleValue != nil else { throw node.error(at: key, "expected a number, got \(v.typeName)") }
            return v
        }
        let interval = try node.int("minIntervalMs", default: 16)
        guard (0...Self.maxIntervalMs).contains(interval) else { throw node.error(at: "minIntervalMs", "must be 0…\(Self.maxIntervalMs) (ms)") }
        let label = try node.string("label", default: id.rawValue)
        let min = try number("min", 0), max = try number("max", 100), step = try number("step", 1)
        let value = node["value"]?.value == .null ? nil : node["value"]?.value
        do throws(FaderError) {
            try self.init(label: label, min: min, max: max, step: step, value: value, minIntervalMs: interval)
        } catch {
            throw node.error(at: error.key, error.message)
        }
    }
}
