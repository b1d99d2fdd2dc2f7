import LiveControlsProtocol

/// A session saying "I am editing this": a whole control (`*`) or a part of it (a form's `account` element or
/// `account.email` field, a list's item `i3`), while it edits. Others see it (the control's `claims`, the member's
/// `editing`); a template may make a control's claims exclusive (others' writes to the part are refused).
public struct Claim: Sendable, Equatable {
    public var session: SessionID
    /// `*` for the whole control, else the part (`Control.isClaimTarget`).
    public var target: String
    /// When the claim lapses unless its holder claims it again (the room's clock).
    public var until: Instant

    public static let wholeControl = "*"
    /// The lease of a claim restored from the store: none (its lease ran on another process's clock); the takeover or
    /// restart that restored it ends it.
    static let restoredLease = Instant(nanoseconds: .max)

    /// Whether a claim on `a` and one on `b` cover the same thing: equal, one of them the whole control, or one a
    /// part of the other (`account` and `account.email`).
    static func overlap(_ a: String, _ b: String) -> Bool {
        a == b || a == wholeControl || b == wholeControl || a.hasPrefix(b + ".") || b.hasPrefix(a + ".")
    }
}

/// How a template treats claims on one control (`"claims": {"signup": {"mode": "exclusive", "leaseMs": 30000}}`).
public struct ClaimPolicy: Sendable, Equatable {
    /// Exclusive: an intent by another session that writes a claimed part is refused with `claimed`. Soft (the
    /// default): others may still write; clients show who is editing and may warn.
    public var exclusive = false
    /// How long a claim lasts unless its holder claims it again.
    public var leaseMs = 30_000

    public init(exclusive: Bool = false, leaseMs: Int = 30_000) {
        self.exclusive = exclusive
        self.leaseMs = leaseMs
    }

    static func parse(_ node: ConfigNode) throws(ConfigError) -> ClaimPolicy {
        _ = try node.object(allowed: ["mode", "leaseMs"])
        let mode = try node.string("mode", default: "soft")
        guard mode == "soft" || mode == "exclusive" else { throw node.error(at: "mode", "must be \"soft\" or \"exclusive\"") }
        let lease = try node.int("leaseMs", default: 30_000)
        guard (1_000...3_600_000).contains(lease) else { throw node.error(at: "leaseMs", "must be within 1000…3600000") }
        return ClaimPolicy(exclusive: mode == "exclusive", leaseMs: lease)
    }
}

/// Why a claim ended; listed in `cause.claimsEnded` of the patch that ends it.
public enum ClaimEndReason: String, Sendable {
    /// The holder sent `unclaim`.
    case release
    /// The holder sent `unclaim` with `reason: "blur"`: its field lost focus.
    case blur
    /// The holder left the room, its connection closed, or its token expired.
    case leave, disconnect, expired
    /// The holder did not claim it again within the lease.
    case lease
    /// The part is gone (a list item removed).
    case removed
    /// The room was reset (server API), restarted, or taken over by another node (cluster).
    case reset, restart, failover

    init(_ hold: HoldEndReason) {
        switch hold {
        case .release: self = .release
        case .leave: self = .leave
        case .disconnect: self = .disconnect
        case .expired: self = .expired
        case .lease: self = .lease
        case .reset: self = .reset
        case .restart: self = .restart
        case .failover: self = .failover
        case .bound, .replaced, .confirmed: self = .release
        }
    }
}

/// What an intent writes, for exclusive claims (`Control.reach`).
public enum IntentReach: Sendable, Equatable {
    /// All of the control (a reset): any claim on it by someone else conflicts.
    case whole
    /// These parts (a form field, a list item): claims on them, on what holds them and on the whole control conflict.
    case parts([String])
    /// No part in particular (moving a selection, expanding an element, appending): only a claim on the whole
    /// control conflicts.
    case navigation

    func conflicts(with target: String) -> Bool {
        switch self {
        case .whole: return true
        case let .parts(parts): return parts.contains { Claim.overlap($0, target) }
        case .navigation: return target == Claim.wholeControl
        }
    }
}

extension RoomTemplate {
    /// Reads a template's `claims`: control id → `ClaimPolicy`.
    static func parseClaims(_ node: ConfigNode?, controls: [(id: ControlID, control: any Control)]) throws(ConfigError) -> [ControlID: ClaimPolicy] {
        guard let node else { return [:] }
        var result: [ControlID: ClaimPolicy] = [:]
        for (id, entry) in try node.members() {
            guard controls.contains(where: { $0.id.rawValue == id }) else {
                throw entry.error("no control \"\(id)\" in this template (it has: \(controls.map(\.id.rawValue).joined(separator: ", ")))")
            }
            result[ControlID(id)] = try ClaimPolicy.parse(entry)
        }
        return result
    }
}
