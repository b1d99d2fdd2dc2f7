import LiveControlsProtocol

/// Hold-to-repeat timing, from the template (all in milliseconds).
///
/// A press steps at once; the first repeat comes `delayMs` after the press, then repeats come every
/// `intervalMs`, each gap shortened by `accelerationMs` down to `minIntervalMs`. Every deadline is
/// computed from the press instant, so late timer firings never make the sequence drift.
public struct HoldTiming: Sendable, Equatable {
    public var delayMs: Int
    public var intervalMs: Int
    public var minIntervalMs: Int
    public var accelerationMs: Int
    public var maxHoldMs: Int

    public init(delayMs: Int = 500, intervalMs: Int = 100, minIntervalMs: Int? = nil, accelerationMs: Int = 0, maxHoldMs: Int = 30_000) {
        self.delayMs = delayMs
        self.intervalMs = intervalMs
        self.minIntervalMs = minIntervalMs ?? intervalMs
        self.accelerationMs = accelerationMs
        self.maxHoldMs = maxHoldMs
    }

    /// The longest any of the timings may be: a day, in milliseconds.
    public static let maxMs = 86_400_000

    /// The gap after repeat number `repeatIndex` (0 = the gap between the first and second repeat).
    public func interval(afterRepeat repeatIndex: Int) -> Int {
        // A long hold's repeats times the acceleration can pass Int's range: it is past the shortest gap long before.
        let (shortening, overflow) = repeatIndex.multipliedReportingOverflow(by: accelerationMs)
        guard !overflow, shortening < intervalMs else { return minIntervalMs }
        return max(minIntervalMs, intervalMs - shortening)
    }
}

/// A running hold on a sequential control.
public struct Hold: Sendable, Equatable {
    public var session: SessionID
    public var direction: Direction
    public var pressedAt: Instant
    /// When the next repeat is due.
    public var nextTick: Instant
    /// Repeats applied so far (the immediate step of the press is not counted).
    public var repeats: Int
    /// When the hold ends unless renewed by another press from its holder.
    public var leaseDeadline: Instant

    public var json: JSONValue {
        ["session": .string(session.rawValue), "direction": .string(direction.rawValue)]
    }
}

/// A control that steps in a direction and can be held: stepper, list, pager.
///
/// Conformers store `hold` and `timing` and say how to step; this extension gives them
/// `press`, `release`, timer wake-ups and hold clean-up with identical semantics.
public protocol HoldableControl: Control {
    var hold: Hold? { get set }
    var timing: HoldTiming { get }
    /// Whether one step in `direction` is possible now (always, when the control wraps).
    func canStep(_ direction: Direction) -> Bool
    /// Takes one step; only called when `canStep(direction)`.
    mutating func step(_ direction: Direction)
    /// Takes `count` steps (≥ 1) at once, as `count` calls of `step` would, stopping at a bound the control does not
    /// wrap past; only called when `canStep(direction)`. In closed form: `count` may be 2^53 − 1.
    mutating func step(_ direction: Direction, count: Int)
}

extension HoldableControl {
    public var holder: SessionID? { hold?.session }

    public var wakeDeadline: Instant? {
        guard let hold else { return nil }
        return min(hold.nextTick, hold.leaseDeadline)
    }

    /// `holding` as rendered: null, or who holds and in which direction.
    public var holdingJSON: JSONValue { hold?.json ?? .null }

    /// `next`/`prev {count}`: `count` steps (1 unless given), stopping at a bound the control does not wrap past;
    /// refused only when not even one step is possible.
    public mutating func move(_ direction: Direction, count: Int = 1) throws(IntentError) -> ControlEvents {
        guard canStep(direction) else { throw IntentError(.atBound, "cannot go \(direction.rawValue): at the bound") }
        if count == 1 { step(direction) } else { step(direction, count: count) }
        var events = ControlEvents()
        if let hold, !canStep(hold.direction) {
            self.hold = nil
            events.ended.append(HoldEnd(session: hold.session, reason: .bound))
        }
        return events
    }

    /// `press {direction}`: step at once, then repeat until released.
    ///
    /// A press by the holder in the same direction only renews the lease. Any other press replaces
    /// the running hold (reason `replaced`). A press that reaches a bound ends at once (reason `bound`).
    public mutating func press(_ direction: Direction, by session: SessionID, at now: Instant) throws(IntentError) -> ControlEvents {
        if var current = hold, current.session == session, current.direction == direction {
            current.leaseDeadline = now.adding(milliseconds: timing.maxHoldMs)
            hold = current
            return .none
        }
        guard canStep(direction) else { throw IntentError(.atBound, "cannot go \(direction.rawValue): at the bound") }
        var events = ControlEvents()
        if let previous = hold {
            events.ended.append(HoldEnd(session: previous.session, reason: .replaced))
            hold = nil
        }
        step(direction)
        if canStep(direction) {
            hold = Hold(session: session, direction: direction, pressedAt: now,
                        nextTick: now.adding(milliseconds: timing.delayMs), repeats: 0,
                        leaseDeadline: now.adding(milliseconds: timing.maxHoldMs))
        } else {
            events.ended.append(HoldEnd(session: session, reason: .bound))
        }
        return events
    }

    /// `release`: only the holder may end its hold.
    public mutating func release(by session: SessionID) throws(IntentError) -> ControlEvents {
        guard let current = hold else { throw IntentError(.notHolder, "nobody holds this control") }
        guard current.session == session else { throw IntentError(.notHolder, "the control is held by \(current.session)") }
        hold = nil
        return ControlEvents(ended: [HoldEnd(session: session, reason: .release)])
    }

    /// Applies at most one due repeat (or the lease expiry); a late timer catches up one patch at a time.
    public mutating func wake(at now: Instant) -> ControlEvents {
        guard var current = hold else { return .none }
        if current.leaseDeadline <= now && current.leaseDeadline <= current.nextTick {
            hold = nil
            return ControlEvents(ended: [HoldEnd(session: current.session, reason: .lease)])
        }
        guard current.nextTick <= now else { return .none }
        guard canStep(current.direction) else {
            hold = nil
            return ControlEvents(ended: [HoldEnd(session: current.session, reason: .bound)])
        }
        step(current.direction)
        current.nextTick = current.nextTick.adding(milliseconds: timing.interval(afterRepeat: current.repeats))
        current.repeats += 1
        var events = ControlEvents(tick: current.repeats)
        if canStep(current.direction) {
            hold = current
        } else {
            hold = nil
            events.ended.append(HoldEnd(session: current.session, reason: .bound))
        }
        return events
    }

    public mutating func sessionLeft(_ session: SessionID, reason: HoldEndReason) -> ControlEvents {
        guard let current = hold, current.session == session else { return .none }
        hold = nil
        return ControlEvents(ended: [HoldEnd(session: session, reason: reason)])
    }

    /// Handles `next`, `prev`, `press`, `release`; nil for any other intent.
    public mutating func applySequential(_ intent: String, args: IntentArgs, by session: SessionID, at now: Instant) throws(IntentError) -> ControlEvents? {
        switch intent {
        case "next": return try move(.next, count: try args.count())
        case "prev": return try move(.prev, count: try args.count())
        case "press": return try press(try args.direction(), by: session, at: now)
        case "release": return try release(by: session)
        default: return nil
        }
    }
}
