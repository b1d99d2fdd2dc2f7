import LiveControlsProtocol

extension SharedTimer {
    /// Reads a timer from its template entry: `mode` (countdown, the default, needs `durationMs`), and `then`.
    public init(config node: ConfigNode, id: ControlID, today: CivilDate) throws(ConfigError) {
        _ = try node.object(allowed: ["kind", "label", "mode", "durationMs", "then"])
        let modeName = try node.string("mode", default: Mode.countdown.rawValue)
        guard let mode = Mode(rawValue: modeName) else { throw node.error(at: "mode", "must be \"countdown\" or \"stopwatch\"") }
        var duration: Int?
        switch mode {
        case .countdown:
            guard node["durationMs"] != nil else { throw node.error(at: "durationMs", "a countdown needs its duration (ms)") }
            let ms = try node.int("durationMs")
            guard (1...Self.maxMs).contains(ms) else { throw node.error(at: "durationMs", "must be 1…\(Self.maxMs) (ms: a week at most)") }
            duration = ms
        case .stopwatch:
            if node["durationMs"] != nil { throw node.error(at: "durationMs", "a stopwatch has no duration (leave it out, or use mode countdown)") }
        }
        var then: ServerIntent?
        if let thenNode = node["then"] {
            guard mode == .countdown else { throw thenNode.error("only a countdown finishes: a stopwatch has no then") }
            _ = try thenNode.object(allowed: ["control", "intent", "args"])
            let control = ControlID(try thenNode.string("control"))
            guard control != id else { throw thenNode.error(at: "control", "a timer's then names another control") }
            var args = JSONObject()
            if let argsNode = thenNode["args"] { args = try argsNode.object() }
            then = ServerIntent(control: control, intent: try thenNode.string("intent"), args: args)
        }
        self.init(label: try node.string("label", default: id.rawValue), mode: mode, durationMs: duration, then: then)
    }
}
