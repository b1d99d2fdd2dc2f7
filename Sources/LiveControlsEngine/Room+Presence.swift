import LiveControlsProtocol

/// Bounds on what one member may put in its presence `data`.
public enum PresenceLimits {
    /// The member's whole `data`, encoded as JSON, after the update.
    public static let maxBytes = 2_048
    /// Keys in the member's `data`.
    public static let maxKeys = 32
    /// Updates per second a member may send, over a burst of `burst`: every update is a patch to every member.
    public static let perSecond = 20.0
    public static let burst = 40.0
}

extension Room {
    /// Merges `data` into the member's presence `data` (a key set to `null` is removed) and patches the keys that
    /// changed under `/presence/<session>/data`. Throws `presence_off` in a room without presence, `too_large` past
    /// `PresenceLimits`, `rate_limited` past the member's rate; nothing changes then. Same values: no patch.
    public mutating func setPresence(_ session: SessionID, data: JSONObject, requestID: RequestID?, at now: Instant) throws(IntentError) -> RoomUpdate {
        guard var member = members[session] else { throw IntentError(.notJoined, "join room \(name) first") }
        guard tracksPresence else {
            throw IntentError(.presenceOff, "room \(name) does not list its members (its template says \"presence\": false)")
        }
        guard member.presenceRate.take(at: now) else {
            throw IntentError(.rateLimited, "more than \(Int(PresenceLimits.perSecond)) presence updates per second; this one was dropped")
        }
        let before = member.data
        for (key, value) in data {
            if value == .null { member.data[key] = Optional<JSONValue>.none } else { member.data[key] = value }
        }
        guard member.data.count <= PresenceLimits.maxKeys else {
            members[session]!.presenceRate = member.presenceRate
            throw IntentError(.tooLarge, "presence data may have at most \(PresenceLimits.maxKeys) keys (it would have \(member.data.count))")
        }
        let size = JSONWriter.encode(.object(member.data)).count
        guard size <= PresenceLimits.maxBytes else {
            members[session]!.presenceRate = member.presenceRate
            throw IntentError(.tooLarge, "presence data may take at most \(PresenceLimits.maxBytes) bytes as JSON (it would take \(size))")
        }
        var cause: JSONObject = ["kind": "presence", "session": .string(session.rawValue)]
        if let requestID { cause["id"] = requestID.json }
        let after = member.data
        members[session] = member
        // No early return on `before == after`: JSON equality takes 1 and 1.0 as equal, the diff does not.
        return commit(cause: cause, touching: []) { _, ops, _ in
            ops = JSONDiff.diff(from: .object(before), to: .object(after), at: JSONPointer(["presence", session.rawValue, "data"]))
        }
    }
}

/// A token bucket on the room's clock: `PresenceLimits.perSecond`, up to `PresenceLimits.burst` at once.
struct PresenceRate: Sendable, Equatable {
    var tokens = PresenceLimits.burst
    var stamp: Instant?

    mutating func take(at now: Instant) -> Bool {
        if let stamp, now > stamp {
            tokens = min(PresenceLimits.burst, tokens + Double(now.nanoseconds - stamp.nanoseconds) / 1e9 * PresenceLimits.perSecond)
        }
        stamp = max(stamp ?? now, now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
