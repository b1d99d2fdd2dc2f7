import Synchronization

/// Counters and the hold-tick lateness record behind `GET /metrics`. Safe from any thread.
package final class ServerMetrics: Sendable {
    private struct State {
        var intents = 0
        var refusedIntents = 0
        var patches = 0
        var ticks = 0
        var roomsUnloaded = 0
        var roomsLoaded = 0
        /// The lateness (µs) of the most recent hold ticks: how long after its deadline each tick ran.
        var lateness = [Int32](repeating: 0, count: 8_192)
        var latenessCount = 0
    }
    private let state = Mutex(State())

    func intent(refused: Bool) {
        state.withLock { s in
            s.intents += 1
            if refused { s.refusedIntents += 1 }
        }
    }

    func patch() { state.withLock { $0.patches += 1 } }

    /// An idle room left memory.
    func roomUnloaded() { state.withLock { $0.roomsUnloaded += 1 } }

    /// A stored room was loaded from the store.
    func roomLoaded() { state.withLock { $0.roomsLoaded += 1 } }

    /// A hold tick ran `nanoseconds` after its deadline.
    func tick(lateNanoseconds nanoseconds: UInt64) {
        state.withLock { s in
            s.lateness[s.latenessCount % s.lateness.count] = Int32(clamping: nanoseconds / 1_000)
            s.latenessCount += 1
            s.ticks += 1
        }
    }

    /// Prometheus text exposition (version 0.0.4).
    package func exposition(connections: Int, rooms: Int, uptimeSeconds: Int) -> String {
        let s = state.withLock { $0 }
        let held = Array(s.lateness.prefix(min(s.latenessCount, s.lateness.count))).sorted()
        func quantile(_ q: Double) -> Double {
            guard !held.isEmpty else { return 0 }
            return Double(held[min(held.count - 1, Int((Double(held.count) * q).rounded(.up)) - 1)]) / 1e6
        }
        var lines = [
            "# HELP livecontrols_connections Open WebSocket connections.", "# TYPE livecontrols_connections gauge",
            "livecontrols_connections \(connections)",
            "# HELP livecontrols_rooms Live rooms.", "# TYPE livecontrols_rooms gauge", "livecontrols_rooms \(rooms)",
            "# HELP livecontrols_rooms_unloaded_total Rooms unloaded after nobody was in them for the idle time.",
            "# TYPE livecontrols_rooms_unloaded_total counter", "livecontrols_rooms_unloaded_total \(s.roomsUnloaded)",
            "# HELP livecontrols_rooms_loaded_total Stored rooms loaded from the store (the config's at start, others by a join).",
            "# TYPE livecontrols_rooms_loaded_total counter", "livecontrols_rooms_loaded_total \(s.roomsLoaded)",
            "# HELP livecontrols_intents_total Intents received.", "# TYPE livecontrols_intents_total counter",
            "livecontrols_intents_total \(s.intents)",
            "# HELP livecontrols_intents_refused_total Intents refused with an error.", "# TYPE livecontrols_intents_refused_total counter",
            "livecontrols_intents_refused_total \(s.refusedIntents)",
            "# HELP livecontrols_patches_total Patches (room versions) produced.", "# TYPE livecontrols_patches_total counter",
            "livecontrols_patches_total \(s.patches)",
            "# HELP livecontrols_hold_ticks_total Hold-to-repeat ticks applied.", "# TYPE livecontrols_hold_ticks_total counter",
            "livecontrols_hold_ticks_total \(s.ticks)",
            "# HELP livecontrols_hold_tick_lateness_seconds How long after its deadline a tick ran (last \(s.lateness.count) ticks).",
            "# TYPE livecontrols_hold_tick_lateness_seconds summary",
        ]
        for q in [0.5, 0.9, 0.99, 1.0] {
            lines.append("livecontrols_hold_tick_lateness_seconds{quantile=\"\(q == 1.0 ? "1" : String(q))\"} \(quantile(q))")
        }
        lines.append("livecontrols_hold_tick_lateness_seconds_count \(held.count)")
        lines += ["# HELP livecontrols_uptime_seconds Seconds since start.", "# TYPE livecontrols_uptime_seconds gauge",
                  "livecontrols_uptime_seconds \(uptimeSeconds)"]
        return lines.joined(separator: "\n") + "\n"
    }
}
