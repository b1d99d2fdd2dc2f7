import LiveControlsProtocol

/// A position in an unbounded domain (the InfiniteScrollViews seed), shared by everyone in the room.
///
/// `next`/`prev` move by `step` (the seed's increase/decrease actions); a move that would pass `min` or
/// `max` is refused, like the seed's `nil` (no clamping: positions stay on the step grid). Without bounds
/// a domain still ends where it can be shown (years 0001–9999, integers within ±(2^53 − 1)). The state
/// carries a `window` of up to `radius` positions on each side, within bounds, so clients can pre-render.
public struct Pager: HoldableControl {
    public static let kind = "pager"
    public static let intents = ["next", "prev", "goto", "press", "release", "refresh"]

    public var label: String
    public let domain: PagerDomain
    /// The current position as an ordinal (see `PagerPosition`).
    public private(set) var position: Int
    /// How many times the pages' content was declared changed (`refresh`): clients reload what they show when it moves
    /// (the seed's `refreshAction` and `updateBinding`).
    public internal(set) var generation = 0
    /// Configured bounds as ordinals; `nil` is unbounded (up to the domain's natural bound).
    public let min: Int?
    public let max: Int?
    /// The bounds the config gave as `"current"` (`"min"`, `"max"`): resolved to the month or day the config was
    /// read on. A stored room keeps the positions it was made with; the changed-config rule compares the setting
    /// (`"current"`), not the day it stood for, so a restart on a later day is no change.
    public internal(set) var currentBounds: [String] = []
    public let step: Int
    public let radius: Int
    public var timing: HoldTiming
    public var hold: Hold?

    public init(label: String, domain: PagerDomain, position: Int, min: Int? = nil, max: Int? = nil, step: Int = 1,
                radius: Int = 2, timing: HoldTiming = HoldTiming(intervalMs: 250)) {
        self.label = label
        self.domain = domain
        self.min = min
        self.max = max
        self.step = step
        self.radius = radius
        self.timing = timing
        self.position = position
        precondition(step >= 1 && radius >= 0 && bounds.contains(position))
    }

    /// Where positions may be: the configured bounds within the domain's natural ones.
    public var bounds: ClosedRange<Int> {
        let natural = PagerPosition.naturalBounds(domain)
        return Swift.max(min ?? natural.lowerBound, natural.lowerBound)...Swift.min(max ?? natural.upperBound, natural.upperBound)
    }

    /// The position `n` steps from the current one, when within bounds.
    public func neighbour(_ n: Int) -> Int? {
        let (offset, overflow) = n.multipliedReportingOverflow(by: step)
        guard !overflow else { return nil }
        let (p, overflow2) = position.addingReportingOverflow(offset)
        guard !overflow2, bounds.contains(p) else { return nil }
        return p
    }

    /// The current position and its neighbours within `radius` steps, in order, within bounds.
    public var window: [Int] { (-radius...radius).compactMap { neighbour($0) } }

    public func json(_ ordinal: Int) -> JSONValue { PagerPosition.json(ordinal, in: domain) }

    public func render() -> JSONValue {
        [
            "kind": .string(Self.kind), "label": .string(label),
            "domain": .string(domain.rawValue),
            "position": json(position),
            "min": min.map(json) ?? .null, "max": max.map(json) ?? .null,
            "step": .int(step),
            "canNext": .bool(canStep(.next)), "canPrev": .bool(canStep(.prev)),
            "holding": holdingJSON,
            "radius": .int(radius),
            "window": .array(window.map(json)),
            "generation": .int(generation),
        ]
    }

    public func canStep(_ direction: Direction) -> Bool {
        neighbour(direction == .next ? 1 : -1) != nil
    }

    public mutating func step(_ direction: Direction) {
        if let p = neighbour(direction == .next ? 1 : -1) { position = p }
    }

    /// `count` steps on, or as many as fit before the bound (pagers do not wrap; positions stay on the step grid).
    public mutating func step(_ direction: Direction, count: Int) {
        // Both bounds are within ±(2^53 − 1), so the distance to one fits an Int.
        let room = direction == .next ? (bounds.upperBound - position) / step : (position - bounds.lowerBound) / step
        let n = Swift.min(count, room)
        if let p = neighbour(direction == .next ? n : -n) { position = p }
    }

    public mutating func apply(_ intent: String, args: IntentArgs, by session: SessionID, at now: Instant, room: RoomView) throws(IntentError) -> ControlEvents {
        if let events = try applySequential(intent, args: args, by: session, at: now) { return events }
        if intent == "refresh" {
            generation += 1
            return .none
        }
        guard intent == "goto" else { throw Self.unknownIntent(intent, known: Self.intents) }
        let raw = try args.value("position")
        let target: Int
        do { target = try PagerPosition.parse(raw, in: domain) } catch {
            throw IntentError(.invalidArgs, "args.position: \(error.message)")
        }
        guard bounds.contains(target) else {
            throw IntentError(.outOfRange, "position \(JSONWriter.string(json(target))) is outside \(JSONWriter.string(json(bounds.lowerBound)))…\(JSONWriter.string(json(bounds.upperBound)))")
        }
        position = target
        guard let hold, !canStep(hold.direction) else { return .none }
        self.hold = nil
        return ControlEvents(ended: [HoldEnd(session: hold.session, reason: .bound)])
    }
}
