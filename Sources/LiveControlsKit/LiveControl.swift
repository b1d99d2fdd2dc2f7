import Observation

/// One control of a room, of any kind: its rendered state as JSON and what every kind shares.
///
/// The typed views — ``StepperControl``, ``ListControl``, ``WizardControl``, ``FormControl``, ``PagerControl`` — read their fields from
/// ``json``; a kind this SDK does not know stays usable through ``json`` and ``send(_:_:)``.
@MainActor @Observable
public final class LiveControl: Identifiable {
    public let id: String
    /// The control's state as the server renders it (`/controls/<id>`), fields newer than this SDK included.
    public internal(set) var json: JSONValue
    @ObservationIgnored weak var room: Room?

    init(id: String, json: JSONValue, room: Room) {
        self.id = id
        self.json = json
        self.room = room
    }

    /// `stepper`, `list`, `wizard`, `form`, `pager`, or a kind newer than this SDK.
    public var kind: String { json["kind"]?.stringValue ?? "" }
    /// The control's label (its id unless the template names one).
    public var label: String { json["label"]?.stringValue ?? id }
    /// Who is editing which part of the control, by target (`*`: the whole control).
    public var claims: [String: ClaimInfo] {
        var claims: [String: ClaimInfo] = [:]
        for (target, entry) in json["claims"]?.objectValue ?? [:] {
            guard let session = entry["session"]?.stringValue else { continue }
            claims[target] = ClaimInfo(session: session, exclusive: entry["exclusive"]?.boolValue ?? false,
                                       leaseMs: entry["leaseMs"]?.intValue ?? 30_000)
        }
        return claims
    }
    /// The template's permission rules for this control (intent or `*` → roles), empty when unrestricted.
    public var permissions: [String: [String]] {
        var rules: [String: [String]] = [:]
        for (intent, roles) in json["permissions"]?.objectValue ?? [:] {
            rules[intent] = roles.arrayValue?.compactMap(\.stringValue) ?? []
        }
        return rules
    }

    /// Whether a member with these roles (``Member/roles``: the token's role first) may send `intent`: viewers
    /// send none, admins any, others what the control's permissions leave open to one of their roles.
    public func allows(_ intent: String, roles: [String]) -> Bool {
        if roles.contains("admin") { return true }
        if roles.first == "viewer" { return false }
        let rules = permissions
        guard let needed = rules[intent] ?? rules["*"] else { return true }
        return needed.contains(where: roles.contains)
    }

    /// Sends an intent to this control; returns the room's version after it. Throws ``LiveControlsError``.
    @discardableResult
    public func send(_ intent: String, _ args: JSONObject = [:]) async throws -> Int {
        guard let room else { throw LiveControlsError.notConnected }
        return try await room.send(control: id, intent: intent, args: args)
    }

    /// Claims the control (`*`) or a part of it; the claim renews itself until released. See ``Claim``.
    public func claim(_ target: String = "*") async throws -> Claim {
        guard let room, let client = room.client else { throw LiveControlsError.notConnected }
        return try await client.claim(in: room, control: id, target: target)
    }
}

/// One claim as shown in a control's `claims`.
public struct ClaimInfo: Sendable, Equatable {
    public var session: String
    /// Under an exclusive claim, others' intents that write the part are refused with `claimed`.
    public var exclusive: Bool
    /// The claim ends unless claimed again within this time.
    public var leaseMs: Int

    public init(session: String, exclusive: Bool, leaseMs: Int) {
        self.session = session
        self.exclusive = exclusive
        self.leaseMs = leaseMs
    }
}

/// The running hold of a sequential control (`holding`).
public struct HoldInfo: Sendable, Equatable {
    /// The holder's session, or `"server"` for a hold started through the server API.
    public var session: String
    public var direction: Direction

    public init(session: String, direction: Direction) {
        self.session = session
        self.direction = direction
    }
}

/// The way a sequential control steps.
public enum Direction: String, Sendable, Equatable {
    case next, prev
}
