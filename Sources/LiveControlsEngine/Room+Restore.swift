import LiveControlsProtocol

extension Room {
    /// Rebuilds a stored room exactly: same epoch, version, controls, members and recent history.
    /// Nil when that is impossible (`configurationChanges` names a control: its template now has other controls, or
    /// configures one differently — any setting of any kind —, or a control cannot be decoded); the caller then starts
    /// a new epoch from the template as it is now, so no client can mistake the new state for the old one.
    public init?(restoring stored: StoredRoom, template: RoomTemplate, historyLimit: Int) {
        let (decoded, changed) = Room.decode(stored, as: template)
        guard changed.isEmpty else { return nil }
        self.init(name: stored.name, template: template, epoch: stored.epoch, historyLimit: historyLimit)
        controls = decoded.mapValues(\.control)
        // Claims come back without their leases (another process's clock): a takeover ends them (`endHolds`), a
        // restart with the leave of their holders.
        for (id, entry) in decoded where !entry.claims.isEmpty {
            claims[id] = entry.claims.map { Claim(session: $0.session, target: $0.target, until: Claim.restoredLease) }
        }
        if decoded.values.contains(where: { $0.format < StoredControl.currentFormat }) {
            // Written by a release that rendered the room another way: a client holding state from before this load
            // has that other shape, so it gets a snapshot rather than patches made for this one. Once: the first write
            // stores those controls in this format (`staleFormat`).
            resumeFloor = stored.version
            staleFormat = controlOrder.filter { decoded[$0]!.format < StoredControl.currentFormat }
        }
        version = stored.version
        for member in stored.members where members[member.session] == nil {
            members[member.session] = Member(name: member.name, roles: member.roles, user: member.user, data: member.data)
            if let user = member.user { sessionsOfUser[user, default: []].append(member.session) }
            memberOrder.append(member.session)
        }
        for patch in stored.history where patch.version <= version { history.append(patch) }
    }

    /// The controls of `stored` that its template no longer configures the same way: added or removed ones, ones of
    /// another kind, ones that cannot be decoded, and ones whose settings (`ControlCoding.configuration`: label,
    /// bounds, step, wrap, timing, display, the configured steps or elements…) differ. Empty: the room can be
    /// restored exactly. The stored control is decoded and encoded again first, so a state an earlier release wrote
    /// (a shape since extended, with defaults) compares as today's encoding of it.
    public static func configurationChanges(stored: StoredRoom, template: RoomTemplate) -> [String] {
        decode(stored, as: template).changed.keys.sorted()
    }

    /// What `configurationChanges` found, for the log: each control with what changed (`count (max, label)`, `calendar
    /// (added)`), or the template when the config moved the room to another one.
    public static func configurationChangeDetails(stored: StoredRoom, template: RoomTemplate, templateName: String) -> String {
        guard templateName == stored.template else { return "template \(stored.template) → \(templateName)" }
        return decode(stored, as: template).changed.sorted { $0.key < $1.key }.map { "\($0.key) (\($0.value))" }.joined(separator: ", ")
    }

    /// Each stored control decoded as its template's kind, and why each of the others cannot be restored exactly.
    private static func decode(_ stored: StoredRoom, as template: RoomTemplate) -> (controls: [ControlID: StoredControl], changed: [String: String]) {
        var changed: [String: String] = [:]
        let configured = Set(template.controls.map(\.id))
        for id in stored.controls.keys where !configured.contains(id) { changed[id.rawValue] = "removed" }
        var decoded: [ControlID: StoredControl] = [:]
        for (id, prototype) in template.controls {
            guard let state = stored.controls[id] else {
                changed[id.rawValue] = "added"
                continue
            }
            let kind = ControlCoding.kind(of: prototype)
            guard let entry = decodeControl(kind: kind, state: state, as: prototype) else {
                changed[id.rawValue] = "not a stored \(kind)"
                continue
            }
            var settings = differingKeys(ControlCoding.configuration(of: entry.control), ControlCoding.configuration(of: prototype))
            if entry.permissions != template.permissions[id] { settings.append("permissions") }
            if entry.claimPolicy != template.claims[id] { settings.append("claims") }
            if settings.isEmpty {
                decoded[id] = entry
            } else {
                changed[id.rawValue] = settings.joined(separator: ", ")
            }
        }
        return (decoded, changed)
    }

    /// The top-level keys whose values differ between two configurations (a whole value when they are no objects).
    private static func differingKeys(_ a: JSONValue?, _ b: JSONValue?) -> [String] {
        guard a != b else { return [] }
        guard let a = a?.objectValue, let b = b?.objectValue else { return ["settings"] }
        return Set(a.keys).union(b.keys).filter { a[$0] != b[$0] }.sorted()
    }

    /// After a restart nobody is connected: each stored member leaves (reason `restart`), which ends
    /// its holds. One patch per member, like any other leave. Holds of sessions the store did not list
    /// (rooms without presence) end the same way.
    public mutating func dropMembersAfterRestart() -> [RoomUpdate] {
        var updates = Array(memberOrder).map { leave($0, reason: .restart) }
        // Holds the server API started: the server is no member (no presence to remove); they end in a patch of
        // their own (`cause.kind` `restart`).
        let serverHolds = endHolds(reason: .restart, heldBy: { $0 == .server })
        if serverHolds.patch != nil { updates.append(serverHolds) }
        for id in controlOrder {
            guard let holder = controls[id]!.holder else { continue }
            members[holder] = Member(name: nil)
            memberOrder.append(holder)
            updates.append(leave(holder, reason: .restart))
        }
        // Claims of sessions the store did not list (rooms without presence store no members) end too.
        if !claims.isEmpty {
            updates.append(commit(cause: ["kind": "restart"], touching: controlOrder.filter { claims[$0] != nil }) { room, _, _ in
                room.endClaims(reason: .restart) { _, _ in true }
            })
        }
        return updates
    }

    /// Every hold and claim (or those `holderFilter` picks) ends with `reason` in one patch (`cause.kind` the reason);
    /// the holders stay members. Cluster failover: the node that ran the room's hold timers and claim leases is gone.
    /// No patch when nothing was held or claimed.
    public mutating func endHolds(reason: HoldEndReason, heldBy holderFilter: (SessionID) -> Bool = { _ in true }) -> RoomUpdate {
        let holders = controlOrder.compactMap { id in controls[id]!.holder.flatMap { holderFilter($0) ? (id, $0) : nil } }
        let claimed = controlOrder.filter { id in claims[id]?.contains { holderFilter($0.session) } == true && !holders.contains { $0.0 == id } }
        guard !holders.isEmpty || !claimed.isEmpty else { return .none }
        return commit(cause: ["kind": .string(reason.rawValue)], touching: holders.map(\.0) + claimed) { room, _, ended in
            room.endClaims(reason: ClaimEndReason(reason)) { holderFilter($1.session) }
            for (id, holder) in holders {
                let events = room.controls[id]!.sessionLeft(holder, reason: reason)
                ended.append(contentsOf: events.ended.map { (id, $0) })
            }
        }
    }

    /// What a patch changed, for the store: touched controls, joined and left sessions.
    /// With `deltas` (a store that takes them, `RoomStore.takesControlDeltas`), a control the store has a recent full
    /// state of is written as the operations from what the store has to what it is now (`Room+StoreDeltas.swift`).
    public mutating func storeWrite(for patch: Patch, keepHistory: Int, deltas: Bool = false) -> StoreWrite {
        var touched = patch.touched.controls.map(ControlID.init)
        if !staleFormat.isEmpty {
            touched += staleFormat.filter { !touched.contains($0) }
            staleFormat = []
        }
        // Members come from the cause, not from presence ops: rooms without presence keep their members too.
        var joined: [StoredMember] = []
        var left: [SessionID] = []
        var presence: [(SessionID, JSONObject)] = []
        if let kind = patch.cause["kind"]?.stringValue, let session = patch.cause["session"]?.stringValue.map(SessionID.init) {
            if kind == "join", members[session] != nil { joined.append(storedMember(session)) }
            if kind == "leave" { left.append(session) }
            if kind == "presence", let member = members[session] { presence.append((session, member.data)) }
        }
        if patch.cause["kind"] == "presence", let sessions = patch.cause["sessions"]?.arrayValue {  // gathered updates
            for case let .string(name) in sessions { if let member = members[SessionID(name)] { presence.append((SessionID(name), member.data)) } }
        }
        var write = StoreWrite(room: name, template: template, epoch: epoch, version: patch.version, kind: .patch(patch),
                               controls: [], joined: joined, left: left,
                               keepFromVersion: max(0, patch.version - keepHistory + 1))
        if deltas {
            storeControls(touched, into: &write)
        } else {
            write.controls = encodedControls(touched)
        }
        write.presence = presence
        return write
    }

    /// Everything about the room, for a new room or a new epoch. With `deltas`, later writes of each control may be
    /// the operations from this state on.
    public mutating func storeReset(deltas: Bool = false) -> StoreWrite {
        var write = StoreWrite(room: name, template: template, epoch: epoch, version: version, kind: .reset, controls: [],
                               joined: memberOrder.map(storedMember), left: [], keepFromVersion: version + 1)
        storedBaselines = [:]
        if deltas {
            storeControls(controlOrder, into: &write)
        } else {
            write.controls = encodedControls(controlOrder)
        }
        return write
    }

    private func storedMember(_ session: SessionID) -> StoredMember {
        let member = members[session]!
        return StoredMember(session: session, name: member.name, roles: member.roles, data: member.data, user: member.user)
    }

    /// Each control's stored state as JSON text, with what the room keeps about it: the `permissions` and claim
    /// policy its template sets (so a stored room whose template changed them is not restored as it was: clients
    /// would keep showing the old ones), and who claims what (a takeover ends those claims with `failover`).
    private func encodedControls(_ ids: [ControlID]) -> [(id: ControlID, kind: String, state: String)] {
        ids.compactMap { id in storedObject(id).map { (id, ControlCoding.kind(of: controls[id]!), JSONWriter.string(.object($0))) } }
    }

    /// A stored state brought to this release's shape by its kind (`StorableControl.upgradeStored`).
    private static func upgrade<C: StorableControl>(_ object: inout JSONObject, configuredAs configured: C) {
        C.upgradeStored(&object, configuredAs: configured)
    }

    /// What the store keeps of control `id`: its stored state with the room's settings for it (nil: not stored).
    func storedObject(_ id: ControlID) -> JSONObject? {
        guard let control = controls[id], case var .object(object)? = ControlCoding.storedState(of: control) else { return nil }
        if let rules = permissions[id] { object[StoredControl.permissionsKey] = rules.json }
        if let policy = claimPolicies[id] { object[StoredControl.claimPolicyKey] = ["exclusive": .bool(policy.exclusive), "leaseMs": .int(policy.leaseMs)] }
        object[StoredControl.formatKey] = .int(StoredControl.currentFormat)
        if let held = claims[id] {
            object[StoredControl.claimsKey] = .array(held.map { ["session": .string($0.session.rawValue), "target": .string($0.target)] })
        }
        return object
    }

    /// A stored control and what the room stored with it. A list stored before its selection policy was kept takes
    /// the template's (`prototype`'s): use never changes it.
    private static func decodeControl(kind: String, state: String, as prototype: any Control) -> StoredControl? {
        guard case var .object(object)? = try? JSONParser.parse(state, maxDepth: ControlCoding.storedStateMaxDepth) else { return nil }
        let permissions = ControlPermissions(stored: object[StoredControl.permissionsKey])
        let policy = object[StoredControl.claimPolicyKey].map { p in
            ClaimPolicy(exclusive: p["exclusive"]?.boolValue ?? false, leaseMs: p["leaseMs"]?.intValue ?? 30_000)
        }
        let claims: [(session: SessionID, target: String)] = (object[StoredControl.claimsKey]?.arrayValue ?? []).compactMap { c in
            guard let session = c["session"]?.stringValue, let target = c["target"]?.stringValue else { return nil }
            return (SessionID(session), target)
        }
        let format = object[StoredControl.formatKey]?.intValue ?? 1
        if let configured = prototype as? any StorableControl { Self.upgrade(&object, configuredAs: configured) }
        for key in [StoredControl.permissionsKey, StoredControl.claimPolicyKey, StoredControl.claimsKey, StoredControl.formatKey] { object[key] = nil }
        guard let control = try? ControlCoding.restore(kind: kind, storedState: .object(object)) else { return nil }
        return StoredControl(control: control, permissions: permissions, claimPolicy: policy, claims: claims, format: format)
    }
}

/// One control as the room stores it: the control's own state, and beside it (under its own keys) the template's
/// permissions and claim policy for it and the claims on it.
struct StoredControl {
    static let permissionsKey = "permissions", claimPolicyKey = "claimPolicy", claimsKey = "claims", formatKey = "format"
    /// How rooms render, as stored: 2 since presence data, roles, claims and the wizard's `canNext` (absent: 1), 3 since
    /// a member's `user`. A room
    /// stored in an earlier format restores, but resumes from before its load get snapshots (`Room.resumeFloor`).
    static let currentFormat = 3
    var control: any Control
    var permissions: ControlPermissions?
    var claimPolicy: ClaimPolicy?
    var claims: [(session: SessionID, target: String)]
    var format: Int
}
