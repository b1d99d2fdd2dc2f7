import LiveControlsProtocol

/// Undo and redo of a member's own changes (`undo`, `redo`; docs/PROTOCOL.md, *Undo and redo*).
///
/// A change an undoable intent made (`UndoableControl.undoableIntents`) goes on its user's undo stack: the control
/// before and after it. `undo` takes the user's last change back out of the control as it is now (`reverting`: the
/// parts that change made go back, if nothing else changed them since; otherwise `conflict`, naming who did), as one
/// more change of the room; the undo goes on the redo stack, and `redo` takes it back the same way. A new change
/// empties the redo stack. A hold is one change (its press, ticks and end); so are a drag and a run of typing
/// (consecutive edits of one control by one session, each within `gatherGap` of the one before and nothing else changing
/// it between, for at most `gatherSpan`). A control that ends (`endedForUndo`) takes its changes off every stack.
extension Room {
    /// Gaps and spans of gathered edits (a drag, a run of typing).
    static let gatherGapNanos: UInt64 = 1_000_000_000, gatherSpanNanos: UInt64 = 10_000_000_000

    /// Whose stacks a member's changes go on: `u:` and its token's `sub`, or `s:` and its session (apart: no `sub` can
    /// name a session's stack).
    static func undoUser(_ member: Member, _ session: SessionID) -> String {
        member.user.map { "u:" + $0 } ?? "s:" + session.rawValue
    }

    /// The `user` a stack's key names (nil for a session's own).
    static func userOfUndoStack(_ key: String) -> String? { key.hasPrefix("u:") ? String(key.dropFirst(2)) : nil }

    /// How many changes `session`'s user can undo and redo here; nil when the room records nothing (or it is no member).
    public func undoCounts(for session: SessionID) -> UndoCounts? {
        guard !undoIntents.isEmpty, let member = members[session] else { return nil }
        return undoHistory.counts(of: Self.undoUser(member, session))
    }

    /// The sessions in the room whose stacks are `key`'s.
    public func sessions(ofUndoUser key: String) -> [SessionID] {
        if let user = Self.userOfUndoStack(key) { return sessionsOfUser[user] ?? [] }
        let session = SessionID(String(key.dropFirst(2)))
        return members[session] == nil ? [] : [session]
    }

    // MARK: Recording

    mutating func recordUndo(_ entry: UndoEntry, by member: Member, previousChange: Int?) -> [UndoCounts] {
        guard let after = entry.after as? any UndoableControl, after.recordsUndo(fromAny: entry.before) else { return [] }
        let user = Self.undoUser(member, entry.session)
        if type(of: after).gathersEdits, let top = gatherable(user, entry.control, entry.session, previousChange: previousChange, at: entry.startedAt) {
            return undoHistory.extendTop(of: user, to: entry.after, args: entry.args, version: entry.version, at: entry.startedAt,
                                         bytes: after.undoBytesAny(from: top.before))
        }
        var entry = entry
        entry.bytes = after.undoBytesAny(from: entry.before)
        return undoHistory.record(entry, by: user)
    }

    /// The top of `user`'s undo stack, when the next edit of `control` by `session` is part of the same gesture: made by
    /// it, with nothing else changing the control since, the gap and the span short enough.
    private func gatherable(_ user: String, _ control: ControlID, _ session: SessionID, previousChange: Int?, at now: Instant) -> UndoEntry? {
        guard let top = undoHistory.top(of: user, redo: false), top.gathers, top.control == control, top.session == session,
              previousChange == top.version, now >= top.lastAt,
              now.nanoseconds - top.lastAt.nanoseconds <= Self.gatherGapNanos,
              now.nanoseconds &- top.startedAt.nanoseconds <= Self.gatherSpanNanos else { return nil }
        return top
    }

    /// An intent that applied without a patch: a drag's `set` the room holds back for its next patch still moved the
    /// value, so the drag's change now ends there (or, past the gathering span, a change starts there).
    mutating func extendDrag(control id: ControlID, intent: String, args: JSONObject, by session: SessionID, before: any Control,
                             previousChange: Int?, at now: Instant) -> [UndoCounts] {
        guard let member = members[session], let after = controls[id] as? any UndoableControl else { return [] }
        let user = Self.undoUser(member, session)
        if let top = gatherable(user, id, session, previousChange: previousChange, at: now) {
            return undoHistory.extendTop(of: user, to: after, args: top.args, version: top.version, at: now, bytes: after.undoBytesAny(from: top.before))
        }
        return recordUndo(UndoEntry(serial: 0, control: id, intent: intent, args: args, session: session, name: member.name, before: before,
                                    after: after, version: previousChange ?? version, startedAt: now, lastAt: now, bytes: 0),
                          by: member, previousChange: previousChange)
    }

    /// A hold's step or end (`wake`) by `holder`: its hold is one change, so the step goes into the change its press
    /// recorded (when nothing else changed the control between), or is recorded as one (a toggle's confirmed switch). A
    /// drag's held-back value sent by the timer ends the drag's change there.
    mutating func recordHoldStep(control id: ControlID, holder: SessionID, before: any Control, previousChange: Int?, at now: Instant) -> [UndoCounts] {
        guard let member = members[holder], let after = controls[id] as? any UndoableControl else { return [] }
        let user = Self.undoUser(member, holder)
        if let top = undoHistory.top(of: user, redo: false), top.gathers, top.control == id, top.session == holder,
           top.intent == "press" || type(of: after).takesDrags, previousChange == top.version {
            return undoHistory.extendTop(of: user, to: after, args: top.args, version: version, at: now, bytes: after.undoBytesAny(from: top.before))
        }
        guard type(of: after).undoableHolds else { return [] }
        return recordUndo(UndoEntry(serial: 0, control: id, intent: "press", args: [:], session: holder, name: member.name, before: before,
                                    after: after, version: version, startedAt: now, lastAt: now, bytes: 0),
                          by: member, previousChange: previousChange)
    }

    /// After a change of `touched`: a control that ended takes its changes off every stack.
    mutating func dropEndedFromUndo(_ touched: [ControlID]) -> [UndoCounts] {
        var changed: [UndoCounts] = []
        for id in touched where undoEnding.contains(id) {
            if let control = controls[id] as? any UndoableControl, control.endedForUndo != nil {
                changed += undoHistory.purge(control: id)
            }
        }
        return changed
    }

    // MARK: Undo and redo

    /// Takes `session`'s user's last change back (`redo`: its last undo), as a change of the room with cause
    /// `{kind: "undo" | "redo", session, control, intent[, id]}`; throws why not and changes nothing.
    public mutating func undo(redo: Bool = false, by session: SessionID, requestID: RequestID?, at now: Instant) throws(IntentError) -> RoomUpdate {
        let word = redo ? "redo" : "undo"
        guard let member = members[session] else { throw IntentError(.notJoined, "join room \(name) first") }
        guard !undoIntents.isEmpty else {
            throw IntentError(.nothingToUndo, "room \(name) records no changes to \(word) (its template turned undo off, or none of its controls can be undone)")
        }
        let user = Self.undoUser(member, session)
        guard let entry = undoHistory.top(of: user, redo: redo) else {
            throw IntentError(.nothingToUndo, redo ? "nothing to redo in room \(name): undo a change of yours first" : "nothing to undo in room \(name): you have made no change here that is kept")
        }
        let id = entry.control
        guard let current = controls[id] as? any UndoableControl else { throw IntentError(.internalError, "control \(id) cannot be undone") }
        if let ended = current.endedForUndo { throw ended }  // (its changes were dropped when it ended: not reached)
        // As the change itself, and as what taking it back amounts to: the member must be allowed both.
        try permissions[id]?.check(entry.intent, control: id, memberRoles: member.roles)
        if let inverse = type(of: current).inverse(of: entry.intent) { try permissions[id]?.check(inverse, control: id, memberRoles: member.roles) }
        // What an undo writes is not one intent's reach: anyone's exclusive claim on the control holds it back.
        try checkClaims(id, reach: .whole, what: word, by: session)
        if let holder = current.holder {
            // A hold or a drag is going on: its next step would land on the undo (and a drag's state is not stored).
            let who = holder == session ? "you are" : holder == .server ? "the server is" : "\(memberName(holder)) is"
            var error = IntentError(.conflict, "cannot \(word) your \(entry.intent) on \(id): \(who) holding it right now")
            if holder != .server { error.by = byJSON(session: holder, name: members[holder]?.name, user: members[holder]?.user) }
            throw error
        }
        var reverted: (control: any Control, detail: JSONObject?)
        do throws(UndoConflict) {
            reverted = try current.revertingAny(entry.before, entry.after)
        } catch {
            throw conflict(error, undoing: entry, redo: redo, user: user)
        }
        if let refusal = current.undoRefusalAny(becoming: reverted.control, in: RoomView(controls: controls, clock: clock)) { throw refusal }
        reverted.control.adopt(clock: clock)
        try checkSize(replacing: id, with: reverted.control, among: controls)
        var cause: JSONObject = ["kind": .string(word), "session": .string(session.rawValue), "control": .string(id.rawValue), "intent": .string(entry.intent)]
        if let requestID { cause["id"] = requestID.json }
        if let detail = reverted.detail { for (key, value) in detail where cause[key] == nil { cause[key] = value } }
        let before = controls[id]!
        var update = commit(cause: cause, touching: [id]) { room, _, _ in room.controls[id] = reverted.control }
        let bytes = (reverted.control as? any UndoableControl)?.undoBytesAny(from: before) ?? reverted.control.stateBytes
        let replacement = UndoEntry(serial: 0, control: id, intent: entry.intent, args: entry.args, session: session, name: member.name,
                                    before: before, after: reverted.control, version: version, startedAt: now, lastAt: now, bytes: bytes)
        update.undoable += undoHistory.move(of: user, redo: redo, replacement: replacement)
        return update
    }

    private func byJSON(session: SessionID, name: String?, user: String?) -> JSONObject {
        ["session": .string(session.rawValue), "name": name.map { .string($0) } ?? .null, "user": user.map { .string($0) } ?? .null]
    }

    /// The `conflict` for an undo refused by `why`, naming who changed that part since: the other user whose recorded
    /// change touched it last, else the member behind the latest change of the control in the room's history (a hold's
    /// ticks); nobody when that was the server (the API, a timer) or is older than the history.
    private func conflict(_ why: UndoConflict, undoing entry: UndoEntry, redo: Bool, user: String) -> IntentError {
        var by: JSONObject?
        for (key, other) in undoHistory.entries(except: user) where other.control == entry.control && other.version > entry.version {
            guard touches(other, why) else { continue }
            by = byJSON(session: other.session, name: other.name, user: Self.userOfUndoStack(key))
            break
        }
        if by == nil, let since = history.changes(after: entry.version, current: version) {
            let prefix = "/controls/\(entry.control.rawValue)/", claims = prefix + "claims"
            for patch in since.reversed() {
                guard patch.ops.contains(where: { let p = $0.path.description; return p.hasPrefix(prefix) && !p.hasPrefix(claims) }) else { continue }
                let kind = patch.cause["kind"]?.stringValue
                // Only what changes values: an intent (not a release: it ends a hold), a tick; not claims, joins, leaves.
                if kind == "claim" || kind == "unclaim" || kind == "join" || kind == "leave" || kind == "presence"
                    || (kind == "intent" && patch.cause["intent"]?.stringValue == "release") { continue }
                guard let s = patch.cause["session"]?.stringValue else { break }  // the server, a timer
                let member = members[SessionID(s)]
                by = byJSON(session: SessionID(s), name: member?.name, user: member?.user)
                break
            }
        }
        let part = why.path.isEmpty ? "" : " (\(why.path.map { $0.hasPrefix("#") ? String($0.dropFirst()) : $0 }.joined(separator: "/")))"
        let who = by.map { b in (b["name"]?.stringValue).map { "by \($0)" } ?? "by session \(b["session"]?.stringValue ?? "?")" } ?? "by someone else"
        var error = IntentError(.conflict, "cannot \(redo ? "redo" : "undo") your \(entry.intent) on \(entry.control): what it changed\(part) was \(why.message) \(who)")
        error.by = by
        return error
    }

    /// Whether `entry` changed the part `why` names: a text's revision, or a path of the stored state.
    private func touches(_ entry: UndoEntry, _ why: UndoConflict) -> Bool {
        if let revision = why.revision, let before = entry.before as? SharedText, let after = entry.after as? SharedText {
            return before.rev < revision && revision <= after.rev
        }
        guard !why.path.isEmpty else { return true }
        guard let before = ControlCoding.storedState(of: entry.before), let after = ControlCoding.storedState(of: entry.after) else { return true }
        return StateMerge.changedPaths(before: before, after: after).contains { StateMerge.overlap($0, why.path) }
    }
}

extension UndoableControl {
    /// Edits that come many to a gesture (a drag, typing) are gathered into one change.
    static var gathersEdits: Bool { takesDrags || self == SharedText.self }

    func recordsUndo(fromAny before: any Control) -> Bool {
        guard let before = before as? Self else { return false }
        return recordsUndo(from: before)
    }

    func undoBytesAny(from before: any Control) -> Int {
        guard let before = before as? Self else { return stateBytes }
        return undoBytes(from: before)
    }

    func undoRefusalAny(becoming result: any Control, in room: RoomView) -> IntentError? {
        guard let result = result as? Self else { return nil }
        return undoRefusal(becoming: result, in: room)
    }

    func revertingAny(_ before: any Control, _ after: any Control) throws(UndoConflict) -> (control: any Control, detail: JSONObject?) {
        guard let before = before as? Self, let after = after as? Self else { throw UndoConflict(path: [], "of another kind now") }
        let result = try reverting(before, after)
        return (result.control, result.detail)
    }
}
