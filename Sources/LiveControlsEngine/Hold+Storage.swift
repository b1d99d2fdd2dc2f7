import LiveControlsProtocol

// The stored forms of the parts every holdable control keeps (see `StorableControl`).

extension SessionID {
    /// `{"rawValue": "…"}`.
    var storedState: JSONValue { ["rawValue": .string(rawValue)] }

    init(stored: StoredValue) throws(StoredStateError) {
        self.init(try stored.string("rawValue"))
    }
}

extension Instant {
    /// `{"nanoseconds": n}`. `n` is the `UInt64` as an `Int` with the same bits: every instant a monotonic
    /// clock gives (below 2^63 ns, 292 years of uptime) is written as itself; the rest still read back exactly.
    var storedState: JSONValue { ["nanoseconds": .int(Int(truncatingIfNeeded: nanoseconds))] }

    init(stored: StoredValue) throws(StoredStateError) {
        self.init(nanoseconds: UInt64(truncatingIfNeeded: try stored.int("nanoseconds")))
    }
}

extension HoldTiming {
    var storedState: JSONValue {
        [
            "delayMs": .int(delayMs), "intervalMs": .int(intervalMs), "minIntervalMs": .int(minIntervalMs),
            "accelerationMs": .int(accelerationMs), "maxHoldMs": .int(maxHoldMs),
        ]
    }

    init(stored: StoredValue) throws(StoredStateError) {
        self.init(delayMs: try stored.int("delayMs"), intervalMs: try stored.int("intervalMs"),
                  minIntervalMs: try stored.int("minIntervalMs"), accelerationMs: try stored.int("accelerationMs"),
                  maxHoldMs: try stored.int("maxHoldMs"))
    }
}

extension Hold {
    var storedState: JSONValue {
        [
            "session": session.storedState, "direction": .string(direction.rawValue),
            "pressedAt": pressedAt.storedState, "nextTick": nextTick.storedState,
            "repeats": .int(repeats), "leaseDeadline": leaseDeadline.storedState,
        ]
    }

    init(stored: StoredValue) throws(StoredStateError) {
        self.init(session: try SessionID(stored: try stored.required("session")),
                  direction: try stored.required("direction").raw(Direction.self),
                  pressedAt: try Instant(stored: try stored.required("pressedAt")),
                  nextTick: try Instant(stored: try stored.required("nextTick")),
                  repeats: try stored.int("repeats"),
                  leaseDeadline: try Instant(stored: try stored.required("leaseDeadline")))
    }
}

extension HoldableControl {
    /// `timing`, and `hold` when there is one.
    func storeHold(into o: inout JSONObject) {
        o["timing"] = timing.storedState
        o.setIfPresent("hold", hold?.storedState)
    }

    /// The `hold` of a stored state (nil when absent).
    static func storedHold(_ stored: StoredValue) throws(StoredStateError) -> Hold? {
        guard let h = stored["hold"] else { return nil }
        return try Hold(stored: h)
    }
}
