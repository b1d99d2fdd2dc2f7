import LiveControlsProtocol

/// Bounds on what one member may put in its presence `data`.
public enum PresenceLimits {
    /// The member's whole `data`, encoded as JSON, after the update.
    public static let maxBytes = 2_048
    /// Keys in the member's `data`.
    public static let maxKeys = 32
    /// Updates per second a member may send, over a burst of `burst`.
    public static let perSecond = 20.0
    public static let burst = 40.0
}

/// Presence data, and gathering it. A member's update is checked when it arrives (rate, size) and then either
/// committed at once (`setPresence`: its own patch) or gathered (`gatherPresence`) for the next presence patch
/// (`commitGatheredPresence`), which carries every gathered member's data as it then is: in a busy room a member sees
/// the latest presence of each other member, not every step, so presence costs the room a patch per interval
/// rather than one per update (the runtime picks: `RoomRuntime+Presence.swift`).
extension Room {
    /// Merges `data` into the member's presence `data` (a key set to `null` is removed) and patches the keys that
    /// changed under `/presence/<session>/data`. Throws `presence_off` in a room without presence, `too_large` past
    /// `PresenceLimits`, `rate_limited` past the member's rate; nothing changes then. Same values: no patch.
    /// Anything gathered before goes in the same patch.
    public mutating func setPresence(_ session: SessionID, data: JSONObject, requestID: RequestID?, at now: Instant) throws(IntentError) -> RoomUpdate {
        try gatherPresence(session, data: data, at: now)
        return commitGatheredPresence(requestID: requestID)
    }

    /// Checks and merges `data` as `setPresence` does, into the member's gathered data (its `data` as the next
    /// presence patch will set it), without a patch. Throws as `setPresence`; nothing changes then.
    public mutating func gatherPresence(_ session: SessionID, data: JSONObject, at now: Instant) throws(IntentError) {
        guard var member = members[session] else { throw IntentError(.notJoined, "join room \(name) first") }
        guard tracksPresence else {
            throw IntentError(.presenceOff, "room \(name) does not list its members (its template says \"presence\": false)")
        }
        guard member.presenceRate.take(at: now) else {
            throw IntentError(.rateLimited, "more than \(Int(PresenceLimits.perSecond)) presence updates per second; this one was dropped")
        }
        members[session]!.presenceRate = member.presenceRate  // a refusal below still spends the update
        var merged = gatheredPresence[session] ?? member.data
        for (key, value) in data {
            if value == .null { merged[key] = Optional<JSONValue>.none } else { merged[key] = value }
        }
        guard merged.count <= PresenceLimits.maxKeys else {
            throw IntentError(.tooLarge, "presence data may have at most \(PresenceLimits.maxKeys) keys (it would have \(merged.count))")
        }
        let size = JSONWriter.encode(.object(merged)).count
        guard size <= PresenceLimits.maxBytes else {
            throw IntentError(.tooLarge, "presence data may take at most \(PresenceLimits.maxBytes) bytes as JSON (it would take \(size))")
        }
        gatheredPresence[session] = merged
    }

    /// Whether some member's presence update waits for the next presence patch.
    public var hasGatheredPresence: Bool { !gatheredPresence.isEmpty }

    /// Whether `session`'s presence update waits for the next presence patch.
    public func hasGatheredPresence(of session: SessionID) -> Bool { gatheredPresence[session] != nil }

    /// Sets every gathered member's `data`, in one patch of the keys that changed (members in join order). Its
    /// `cause`: `{"kind": "presence", "session"}` (and the `id` given) when one member's data is in it,
    /// `{"kind": "presence", "sessions": [...]}` when several are. No change: no patch.
    public mutating func commitGatheredPresence(requestID: RequestID? = nil) -> RoomUpdate {
        guard !gatheredPresence.isEmpty else { return .none }
        let sessions = memberOrder.filter { gatheredPresence[$0] != nil }
        var cause: JSONObject = ["kind": "presence"]
        if sessions.count == 1 {
            cause["session"] = .string(sessions[0].rawValue)
            if let requestID { cause["id"] = requestID.json }
        } else {
            cause["sessions"] = .array(sessions.map { .string($0.rawValue) })
        }
        // No early return on equal data: JSON equality takes 1 and 1.0 as equal, the diff does not.
        return commit(cause: cause, touching: []) { room, ops, _ in
            for session in sessions {
                let after = room.gatheredPresence[session]!
                ops.append(contentsOf: JSONDiff.diff(from: .object(room.members[session]!.data), to: .object(after),
                                                     at: JSONPointer(["presence", session.rawValue, "data"])))
                room.members[session]!.data = after
            }
            room.gatheredPresence = [:]
        }
    }
}

/// A token bucket on the room's clock: `perSecond` tokens, up to `burst` at once (full at first). Presence updates and
/// claims take `PresenceLimits`' rates; broadcasts their template's.
struct RateBucket: Sendable, Equatable {
    private var tokens: Double?
    private var stamp: Instant?

    mutating func take(at now: Instant, perSecond: Double = PresenceLimits.perSecond, burst: Double = PresenceLimits.burst) -> Bool {
        var available = tokens ?? burst
        if let stamp, now > stamp {
            available = min(burst, available + Double(now.nanoseconds - stamp.nanoseconds) / 1e9 * perSecond)
        }
        stamp = max(stamp ?? now, now)
        guard available >= 1 else {
            tokens = available
            return false
        }
        tokens = available - 1
        return true
    }
}
