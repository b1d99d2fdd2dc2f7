import LiveControlsProtocol

/// Undo and redo of a member's own changes (`undo`, `redo`; docs/PROTOCOL.md, *Undo and redo*).
///
/// A change an undoable intent made (`UndoableControl.undoableIntents`) goes on its user's undo stack: the control
/// before and after it. `undo` takes the user's last change back out of the control as it is now (`reverting`: the
/// parts that change made go back, if nothing else changed them since; otherwise `conflict`, naming who did), as one
/// more change of the room; the undo goes on the redo stack, and `redo` takes it back the same way. A new change
/// empties the redo stack. A drag or a run of typing (consecutive edits of one control by one session, each within
/// `gatherGap` of the one before and nothing else changing it between, for at most `gatherSpan`) is one change.
extension Room {
    /// Gaps and spans of gathered edits (a drag, a run of typing).
    static let gatherGapNanos: UInt64 = 1_000_000_000, gatherSpanNanos: UInt64 = 10_000_000_000

    /// Whose stacks a member's changes go on: its token's `sub`, or its session.
    static func undoUser(_ member: Member, _ session: SessionID) -> String {
        member.user ?? "session:\(session.rawValue)"
    }

    /// How many changes `session`'s user can undo and redo here; nil when the room records nothing or both are 0.
    public func undoCounts(for session: SessionID) -> UndoCounts? {
        guard !undoIntents.isEmpty, let member = members[session] else { return nil }
        let counts = undoHistory.counts(of: Self.undoUser(member, session))
        return counts.undo == 0 && counts.redo == 0 ? nil : counts
    }

    /// The sessions in the room whose stacks are `user`'s.
    public func sessions(ofUndoUser user: String) -> [SessionID] {
        if user.hasPrefix("session:") {
            let session = SessionID(String(user.dropFirst("session:".count)))
            return members[session] == nil ? [] : [session]
        }
        return sessionsOfUser[user] ?? []
    }

    mutating func recordUndo(_ entry: UndoEntry, by member: Member, previousChange: Int?) -> [UndoCounts] {
        guard let after = entry.after as? any UndoableControl, after.recordsUndo(fromAny: entry.before) else { return [] }
        let user = Self.undoUser(member, entry.session)
        if type(of: after).gathersEdits, let top = undoHistory.top(of: user, redo: false), top.control == entry.control,
           top.session == entry.session, previousChange == top.version,
           entry.startedAt.nanoseconds &- top.lastAt.nanoseconds <= Self.gatherGapNanos,
           entry.startedAt.nanoseconds &- top.startedAt.nanoseconds <= Self.gatherSpanNanos {
            return undoHistory.extendTop(of: user, to: entry.after, args: entry.args, version: entry.version, at: entry.startedAt,
                                         bytes: top.before.stateBytes + entry.after.stateBytes)
        }
        return undoHistory.record(entry, by: user)
    }

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
        // As the change itself: the member must still be allowed it, and nobody else may hold the part exclusively.
        try permissions[id]?.check(entry.intent, control: id, memberRoles: member.roles)
        try checkClaims(id, intent: entry.intent, args: entry.args, by: session)
        let view = RoomView(controls: controls, clock: clock)
        if let refusal = current.undoRefusalAny(becoming: current, in: view) { throw refusal }  // (ended: before any merge)
        var reverted: (control: any Control, detail: JSONObject?)
        do throws(UndoConflict) {
            reverted = try current.revertingAny(entry.before, entry.after)
        } catch {
            throw conflict(error, undoing: entry, redo: redo, user: user)
        }
        if let refusal = current.undoRefusalAny(becoming: reverted.control, in: view) { throw refusal }
        reverted.control.adopt(clock: clock)
        let sizes = try checkSize(replacing: id, with: reverted.control, among: controls)
        var cause: JSONObject = ["kind": .string(word), "session": .string(session.rawValue), "control": .string(id.rawValue), "intent": .string(entry.intent)]
        if let requestID { cause["id"] = requestID.json }
        if let detail = reverted.detail { for (key, value) in detail where cause[key] == nil { cause[key] = value } }
        let before = controls[id]!
        var update = commit(cause: cause, touching: [id]) { room, _, _ in room.controls[id] = reverted.control }
        let replacement = UndoEntry(serial: 0, control: id, intent: entry.intent, args: entry.args, session: session, name: member.name,
                                    before: before, after: reverted.control, version: version, startedAt: now, lastAt: now,
                                    bytes: sizes.before + sizes.after)
        update.undoable = undoHistory.move(of: user, redo: redo, replacement: replacement)
        return update
    }

    /// The `conflict` for an undo refused by `why`, naming who changed that part since: another user's recorded change
    /// of it, else the latest change of the control in the room's history (a hold's ticks, a timer, the server).
    private func conflict(_ why: UndoConflict, undoing entry: UndoEntry, redo: Bool, user: String) -> IntentError {
        var by: JSONObject?
        for (_, other) in undoHistory.entries(except: user) where other.control == entry.control && other.version > entry.version {
            guard why.path.isEmpty || touches(other, why.path) else { continue }
            by = ["session": .string(other.session.rawValue), "name": other.name.map { .string($0) } ?? .null,
                  "user": members[other.session]?.user.map { .string($0) } ?? .null]
            break
        }
        if by == nil, let since = history.changes(after: entry.version, current: version) {
            for patch in since.reversed() where patch.cause["control"]?.stringValue == entry.control.rawValue {
                guard let s = patch.cause["session"]?.stringValue else { break }
                let member = members[SessionID(s)]
                by = ["session": .string(s), "name": member?.name.map { .string($0) } ?? .null, "user": member?.user.map { .string($0) } ?? .null]
                break
            }
        }
        let part = why.path.isEmpty ? "" : " (\(why.path.map { $0.hasPrefix("#") ? String($0.dropFirst()) : $0 }.joined(separator: "/")))"
        let who = by.map { b in (b["name"]?.stringValue).map { "by \($0)" } ?? "by session \(b["session"]?.stringValue ?? "?")" } ?? "by someone else"
        var error = IntentError(.conflict, "cannot \(redo ? "redo" : "undo") your \(entry.intent) on \(entry.control): what it changed\(part) was \(why.message) \(who)")
        error.by = by
        return error
    }

    /// Whether `entry` changed the part at `path` of its control's stored state.
    private func touches(_ entry: UndoEntry, _ path: [String]) -> Bool {
        guard let before = ControlCoding.storedState(of: entry.before), let after = ControlCoding.storedState(of: entry.after) else { return true }
        return StateMerge.changedPaths(before: before, after: after).contains { StateMerge.overlap($0, path) }
    }
}

extension UndoableControl {
    /// Edits that come many to a gesture (a drag, typing) are gathered into one change.
    static var gathersEdits: Bool { takesDrags || self == SharedText.self }

    func recordsUndo(fromAny before: any Control) -> Bool {
        guard let before = before as? Self else { return false }
        return recordsUndo(from: before)
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
