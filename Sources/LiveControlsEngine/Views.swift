import LiveControlsProtocol

// Per-member views: a control may keep parts of its state from some members (a poll's ballots before it is
// revealed). The room's document is one (what the server API, the stores and webhooks see); each member sees it
// without the private parts it is not in the audience of. A patch is diffed once, on the whole document, and each
// op says who receives it (`OpAccess`); members who receive the same ops share one encoding (`Patch.viewKey`).

/// Who sees a private part of a control's state: the session it belongs to, and roles.
public struct Audience: Sendable, Hashable {
    /// The session the part belongs to (a member's own ballot), if any.
    public var owner: SessionID?
    /// Roles that see it (a template's `host`).
    public var roles: [String]

    public init(owner: SessionID? = nil, roles: [String]) {
        self.owner = owner
        self.roles = roles
    }

    var json: JSONValue {
        var o: JSONObject = ["roles": .array(roles.map { .string($0) })]
        if let owner { o["owner"] = .string(owner.rawValue) }
        return .object(o)
    }

    init?(json: JSONValue) {
        guard let roles = json["roles"]?.arrayValue else { return nil }
        self.init(owner: json["owner"]?.stringValue.map(SessionID.init), roles: roles.compactMap(\.stringValue))
    }
}

/// Whom a state or a patch is rendered for.
public struct Viewer: Sendable, Hashable {
    /// The member's session; nil for a viewer that is no member.
    public var session: SessionID?
    /// The member's roles (its token's `role`, then custom `roles`).
    public var roles: [String]
    /// The server API, the stores and webhooks see every part. (A member with role `admin` does not: in open mode
    /// every member is one.)
    public var seesEverything = false

    public init(session: SessionID?, roles: [String]) {
        self.session = session
        self.roles = roles
    }

    /// The server API, the stores and webhooks: every part.
    public static let everything: Viewer = {
        var viewer = Viewer(session: nil, roles: [])
        viewer.seesEverything = true
        return viewer
    }()

    public func sees(_ audience: Audience) -> Bool {
        if seesEverything { return true }
        if let owner = audience.owner, owner == session { return true }
        return roles.contains { audience.roles.contains($0) }
    }
}

/// A member of a control's state not everyone sees. Its path is object keys only (an array index would name
/// different elements in different views), and its audience stays the same while it is private (it may turn public
/// and private again: a poll's tally at `reveal` and `reset`).
public struct PrivatePart: Sendable, Equatable {
    /// Keys from the control's state object down to the member.
    public var path: [String]
    public var audience: Audience

    public init(path: [String], audience: Audience) {
        self.path = path
        self.audience = audience
    }
}

/// Who receives one op of a patch.
public enum OpAccess: Sendable, Equatable {
    /// Every member.
    case all
    /// The members in the audience (a change inside a private part).
    case only(Audience)
    /// The members not in the audience: a private part turned public (they get its value) or public turned private
    /// (they lose it).
    case others(Audience)
    /// Every member, the op's value without the parts (paths relative to the op's) the member does not see.
    case redacted([PrivatePart])

    func admits(_ viewer: Viewer) -> Bool {
        switch self {
        case .all, .redacted: return true
        case let .only(audience): return viewer.sees(audience)
        case let .others(audience): return !viewer.sees(audience)
        }
    }

    var json: JSONValue {
        switch self {
        case .all: return "all"
        case let .only(audience): return ["only": audience.json]
        case let .others(audience): return ["others": audience.json]
        case let .redacted(parts): return ["redacted": .array(parts.map { ["path": .array($0.path.map { .string($0) }), "audience": $0.audience.json] })]
        }
    }

    init?(json: JSONValue) {
        if json.stringValue == "all" { self = .all; return }
        if let a = json["only"].flatMap(Audience.init(json:)) { self = .only(a); return }
        if let a = json["others"].flatMap(Audience.init(json:)) { self = .others(a); return }
        guard let parts = json["redacted"]?.arrayValue else { return nil }
        var result: [PrivatePart] = []
        for part in parts {
            guard let path = part["path"]?.arrayValue, let audience = part["audience"].flatMap(Audience.init(json:)) else { return nil }
            result.append(PrivatePart(path: path.compactMap(\.stringValue), audience: audience))
        }
        self = .redacted(result)
    }
}

extension Patch {
    /// Whether every member receives the same ops.
    public var isShared: Bool { access == nil }

    /// The ops `viewer` receives: those it is admitted to, values without what it does not see.
    public func ops(for viewer: Viewer) -> [PatchOp] {
        guard let access else { return ops }
        var result: [PatchOp] = []
        for (op, rule) in zip(ops, access) where rule.admits(viewer) {
            if case let .redacted(parts) = rule {
                switch op {
                case let .add(path, value): result.append(.add(path: path, value: value.hiding(parts, from: viewer)))
                case let .replace(path, value): result.append(.replace(path: path, value: value.hiding(parts, from: viewer)))
                case .remove: result.append(op)
                }
            } else {
                result.append(op)
            }
        }
        return result
    }

    /// The sessions and roles its restricted ops name: a viewer that is none of those sessions and has none of those roles
    /// receives what a member without roles does (the fan-out looks no further for most of a room).
    public var audienceMembers: (owners: Set<SessionID>, roles: Set<String>) {
        var owners = Set<SessionID>(), roles = Set<String>()
        func add(_ audience: Audience) {
            if let owner = audience.owner { owners.insert(owner) }
            roles.formUnion(audience.roles)
        }
        for rule in access ?? [] {
            switch rule {
            case .all: continue
            case let .only(audience), let .others(audience): add(audience)
            case let .redacted(parts): parts.forEach { add($0.audience) }
            }
        }
        return (owners, roles)
    }

    /// What decides `ops(for:)`: viewers with equal keys receive equal ops (one encoding serves them all).
    public func viewKey(for viewer: Viewer) -> [Bool] {
        guard let access else { return [] }
        var key: [Bool] = []
        for rule in access {
            switch rule {
            case .all: continue
            case .only, .others: key.append(rule.admits(viewer))
            case let .redacted(parts): key.append(contentsOf: parts.map { viewer.sees($0.audience) })
            }
        }
        return key
    }

    /// The ops as stored (history in SQLite and Redis): each restricted op carries its `access` as `"to"`.
    public var storedOps: JSONValue {
        guard let access else { return .array(ops.map(\.json)) }
        return .array(zip(ops, access).map { op, rule in
            guard rule != .all, case var .object(o) = op.json else { return op.json }
            o["to"] = rule.json
            return .object(o)
        })
    }

    /// A patch read back from `storedOps`; nil when they do not parse.
    public init?(version: Int, storedOps: JSONValue, cause: JSONValue) {
        guard let entries = storedOps.arrayValue else { return nil }
        var ops: [PatchOp] = [], access: [OpAccess] = [], restricted = false
        for entry in entries {
            guard let op = try? PatchOp(json: entry) else { return nil }
            ops.append(op)
            if let to = entry["to"] {
                guard let rule = OpAccess(json: to) else { return nil }
                access.append(rule)
                restricted = true
            } else {
                access.append(.all)
            }
        }
        self.init(version: version, ops: ops, cause: cause, access: restricted ? access : nil)
    }
}

extension JSONValue {
    /// This value without the members at `parts` (relative paths) that `viewer` does not see.
    func hiding(_ parts: [PrivatePart], from viewer: Viewer) -> JSONValue {
        var result = self
        result.remove(parts.filter { !viewer.sees($0.audience) }.map(\.path))
        return result
    }

    /// Removes the object members at `paths` (keys only) that are there: those under one object in one pass, and no
    /// object copied on the way (a member sees one ballot of thousands: removing the others one by one, each a copy of
    /// the ballots, was quadratic).
    mutating func remove(_ paths: [[String]]) {
        guard !paths.isEmpty else { return }
        var byParent: [ArraySlice<String>: Set<String>] = [:]
        for path in paths where !path.isEmpty { byParent[path.dropLast(), default: []].insert(path.last!) }
        for (parent, keys) in byParent { removeMembers(keys, under: parent) }
    }

    private mutating func removeMembers(_ keys: Set<String>, under path: ArraySlice<String>) {
        guard case var .object(o) = self else { return }
        self = .null  // `o` the only owner of its storage while it changes
        if let key = path.first {
            if var child = o[key] {
                o[key] = .null  // and `child` of its own
                child.removeMembers(keys, under: path.dropFirst())
                o[key] = child
            }
        } else {
            o.removeAll(keys: keys)
        }
        self = .object(o)
    }

    /// The value at `path` (keys only), if there.
    func value(at path: ArraySlice<String>) -> JSONValue? {
        guard let key = path.first else { return self }
        return self[key]?.value(at: path.dropFirst())
    }
}

extension Room {
    /// Says who receives each op of one control's diff (`at`: the control's path), and adds what a part whose audience
    /// changed needs: a part that turned public goes to those who did not see it (`add`), one that turned private
    /// leaves those who no longer see it (`remove`).
    static func restrict(_ ops: [PatchOp], at prefix: JSONPointer, before: JSONValue, after: JSONValue,
                         partsBefore: [PrivatePart], partsAfter: [PrivatePart]) -> [(PatchOp, OpAccess)] {
        if partsBefore.isEmpty && partsAfter.isEmpty { return ops.map { ($0, .all) } }
        if ops.isEmpty && partsBefore == partsAfter { return [] }  // (a leave touches every control; most change nothing)
        let depth = prefix.tokens.count
        // Parts by path: each op finds its part by looking up its path's prefixes (no walk of the parts: a poll has one
        // per ballot).
        var audienceAfter: [ArraySlice<String>: Audience] = [:], audienceBefore: [ArraySlice<String>: Audience] = [:]
        for part in partsAfter { audienceAfter[part.path[...]] = part.audience }
        for part in partsBefore { audienceBefore[part.path[...]] = part.audience }
        let longest = max(partsAfter.map(\.path.count).max() ?? 0, partsBefore.map(\.path.count).max() ?? 0)
        func part(containing path: ArraySlice<String>) -> Audience? {
            for length in stride(from: min(longest, path.count), through: 1, by: -1) {
                let prefix = path.prefix(length)
                if let audience = audienceAfter[prefix] ?? audienceBefore[prefix] { return audience }
            }
            return nil
        }
        var result: [(PatchOp, OpAccess)] = []
        result.reserveCapacity(ops.count)
        // Relative paths of ops that go to everyone and cover a part (a parent replaced): they carry it themselves.
        var covering: [ArraySlice<String>] = []
        for op in ops {
            let path = op.path.tokens[depth...]
            if let audience = part(containing: path) {
                result.append((op, .only(audience)))
                continue
            }
            let inside = path.count >= longest ? [] : partsAfter.filter { $0.path.count > path.count && $0.path.starts(with: path) }
            result.append((op, inside.isEmpty ? .all : .redacted(inside.map { PrivatePart(path: Array($0.path.dropFirst(path.count)), audience: $0.audience) })))
            covering.append(path)
        }
        func covered(_ part: PrivatePart) -> Bool { covering.contains { part.path.count > $0.count && part.path.starts(with: $0) } }
        for part in partsBefore where audienceAfter[part.path[...]] == nil && !covered(part) {
            if let value = after.value(at: part.path[...]) {
                result.append((.add(path: JSONPointer(prefix.tokens + part.path), value: value), .others(part.audience)))
            }
        }
        for part in partsAfter where audienceBefore[part.path[...]] == nil && !covered(part) {
            if before.value(at: part.path[...]) != nil {
                result.append((.remove(path: JSONPointer(prefix.tokens + part.path)), .others(part.audience)))
            }
        }
        return result
    }
}

extension Room {
    /// Whether a client holding the state up to the missed patches, as its former session `former` saw it, can take
    /// them as a new session (`join {since}`): not when that session owns a private part (its ballot) in the state now
    /// or in a missed patch — its state has what the new session does not see. Unnamed (`since` without `session`),
    /// any owned part counts. Roles are taken to be the same as the held state was seen with.
    public func resumes(from former: SessionID?, missed: [Patch]) -> Bool {
        guard hasPrivateParts else { return true }
        func owned(_ audience: Audience) -> Bool { audience.owner != nil && (former == nil || audience.owner == former) }
        for id in controlOrder where type(of: controls[id]!).hasPrivateParts {
            if controls[id]!.privateParts.contains(where: { owned($0.audience) }) { return false }
        }
        for patch in missed {
            for rule in patch.access ?? [] {
                switch rule {
                case .all: continue
                case let .only(audience), let .others(audience): if owned(audience) { return false }
                case let .redacted(parts): if parts.contains(where: { owned($0.audience) }) { return false }
                }
            }
        }
        return true
    }

    /// Which of the state's private parts `viewer` sees, in order: viewers with equal keys see equal states (a
    /// snapshot encoded once serves them).
    public func viewKey(for viewer: Viewer) -> [Bool] {
        guard hasPrivateParts else { return [] }
        var key: [Bool] = []
        for id in controlOrder where type(of: controls[id]!).hasPrivateParts {
            for part in controls[id]!.privateParts { key.append(viewer.sees(part.audience)) }
        }
        return key
    }
}
