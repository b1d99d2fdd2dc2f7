import LiveControlsProtocol

/// Which roles may send which intents to one control (a template's `permissions`).
///
/// `{"next": ["host"], "prev": ["host"], "*": ["editor"]}`: an intent listed by name may be sent only by a member
/// holding one of its roles; `*` covers the intents not listed; an intent covered by neither is open to every member
/// who may send intents at all. Admins may always. Only actions are restricted: everyone sees the same state.
public struct ControlPermissions: Sendable, Equatable {
    /// Intent name (or `*`) → the roles that may send it, in config order.
    public private(set) var rules: [(intent: String, roles: [String])]

    public init(rules: [(intent: String, roles: [String])]) { self.rules = rules }

    public static func == (a: ControlPermissions, b: ControlPermissions) -> Bool {
        a.rules.elementsEqual(b.rules) { $0.intent == $1.intent && $0.roles == $1.roles }
    }

    /// The roles that may send `intent`, or nil when it is open to every member.
    public func roles(for intent: String) -> [String]? {
        rules.first { $0.intent == intent }?.roles ?? rules.first { $0.intent == "*" }?.roles
    }

    /// Whether `memberRoles` may send `intent`.
    public func allows(_ intent: String, memberRoles: [String]) -> Bool {
        guard let needed = roles(for: intent) else { return true }
        return memberRoles.contains(Role.admin.rawValue) || needed.contains(where: memberRoles.contains)
    }

    /// Every role any rule names, in order.
    public var allRoles: [String] {
        var result: [String] = []
        for rule in rules { for role in rule.roles where !result.contains(role) { result.append(role) } }
        return result
    }

    /// Refuses `intent` unless `memberRoles` holds one of the roles it needs (or `admin`).
    public func check(_ intent: String, control: ControlID, memberRoles: [String]) throws(IntentError) {
        guard let needed = roles(for: intent), !memberRoles.contains(Role.admin.rawValue),
              !needed.contains(where: memberRoles.contains) else { return }
        let have = memberRoles.isEmpty ? "no role" : memberRoles.joined(separator: ", ")
        throw IntentError(.forbidden, "\(intent) on \(control) needs role \(needed.joined(separator: " or ")) (you have: \(have))")
    }

    /// `{"next": ["host"], …}` as it appears under the control's `permissions` in the room's state.
    public var json: JSONValue {
        .object(JSONObject(pairs: rules.map { ($0.intent, .array($0.roles.map { .string($0) })) }))
    }

    /// Reads one control's entry of a template's `permissions`; `intents` are its kind's intents.
    static func parse(_ node: ConfigNode, intents: [String]) throws(ConfigError) -> ControlPermissions {
        var rules: [(String, [String])] = []
        for (intent, rolesNode) in try node.members() {
            guard intent == "*" || intents.contains(intent) else {
                throw rolesNode.error("no intent \"\(intent)\" on this control (it has: \(intents.joined(separator: ", ")), or * for all)")
            }
            var roles: [String] = []
            for roleNode in try rolesNode.array() {
                guard let role = roleNode.value.stringValue, Role.isValidName(role) else {
                    throw roleNode.error("a role is 1–64 characters of A–Z a–z 0–9 _ - . :")
                }
                if !roles.contains(role) { roles.append(role) }
            }
            guard !roles.isEmpty else { throw rolesNode.error("list at least one role (leave the intent out to open it to every editor)") }
            rules.append((intent, roles))
        }
        return ControlPermissions(rules: rules)
    }

    /// The `permissions` a stored control state carries (`Room.encodedControls`), nil when it carries none.
    init?(stored: JSONValue?) {
        guard let object = stored?.objectValue else { return nil }
        var rules: [(String, [String])] = []
        for (intent, roles) in object {
            guard let list = roles.arrayValue?.compactMap(\.stringValue) else { return nil }
            rules.append((intent, list))
        }
        self.rules = rules
    }
}

extension RoomTemplate {
    /// Reads a template's `permissions`: control id → `ControlPermissions`.
    static func parsePermissions(_ node: ConfigNode?, controls: [(id: ControlID, control: any Control)]) throws(ConfigError) -> [ControlID: ControlPermissions] {
        guard let node else { return [:] }
        var result: [ControlID: ControlPermissions] = [:]
        for (id, entry) in try node.members() {
            guard let control = controls.first(where: { $0.id.rawValue == id })?.control else {
                throw entry.error("no control \"\(id)\" in this template (it has: \(controls.map(\.id.rawValue).joined(separator: ", ")))")
            }
            result[ControlID(id)] = try ControlPermissions.parse(entry, intents: type(of: control).intents)
        }
        return result
    }
}
