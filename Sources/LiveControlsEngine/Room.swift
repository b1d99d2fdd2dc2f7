import LiveControlsProtocol

/// The authoritative state of one room: controls, presence, epoch and version.
///
/// A value type with no clock and no I/O: every mutation takes `now` and returns the `RoomChange`
/// to broadcast (or `nil` when nothing visible changed). Its owner serialises calls.
public struct Room: Sendable {
    /// One member of the room's presence.
    public struct Member: Sendable, Equatable {
        public var name: String?
        /// What the session's token granted (`role`, then custom `roles`); fixed at join.
        public var roles: [String] = []
        /// The token's `sub` (the person behind the session), when its token named one; fixed at join.
        public var user: String?
        /// What the client set with `presence` messages (`Room+Presence.swift`).
        public var data = JSONObject()
        var presenceRate = RateBucket()
        /// Broadcasts (`Room+Broadcast.swift`), at the template's rate.
        var broadcastRate = RateBucket()
    }

    public let name: String
    public let template: String
    /// Names this room's lifetime; a room made anew gets a new epoch and restarts at version 0.
    public let epoch: String
    /// Whether the document lists members (`presence`); a template may turn it off for large audiences.
    public let tracksPresence: Bool
    /// Which roles may send which intents, by control (the template's `permissions`).
    public let permissions: [ControlID: ControlPermissions]
    /// Whether a control's state follows others (`Control.reads`): then a change patches those that read it too.
    let hasReaders: Bool
    /// Whether a control keeps parts of its state from some members (`Control.privateParts`): then members' views
    /// differ, and patches say who receives each op (`Views.swift`).
    public let hasPrivateParts: Bool
    /// How each control treats claims (the template's `claims`; unlisted controls: soft, 30 s).
    public let claimPolicies: [ControlID: ClaimPolicy]
    /// The template's `maxStateBytes`: an intent that would grow the state past it is refused (`too_large`).
    public let maxStateBytes: Int
    /// Who may broadcast, how large and how often (the template's `broadcast`).
    public let broadcastPolicy: BroadcastPolicy
    /// The intents whose changes each control records for undo (`Room+Undo.swift`); empty: the room records nothing.
    let undoIntents: [ControlID: Set<String>]
    /// Those of them that can end (a form, a wizard, a poll): looked at after each change of theirs.
    let undoEnding: Set<ControlID>
    /// Every user's undo and redo stacks (in memory only).
    var undoHistory: UndoHistory
    /// The whole room's broadcasts (`BroadcastPolicy.roomPerSecond`).
    var broadcastRate = RateBucket()
    /// Who is editing what, by control, in claim order (`Room+Claims.swift`).
    var claims: [ControlID: [Claim]] = [:]
    /// Claims ended during the mutation being committed (`commit` lists them in `cause.claimsEnded`).
    var claimsEnded: [ClaimEnd] = []
    public internal(set) var version: Int = 0
    public internal(set) var history: ChangeHistory
    /// A room restored from state an earlier release stored (another way of rendering it): a `since` at or before this
    /// version gets a snapshot, since the client's state has the old shape. Nil: every `since` in the history resumes.
    public internal(set) var resumeFloor: Int?

    var controlOrder: [ControlID]
    var controls: [ControlID: any Control]
    var memberOrder = JoinOrder()
    var members: [SessionID: Member] = [:]
    /// The sessions each user (a token's `sub`) has in the room: whether a join is its first, a leave its last; who
    /// hears of the user's undo stacks.
    var sessionsOfUser: [String: [SessionID]] = [:]
    /// Controls restored from a store in an older format (`StoredControl.currentFormat`): written whole with the room's
    /// first write, so a later load does not take the room for an old one again.
    var staleFormat: [ControlID] = []
    /// Members' presence `data` as the next presence patch will set it (`Room+Presence.swift`): checked, not yet a version.
    var gatheredPresence: [SessionID: JSONObject] = [:]
    /// What the store has of each control, for writing what changed (`Room+StoreDeltas.swift`; empty unless the store
    /// takes deltas).
    var storedBaselines: [ControlID: StoredBaseline] = [:]
    /// Server time for states that name a moment (`WallClock`); the room's owner sets it (`adopt(clock:)`; a fixed
    /// clock until then).
    public private(set) var clock = WallClock.fixed(unixMillisecondsAtZero: 0)

    /// Takes the owner's clock: every control places the moments its state names on it (a loaded room's running
    /// timers get their deadlines in this process). The runtime calls it once, when it takes the room.
    public mutating func adopt(clock: WallClock) {
        self.clock = clock
        for id in controlOrder { controls[id]!.adopt(clock: clock) }
    }

    public init(name: String, template: RoomTemplate, epoch: String, historyLimit: Int) {
        self.name = name
        self.template = template.name
        self.epoch = epoch
        self.tracksPresence = template.presence
        self.permissions = template.permissions
        self.claimPolicies = template.claims
        self.maxStateBytes = template.maxStateBytes
        self.broadcastPolicy = template.broadcast
        self.undoIntents = Room.undoableIntents(of: template)
        self.undoEnding = Room.undoEnding(of: template)
        self.undoHistory = UndoHistory(policy: template.undo)
        self.hasReaders = template.controls.contains { type(of: $0.control).readsOtherControls }
        self.hasPrivateParts = template.controls.contains { type(of: $0.control).hasPrivateParts }
        self.history = ChangeHistory(limit: historyLimit)
        self.controlOrder = template.controls.map(\.id)
        self.controls = Dictionary(uniqueKeysWithValues: template.controls.map { ($0.id, $0.control) })
    }

    public var controlIDs: [ControlID] { controlOrder }
    public var sessions: [SessionID] { Array(memberOrder) }
    /// How many members the room has (without copying their list).
    public var memberCount: Int { memberOrder.count }
    public func control(_ id: ControlID) -> (any Control)? { controls[id] }
    public func isMember(_ session: SessionID) -> Bool { members[session] != nil }
    /// A member as it joined (nil: not a member).
    public func memberInfo(_ session: SessionID) -> Member? { members[session] }

    // MARK: Rendering

    /// The whole document: `{"controls": {...}, "presence": {...}}`.
    public func render() -> JSONValue {
        var controlsJSON = JSONObject()
        for id in controlOrder { controlsJSON[id.rawValue] = renderControl(id) }
        var presence = JSONObject()
        let holdings = holdingsBySession(), editing = editingBySession()
        if tracksPresence { for session in memberOrder { presence[session.rawValue] = memberJSON(session, holdings: holdings, editing: editing) } }
        return ["controls": .object(controlsJSON), "presence": .object(presence)]
    }

    /// The document as `viewer` sees it: without the private parts (`Control.privateParts`) it is not in the audience of.
    public func render(for viewer: Viewer) -> JSONValue {
        var document = render()
        guard hasPrivateParts else { return document }
        var hidden: [[String]] = []
        for id in controlOrder where type(of: controls[id]!).hasPrivateParts {
            for part in controls[id]!.privateParts where !viewer.sees(part.audience) { hidden.append(["controls", id.rawValue] + part.path) }
        }
        document.remove(hidden)
        return document
    }

    /// Whether `session` sees a patch as a member without roles does: it is none of the patch's owners and has none of
    /// its roles (`Patch.audienceMembers`). Cheap: no allocation.
    public func seesAsAnyone(_ session: SessionID, owners: Set<SessionID>, roles: Set<String>) -> Bool {
        if owners.contains(session) { return false }
        guard !roles.isEmpty, let mine = members[session]?.roles else { return true }
        return !mine.contains(where: roles.contains)
    }

    /// Who `session` is, for what it sees: its roles as it joined (none when it is no member).
    public func viewer(of session: SessionID) -> Viewer {
        Viewer(session: session, roles: members[session]?.roles ?? [])
    }

    /// One control's state in the room: its own, then who is editing which part of it (`claims`), then the
    /// `permissions` its template sets (they never change while the room lives, so no patch touches them).
    func renderControl(_ id: ControlID) -> JSONValue {
        guard case var .object(object) = controls[id]!.render(in: RoomView(controls: controls)) else { return controls[id]!.render() }
        object["claims"] = claimsJSON(id, claims[id])
        if let rules = permissions[id] { object["permissions"] = rules.json }
        return .object(object)
    }

    func memberJSON(_ session: SessionID, holdings: [SessionID: [String]], editing: [SessionID: [JSONValue]]) -> JSONValue {
        let member = members[session]!
        return [
            "name": member.name.map { .string($0) } ?? .null,
            "user": member.user.map { .string($0) } ?? .null,
            "roles": .array(member.roles.map { .string($0) }),
            "holding": .array((holdings[session] ?? []).map { .string($0) }),
            "editing": .array(editing[session] ?? []),
            "data": .object(member.data),
        ]
    }

    /// Control ids each session holds, in control order.
    func holdingsBySession() -> [SessionID: [String]] {
        var result: [SessionID: [String]] = [:]
        for id in controlOrder { if let h = controls[id]!.holder { result[h, default: []].append(id.rawValue) } }
        return result
    }

    // MARK: Mutations

    /// Adds `session` to presence, with the roles its token granted (a template's `permissions` ask for them).
    public mutating func join(_ session: SessionID, name: String?, roles: [String], user: String? = nil) -> RoomUpdate {
        guard members[session] == nil else { return .none }
        var cause: JSONObject = ["kind": "join", "session": .string(session.rawValue)]
        if tracksPresence, let user {  // (a room without presence shows nobody: nor whose session this is)
            cause["user"] = .string(user)
            if sessionsOfUser[user] == nil { cause["userJoined"] = true }  // its first session here
        }
        return commit(cause: cause, touching: []) { room, ops, _ in
            room.members[session] = Member(name: name, roles: roles, user: user)
            if let user { room.sessionsOfUser[user, default: []].append(session) }
            room.memberOrder.append(session)
            if room.tracksPresence {
                ops.append(.add(path: JSONPointer(["presence", session.rawValue]), value: room.memberJSON(session, holdings: [:], editing: [:])))
            }
        }
    }

    /// Removes `session` from presence, ending its holds with `reason` (`leave` or `disconnect`).
    public mutating func leave(_ session: SessionID, reason: HoldEndReason) -> RoomUpdate {
        guard let member = members[session] else { return .none }
        var cause: JSONObject = ["kind": "leave", "session": .string(session.rawValue), "reason": .string(reason.rawValue)]
        if tracksPresence, let user = member.user {
            // The member is gone after it: its webhooks read who it was, and whether it was its user's last session, here.
            cause["user"] = .string(user)
            if sessionsOfUser[user]?.count == 1 { cause["userLeft"] = true }
        }
        return commit(cause: cause, touching: controlOrder, removing: session) { room, _, ended in
            room.endClaims(reason: ClaimEndReason(reason)) { $1.session == session }
            for id in room.controlOrder {
                let events = room.controls[id]!.sessionLeft(session, reason: reason)
                ended.append(contentsOf: events.ended.map { (id, $0) })
            }
        }
    }

    /// Applies one intent from a member, or throws a typed error and changes nothing.
    public mutating func apply(
        control id: ControlID, intent: String, args: JSONObject, by session: SessionID, requestID: RequestID?, at now: Instant
    ) throws(IntentError) -> RoomUpdate {
        guard let member = members[session] else { throw IntentError(.notJoined, "join room \(name) first") }
        guard var control = controls[id] else {
            throw IntentError(.unknownControl, "room \(name) has no control \"\(id)\" (it has: \(controlOrder.map(\.rawValue).joined(separator: ", ")))")
        }
        try permissions[id]?.check(intent, control: id, memberRoles: member.roles)
        try checkClaims(id, intent: intent, args: args, by: session)
        let before = control
        let events = try control.apply(intent, args: IntentArgs(args), by: session, at: now, room: RoomView(controls: controls, clock: clock))
        try checkSize(replacing: id, with: control, among: controls)
        var cause: JSONObject = ["kind": "intent", "session": .string(session.rawValue), "control": .string(id.rawValue), "intent": .string(intent)]
        if let requestID { cause["id"] = requestID.json }
        if let detail = events.detail { for (key, value) in detail where cause[key] == nil { cause[key] = value } }  // (never the cause's own keys)
        let lastChange = undoIntents.isEmpty ? nil : undoHistory.lastChange[id]
        var update = commit(cause: cause, touching: [id]) { room, _, ended in
            room.controls[id] = control
            ended.append(contentsOf: events.ended.map { (id, $0) })
        }
        if undoIntents[id]?.contains(intent) == true {
            if update.patch != nil {
                update.undoable += recordUndo(UndoEntry(serial: 0, control: id, intent: intent, args: args, session: session, name: member.name,
                                                        before: before, after: control, version: version, startedAt: now, lastAt: now, bytes: 0),
                                              by: member, previousChange: lastChange)
            } else if type(of: control).takesDrags {
                update.undoable += extendDrag(control: id, intent: intent, args: args, by: session, before: before, previousChange: lastChange, at: now)
            }
        }
        return update
    }

    /// Refuses (`too_large`) a change that would take the room's state past `maxStateBytes`: one editor cannot
    /// make a room too big for everyone. A change that shrinks it, or keeps it under, passes. `current`: the room's
    /// controls as the change finds them (the server API's list sees the effect of the intents before).
    @discardableResult
    func checkSize(replacing id: ControlID, with changed: any Control, among current: [ControlID: any Control]) throws(IntentError) -> (before: Int, after: Int) {
        let before = current[id]!.stateBytes, after = changed.stateBytes
        guard after > before else { return (before, after) }
        var total = 0
        for other in controlOrder where other != id { total += current[other]!.stateBytes }
        total += after
        guard total <= maxStateBytes else {
            throw IntentError(.tooLarge, "room \(name)'s state would take about \(total) bytes, over its bound of \(maxStateBytes) (the template's maxStateBytes); remove something first")
        }
        return (before, after)
    }

    /// `touched` and the controls that read one of them (`Control.reads`), in room order after `touched`.
    private func touchedAndReaders(_ touched: [ControlID]) -> [ControlID] {
        guard hasReaders, !touched.isEmpty else { return touched }
        return touched + controlOrder.filter { id in !touched.contains(id) && touched.contains(where: controls[id]!.reads) }
    }

    /// Runs `body`, then diffs the touched controls (and those that read them) and the presence it affected into one
    /// patch.
    mutating func commit(
        cause: JSONObject, touching: [ControlID], removing leaving: SessionID? = nil,
        _ body: (inout Room, inout [PatchOp], inout [(ControlID, HoldEnd)]) -> Void
    ) -> RoomUpdate {
        // A control's own state is diffed (`render(in:)`), and its `claims` only when claims changed: the common intent
        // changes no claim, and building each control's `claims` object twice per intent would be its cost.
        let watched = touchedAndReaders(touching)
        let before = watched.map { controls[$0]!.render(in: RoomView(controls: controls)) }
        let claimsBefore = claims
        let deadlinesBefore = touching.map { wakeDeadline(of: $0) }
        let partsBefore = hasPrivateParts ? watched.map { controls[$0]!.privateParts } : []
        // Who holds and edits what, for presence only (a room without presence skips both walks).
        let holdingsBefore = tracksPresence ? holdingsBySession() : [:], editingBefore = tracksPresence ? editingBySession() : [:]
        claimsEnded = []
        var ops: [PatchOp] = []
        var ended: [(ControlID, HoldEnd)] = []
        body(&self, &ops, &ended)
        endClaimsOnVanishedParts(of: watched)

        var timers: [TimerEffect] = []
        let view = RoomView(controls: controls)
        // Who receives each op, while some op is not for everyone (nil: all are).
        var access: [OpAccess]? = nil
        for (i, id) in watched.enumerated() {
            let after = controls[id]!.render(in: view), at = JSONPointer(["controls", id.rawValue])
            let diff = JSONDiff.diff(from: before[i], to: after, at: at)
            guard hasPrivateParts, type(of: controls[id]!).hasPrivateParts else {
                access?.append(contentsOf: repeatElement(.all, count: diff.count))
                ops.append(contentsOf: diff)
                continue
            }
            let tagged = Self.restrict(diff, at: at, before: before[i], after: after, partsBefore: partsBefore[i], partsAfter: controls[id]!.privateParts)
            if access == nil, tagged.contains(where: { $0.1 != .all }) { access = Array(repeating: .all, count: ops.count) }
            ops.append(contentsOf: tagged.map(\.0))
            access?.append(contentsOf: tagged.map(\.1))
        }
        let controlOpsEnd = ops.count
        if claims != claimsBefore {
            for id in controlOrder where claims[id] != claimsBefore[id] {
                ops.append(contentsOf: JSONDiff.diff(from: claimsJSON(id, claimsBefore[id]), to: claimsJSON(id, claims[id]),
                                                     at: JSONPointer(["controls", id.rawValue, "claims"])))
            }
        }
        for (i, id) in touching.enumerated() {
            let deadline = wakeDeadline(of: id)
            if deadline != deadlinesBefore[i] { timers.append(TimerEffect(control: id, deadline: deadline)) }
        }
        // Presence: whoever gained or lost a hold gets its new `holding` list.
        // Both maps list only sessions that hold or claim something: comparing them is cheap, and only when they
        // differ are the members walked (in join order), so an intent in a room of 10,000 costs no walk of them.
        let holdingsAfter = tracksPresence ? holdingsBySession() : [:], editingAfter = tracksPresence ? editingBySession() : [:]
        if holdingsBefore != holdingsAfter || editingBefore != editingAfter {
            for session in memberOrder where session != leaving {
                if holdingsBefore[session] != holdingsAfter[session] {
                    ops.append(.replace(path: JSONPointer(["presence", session.rawValue, "holding"]),
                                        value: .array((holdingsAfter[session] ?? []).map { .string($0) })))
                }
                if editingBefore[session] != editingAfter[session] {
                    ops.append(.replace(path: JSONPointer(["presence", session.rawValue, "editing"]), value: .array(editingAfter[session] ?? [])))
                }
            }
        }
        if let leaving {
            if let user = members[leaving]?.user {
                sessionsOfUser[user]?.removeAll { $0 == leaving }
                if sessionsOfUser[user]?.isEmpty == true { sessionsOfUser[user] = nil }
            }
            // A session without a user: its stack ends with it (a reconnect is a new session).
            if members[leaving]?.user == nil, !undoIntents.isEmpty { undoHistory.drop(Self.undoUser(members[leaving]!, leaving)) }
            members[leaving] = nil
            gatheredPresence[leaving] = nil
            memberOrder.remove(leaving)
            if tracksPresence { ops.append(.remove(path: JSONPointer(["presence", leaving.rawValue]))) }
        }
        // What follows the controls' ops (claims, presence) is for everyone.
        access?.append(contentsOf: repeatElement(.all, count: ops.count - controlOpsEnd))
        guard !ops.isEmpty else { return RoomUpdate(patch: nil, timers: timers) }
        // A control that ended (a form completed, a poll closed) takes its changes off every undo stack.
        let undoable = undoEnding.isEmpty ? [] : dropEndedFromUndo(touching)
        var cause = cause
        if !claimsEnded.isEmpty {
            cause["claimsEnded"] = .array(claimsEnded.map(\.json))
            claimsEnded = []
        }
        if !ended.isEmpty {
            cause["ended"] = .array(ended.map { id, end in
                ["control": .string(id.rawValue), "session": .string(end.session.rawValue), "reason": .string(end.reason.rawValue)]
            })
        }
        version += 1
        if !undoIntents.isEmpty { for id in touching { undoHistory.lastChange[id] = version } }
        let patch = Patch(version: version, ops: ops, cause: .object(cause), access: access)
        history.append(patch)
        return RoomUpdate(patch: patch, timers: timers, undoable: undoable)
    }
}
