import LiveControlsProtocol

/// Who may send `broadcast` messages in a template's rooms, how large and how often (`"broadcast": false | {roles,
/// maxBytes, perSecond, burst, roomPerSecond}`). A broadcast is not state: the room checks it and its server hands it
/// to the other members as is (docs/PROTOCOL.md, *`broadcast`*).
public struct BroadcastPolicy: Sendable, Equatable {
    /// False: the template turned broadcasts off (`"broadcast": false`).
    public var enabled = true
    /// The roles that may broadcast; nil: every member but a `viewer`.
    public var roles: Set<String>?
    /// The event, encoded as JSON.
    public var maxBytes = 2_048
    /// Broadcasts one member may send per second, over a burst of `burst`.
    public var perSecond = 20
    public var burst = 40
    /// Broadcasts the whole room may carry per second (a burst of twice as many): each goes to every member, so this
    /// bounds the room's deliveries at `roomPerSecond` × members a second, whatever its members do.
    public var roomPerSecond = 200

    public init() {}

    public static let off: BroadcastPolicy = { var policy = BroadcastPolicy(); policy.enabled = false; return policy }()

    static func parse(_ node: ConfigNode?) throws(ConfigError) -> BroadcastPolicy {
        guard let node else { return BroadcastPolicy() }
        if let flag = node.value.boolValue { return flag ? BroadcastPolicy() : .off }
        _ = try node.object(allowed: ["roles", "maxBytes", "perSecond", "burst", "roomPerSecond"])
        var policy = BroadcastPolicy()
        if let rolesNode = node["roles"] {
            var roles = Set<String>()
            for item in try rolesNode.array() {
                guard let role = item.value.stringValue, ClientMessage.isValidName(role) else { throw item.error("must be a role name") }
                roles.insert(role)
            }
            policy.roles = roles
        }
        policy.maxBytes = try node.bounded("maxBytes", try node.int("maxBytes", default: policy.maxBytes), 2...65_536)
        policy.perSecond = try node.bounded("perSecond", try node.int("perSecond", default: policy.perSecond), 1...100_000)
        policy.burst = try node.bounded("burst", try node.int("burst", default: max(policy.burst, policy.perSecond)), policy.perSecond...1_000_000)
        policy.roomPerSecond = try node.bounded("roomPerSecond", try node.int("roomPerSecond", default: max(policy.roomPerSecond, policy.perSecond)),
                                                 policy.perSecond...100_000)
        return policy
    }
}

extension Room {
    /// Checks a member's broadcast of an event that takes `bytes` bytes as JSON, and spends its rate: throws why not
    /// (`not_joined`, `forbidden`, `too_large`, `rate_limited`). Nothing about the room's state changes.
    public mutating func checkBroadcast(from session: SessionID, bytes: Int, at now: Instant) throws(IntentError) {
        guard let member = members[session] else { throw IntentError(.notJoined, "join room \(name) first") }
        let policy = broadcastPolicy
        guard policy.enabled else { throw IntentError(.forbidden, "room \(name) takes no broadcasts (its template's broadcast is false)") }
        if let roles = policy.roles {
            guard member.roles.contains(where: roles.contains) else {
                throw IntentError(.forbidden, "broadcasting in room \(name) needs role \(roles.sorted().joined(separator: " or ")) (you have: \(member.roles.joined(separator: ", ")))")
            }
        } else if member.roles.first == "viewer" {
            throw IntentError(.forbidden, "a viewer may not broadcast in room \(name) (its template's broadcast.roles does not list viewer)")
        }
        guard bytes <= policy.maxBytes else {
            throw IntentError(.tooLarge, "a broadcast's event may take at most \(policy.maxBytes) bytes as JSON (this one takes \(bytes))")
        }
        // Both rates are spent only when both allow it (a broadcast the room refuses costs its sender nothing).
        var memberRate = member.broadcastRate, roomRate = broadcastRate
        guard memberRate.take(at: now, perSecond: Double(policy.perSecond), burst: Double(policy.burst)) else {
            throw IntentError(.rateLimited, "more than \(policy.perSecond) broadcasts per second; this one was dropped")
        }
        guard roomRate.take(at: now, perSecond: Double(policy.roomPerSecond), burst: Double(2 * policy.roomPerSecond)) else {
            throw IntentError(.rateLimited, "room \(name) carries at most \(policy.roomPerSecond) broadcasts per second from all its members; this one was dropped")
        }
        members[session]!.broadcastRate = memberRate
        broadcastRate = roomRate
    }

    /// The server API's broadcast: the room's rate only.
    public mutating func checkServerBroadcast(at now: Instant) throws(IntentError) {
        let policy = broadcastPolicy
        guard broadcastRate.take(at: now, perSecond: Double(policy.roomPerSecond), burst: Double(2 * policy.roomPerSecond)) else {
            throw IntentError(.rateLimited, "room \(name) carries at most \(policy.roomPerSecond) broadcasts per second; this one was dropped")
        }
    }
}
