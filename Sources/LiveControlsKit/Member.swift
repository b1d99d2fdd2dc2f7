import LiveControlsProtocol

/// One session in a room's presence (`state.presence.<session>`).
public struct Member: Sendable, Equatable, Identifiable {
    /// What a member says it is editing (a claim): a control and a part of it (`*` for the whole control).
    public struct Editing: Sendable, Equatable, Hashable {
        public var control: String
        public var target: String

        public init(control: String, target: String) {
            self.control = control
            self.target = target
        }
    }

    /// The session id.
    public var id: String
    /// The display name given at join (or the token's), nil when none.
    public var name: String?
    /// The person behind the session: its token's `sub`, nil without one. Sessions with the same `user` are one person on
    /// several devices or tabs (``Room/people``).
    public var user: String?
    /// The roles the session joined with (its token's role, then its custom roles).
    public var roles: [String]
    /// The controls this session holds right now (hold-to-repeat).
    public var holding: [String]
    /// What this session claims.
    public var editing: [Editing]
    /// What the member's client set with `presence` (focus, colour, cursor…).
    public var data: JSONObject
    /// The whole entry as sent, fields newer than this SDK included.
    public var json: JSONValue

    init(session: String, json: JSONValue) {
        id = session
        name = json["name"]?.stringValue
        user = json["user"]?.stringValue
        roles = json["roles"]?.arrayValue?.compactMap(\.stringValue) ?? []
        holding = json["holding"]?.arrayValue?.compactMap(\.stringValue) ?? []
        editing = json["editing"]?.arrayValue?.compactMap { entry in
            guard let control = entry["control"]?.stringValue else { return nil }
            return Editing(control: control, target: entry["target"]?.stringValue ?? "*")
        } ?? []
        data = json["data"]?.objectValue ?? [:]
        self.json = json
    }
}
