import LiveControlsProtocol

/// A countdown or a stopwatch everyone in the room sees run (kind `timer`).
///
/// The state names moments in server time (`WallClock`): a running countdown carries `endsAt`, a running stopwatch
/// `startedAt`, so clients count on their own clocks and no patch is sent per second. Stopped, it carries what is left
/// (`remainingMs`) or what has run (`elapsedMs`). At a countdown's deadline the room's timer sets `status` to `finished`
/// and may run one intent of the room as the server (`then`: the workshop's timebox moves its agenda on).
public struct SharedTimer: ConfigurableControl {
    public static let kind = "timer"
    public static let intents = ["start", "pause", "resume", "reset", "add"]
    /// The longest duration, and the most one `add` moves: a week.
    public static let maxMs = 604_800_000

    public enum Mode: String, Sendable { case countdown, stopwatch }
    public enum Status: String, Sendable { case ready, running, paused, finished }

    public var label: String
    public let mode: Mode
    /// A countdown's configured duration (what `start` and `reset` go back to); nil for a stopwatch.
    public let durationMs: Int?
    /// The intent the room runs, as the server, when the countdown finishes.
    public let then: ServerIntent?
    public private(set) var status: Status = .ready
    /// Stopped: a countdown's time left, a stopwatch's time run (ms).
    public private(set) var stoppedMs: Int
    /// Running: a countdown's deadline, or the moment a stopwatch's time was 0, in server time (ms since 1970).
    public private(set) var anchor: Int?
    /// `anchor` on the room's monotonic clock (set when it starts, and again by `adopt(clock:)` after a load).
    public private(set) var deadline: Instant?

    public init(label: String, mode: Mode, durationMs: Int?, then: ServerIntent? = nil) {
        precondition((mode == .countdown) == (durationMs != nil))
        self.label = label
        self.mode = mode
        self.durationMs = durationMs
        self.then = then
        self.stoppedMs = durationMs ?? 0
    }

    init(label: String, mode: Mode, durationMs: Int?, then: ServerIntent?, status: Status, stoppedMs: Int, anchor: Int?) {
        self.init(label: label, mode: mode, durationMs: durationMs, then: then)
        self.status = status
        self.stoppedMs = stoppedMs
        self.anchor = anchor
    }

    public func render() -> JSONValue {
        let running = status == .running
        var o: JSONObject = [
            "kind": .string(Self.kind), "label": .string(label), "mode": .string(mode.rawValue),
            "durationMs": durationMs.map { .int($0) } ?? .null, "status": .string(status.rawValue),
            "endsAt": running && mode == .countdown ? anchor.map { .int($0) } ?? .null : .null,
            "startedAt": running && mode == .stopwatch ? anchor.map { .int($0) } ?? .null : .null,
            "remainingMs": !running && mode == .countdown ? .int(stoppedMs) : .null,
            "elapsedMs": !running && mode == .stopwatch ? .int(stoppedMs) : .null,
        ]
        if let then { o["then"] = ["control": .string(then.control.rawValue), "intent": .string(then.intent)] }
        return .object(o)
    }

    public var stateBytes: Int { 320 }
    /// Only a running countdown wakes: a stopwatch runs on clients' clocks alone.
    public var wakeDeadline: Instant? { status == .running && mode == .countdown ? deadline : nil }

    public mutating func adopt(clock: WallClock) {
        deadline = status == .running ? anchor.map(clock.instant(atUnixMilliseconds:)) : nil
    }

    public mutating func apply(_ intent: String, args: IntentArgs, by session: SessionID, at now: Instant, room: RoomView) throws(IntentError) -> ControlEvents {
        let clock = room.clock
        switch intent {
        case "start":
            // From ready: what it is set to (its duration, or what `add` made of it); else from the top.
            guard status != .running else { return .none }
            run(from: status == .ready ? stoppedMs : durationMs ?? 0, at: now, clock: clock)
        case "resume":
            switch status {
            case .running: return .none
            case .finished: throw IntentError(.finished, "\(label) has finished: start it again or reset it")
            case .ready, .paused: run(from: stoppedMs, at: now, clock: clock)
            }
        case "pause":
            guard status == .running else { return .none }
            stoppedMs = current(at: now, clock: clock)
            if mode == .countdown { stoppedMs = max(1, stoppedMs) }  // the deadline's own wake finishes it, not a pause
            status = .paused
            anchor = nil
            deadline = nil
        case "reset":
            status = .ready
            stoppedMs = durationMs ?? 0
            anchor = nil
            deadline = nil
        case "add":
            let ms = try args.int("ms")
            guard (-Self.maxMs...Self.maxMs).contains(ms) else { throw IntentError(.invalidArgs, "args.ms must be within ±\(Self.maxMs)") }
            try add(ms, at: now, clock: clock)
        default:
            throw Self.unknownIntent(intent, known: Self.intents)
        }
        return .none
    }

    /// Runs from `ms` (left, or run so far).
    private mutating func run(from ms: Int, at now: Instant, clock: WallClock) {
        status = .running
        let unixNow = clock.unixMilliseconds(at: now)
        switch mode {
        case .countdown:
            anchor = unixNow + ms
            deadline = now.adding(milliseconds: ms)
        case .stopwatch:
            anchor = unixNow - ms
            deadline = nil
        }
    }

    /// What is left (countdown) or has run (stopwatch) at `now`, in ms.
    private func current(at now: Instant, clock: WallClock) -> Int {
        guard status == .running else { return stoppedMs }
        switch mode {
        case .countdown:
            guard let deadline else { return 0 }
            return deadline > now ? Int((deadline.nanoseconds - now.nanoseconds + 999_999) / 1_000_000) : 0
        case .stopwatch:
            return max(0, clock.unixMilliseconds(at: now) - (anchor ?? 0))
        }
    }

    /// `add {ms}`: more (or, negative, less) time left on a countdown, or run on a stopwatch.
    private mutating func add(_ ms: Int, at now: Instant, clock: WallClock) throws(IntentError) {
        guard ms != 0 else { return }
        if mode == .countdown && status == .finished { throw IntentError(.finished, "\(label) has finished: start it again or reset it") }
        let after = current(at: now, clock: clock) + ms
        let least = mode == .countdown ? 1 : 0
        guard after >= least, mode == .stopwatch || after <= Self.maxMs else {
            throw IntentError(.outOfRange, "that would leave \(after) ms on \(label) (a countdown keeps 1…\(Self.maxMs) ms, a stopwatch 0 or more)")
        }
        guard status == .running else {
            stoppedMs = after
            return
        }
        switch mode {
        case .countdown:
            anchor = anchor.map { $0 + ms }
            deadline = deadline.map { Instant(nanoseconds: UInt64(Int64($0.nanoseconds) + Int64(ms) * 1_000_000)) }
        case .stopwatch:
            anchor = anchor.map { $0 - ms }
        }
    }

    public mutating func wake(at now: Instant) -> ControlEvents {
        guard status == .running, mode == .countdown, let deadline, deadline <= now else { return .none }
        status = .finished
        stoppedMs = 0
        anchor = nil
        self.deadline = nil
        return ControlEvents(then: then)
    }
}
