import LiveControlsProtocol

extension SharedTimer: StorableControl {
    public static let stateKeys: Set<String> = ["status", "stoppedMs", "anchor"]

    /// `{label, mode, durationMs?, then?, status, stoppedMs, anchor?}`: moments in server time only (a monotonic instant
    /// means nothing to the next process), placed on the clock again by `adopt(clock:)` when loaded.
    public var storedState: JSONValue {
        var o: JSONObject = ["label": .string(label), "mode": .string(mode.rawValue)]
        o.setIfPresent("durationMs", durationMs.map { .int($0) })
        o.setIfPresent("then", then.map { ["control": .string($0.control.rawValue), "intent": .string($0.intent), "args": .object($0.args)] })
        o["status"] = .string(status.rawValue)
        o["stoppedMs"] = .int(stoppedMs)
        o.setIfPresent("anchor", anchor.map { .int($0) })
        return .object(o)
    }

    public init(storedState: JSONValue) throws(StoredStateError) {
        let s = StoredValue(storedState)
        let mode = try s.required("mode").raw(Mode.self)
        let duration = try s.optionalInt("durationMs")
        guard (mode == .countdown) == (duration != nil) else { throw s.error("a countdown has a durationMs, a stopwatch none") }
        var then: ServerIntent?
        if let t = s["then"] {
            guard case .object(let args) = try t.json("args") else { throw t.error("args is not an object") }
            then = ServerIntent(control: ControlID(try t.string("control")), intent: try t.string("intent"), args: args)
        }
        let status = try s.required("status").raw(Status.self)
        let anchor = try s.optionalInt("anchor")
        guard (status == .running) == (anchor != nil) else { throw s.error("a running timer has an anchor, a stopped one none") }
        // A countdown's time left is at most a week; a stopwatch may have run for longer than that.
        let stopped = try s.int("stoppedMs")
        guard stopped >= 0, mode == .stopwatch || stopped <= Self.maxMs else { throw s.error("stoppedMs \(stopped) is outside 0…\(Self.maxMs)") }
        self.init(label: try s.string("label"), mode: mode, durationMs: duration, then: then, status: status, stoppedMs: stopped, anchor: anchor)
    }
}
