import LiveControlsProtocol

/// One recorded change: the control as it was before and after it (values: a copy shares the control's storage until
/// either changes), who made it with which intent, and the room version it made.
struct UndoEntry: Sendable {
    var serial: Int
    let control: ControlID
    let intent: String
    var args: JSONObject
    /// The session that made it (the stack is its user's).
    let session: SessionID
    /// Its name as it joined, to say who made a change another undo conflicts with (it may have left since).
    let name: String?
    let before: any Control
    var after: any Control
    /// The version of the change (of its last part, for a drag or a run of typing gathered into one).
    var version: Int
    let startedAt: Instant
    var lastAt: Instant
    /// What it keeps, for the room's budget (`UndoableControl.undoBytes`).
    var bytes: Int
    /// Whether the next edit of a drag or run of typing may be gathered into it (not into an undo or redo).
    var gathers = true
}

/// How many changes a user can undo and redo in a room (the `undoable` message).
public struct UndoCounts: Sendable, Equatable {
    /// The stack's owner: `u:` and a token's `sub`, or `s:` and the session for a session without one.
    public var user: String
    public var undo: Int
    public var redo: Int
    public init(user: String, undo: Int, redo: Int) {
        self.user = user
        self.undo = undo
        self.redo = redo
    }
}

/// Every user's undo and redo stacks in one room, within the template's `depth` per user and `maxBytes` for the room
/// (the room's oldest change goes first: `order` lists changes as they were recorded, some of them since gone, and is
/// cut back when it holds many more than are kept).
struct UndoHistory: Sendable {
    struct Stacks: Sendable {
        var undo: [UndoEntry] = []
        var redo: [UndoEntry] = []
    }

    let policy: UndoPolicy
    private(set) var stacks: [String: Stacks] = [:]
    private var order: [(user: String, serial: Int)] = []
    private var orderHead = 0
    private(set) var bytes = 0
    private var nextSerial = 0
    private var kept = 0
    /// The version of each control's last change (any change, by anyone): whether a user's change can be gathered into
    /// the one before it (nothing came between).
    var lastChange: [ControlID: Int] = [:]

    init(policy: UndoPolicy) { self.policy = policy }

    func counts(of user: String) -> UndoCounts {
        let s = stacks[user]
        return UndoCounts(user: user, undo: s?.undo.count ?? 0, redo: s?.redo.count ?? 0)
    }

    func top(of user: String, redo: Bool) -> UndoEntry? {
        redo ? stacks[user]?.redo.last : stacks[user]?.undo.last
    }

    /// Every entry but `user`'s, newest first.
    func entries(except user: String) -> [(user: String, entry: UndoEntry)] {
        var all: [(String, UndoEntry)] = []
        for (key, s) in stacks where key != user {
            for e in s.undo { all.append((key, e)) }
            for e in s.redo { all.append((key, e)) }
        }
        return all.sorted { $0.1.version > $1.1.version }
    }

    /// A new change by `user`: on its undo stack (its redo stack emptied). Returns whose counts changed.
    mutating func record(_ entry: UndoEntry, by user: String) -> [UndoCounts] {
        var entry = entry
        let before = counts(of: user)
        // Taken out of the dictionary while it changes: a copy left there would make every change copy the whole stack.
        var s = stacks.removeValue(forKey: user) ?? Stacks()
        for gone in s.redo { forget(gone) }
        s.redo.removeAll()
        guard entry.bytes <= policy.maxBytes else {  // it alone would not fit: not kept (and nothing to redo after it)
            if !s.undo.isEmpty { stacks[user] = s }
            let after = counts(of: user)
            return after == before ? [] : [after]
        }
        if s.undo.count >= policy.depth { forget(s.undo.removeFirst()) }
        entry.serial = take(entry, by: user)
        s.undo.append(entry)
        stacks[user] = s
        var changed = evictOverBudget()
        let after = counts(of: user)
        if after != before { changed.append(after) }
        return changed
    }

    /// Gathers a change into `user`'s last one (a drag, a run of typing): it now ends at `after`.
    mutating func extendTop(of user: String, to after: any Control, args: JSONObject, version: Int, at now: Instant, bytes: Int) -> [UndoCounts] {
        guard var s = stacks.removeValue(forKey: user) else { return [] }
        guard var top = s.undo.popLast() else {
            stacks[user] = s
            return []
        }
        let redone = s.redo.count
        for gone in s.redo { forget(gone) }  // a change: nothing to redo any more
        s.redo.removeAll()
        guard bytes <= policy.maxBytes else {  // grown past what the room keeps: the change goes
            forget(top)
            if !s.undo.isEmpty { stacks[user] = s }
            return [counts(of: user)]
        }
        self.bytes += bytes - top.bytes
        top.after = after
        top.args = args
        top.version = version
        top.lastAt = now
        top.bytes = bytes
        s.undo.append(top)
        stacks[user] = s
        var changed = evictOverBudget()
        if redone > 0 { changed.append(counts(of: user)) }
        return changed
    }

    /// Takes `user`'s top entry off one stack and puts the change that undid (redid) it on the other. Returns the new
    /// counts.
    mutating func move(of user: String, redo: Bool, replacement: UndoEntry) -> [UndoCounts] {
        guard var s = stacks.removeValue(forKey: user) else { return [] }
        if let gone = redo ? s.redo.popLast() : s.undo.popLast() { forget(gone) }
        var replacement = replacement
        replacement.gathers = false
        if replacement.bytes <= policy.maxBytes {
            replacement.serial = take(replacement, by: user)
            if redo { s.undo.append(replacement) } else { s.redo.append(replacement) }
        }
        if !s.undo.isEmpty || !s.redo.isEmpty { stacks[user] = s }
        var changed = evictOverBudget()
        changed.append(counts(of: user))
        return changed
    }

    /// Drops every change of control `id` (it has ended: none can be undone); returns whose counts changed.
    mutating func purge(control id: ControlID) -> [UndoCounts] {
        var changed: [UndoCounts] = []
        for (user, s) in stacks where s.undo.contains(where: { $0.control == id }) || s.redo.contains(where: { $0.control == id }) {
            var kept = s
            for entry in s.undo + s.redo where entry.control == id { forget(entry) }
            kept.undo.removeAll { $0.control == id }
            kept.redo.removeAll { $0.control == id }
            stacks[user] = kept.undo.isEmpty && kept.redo.isEmpty ? nil : kept
            changed.append(counts(of: user))
        }
        compactOrder()
        return changed
    }

    /// Drops every change of `user` (a session without a `sub` that left: nobody can undo them any more).
    mutating func drop(_ user: String) {
        guard let s = stacks.removeValue(forKey: user) else { return }
        for entry in s.undo + s.redo { forget(entry) }
        compactOrder()
    }

    private mutating func take(_ entry: UndoEntry, by user: String) -> Int {
        nextSerial += 1
        order.append((user, nextSerial))
        bytes += entry.bytes
        kept += 1
        return nextSerial
    }

    private mutating func forget(_ entry: UndoEntry) {
        bytes -= entry.bytes
        kept -= 1
    }

    /// Drops the room's oldest changes until its stacks fit `maxBytes`; returns the users whose counts changed.
    private mutating func evictOverBudget() -> [UndoCounts] {
        var changed: [String] = []
        while bytes > policy.maxBytes, orderHead < order.count {
            let (user, serial) = order[orderHead]
            orderHead += 1
            guard stacks[user]?.undo.first?.serial == serial || stacks[user]?.redo.first?.serial == serial else { continue }  // gone already
            var s = stacks.removeValue(forKey: user)!
            if s.undo.first?.serial == serial { forget(s.undo.removeFirst()) } else { forget(s.redo.removeFirst()) }
            stacks[user] = s.undo.isEmpty && s.redo.isEmpty ? nil : s
            if !changed.contains(user) { changed.append(user) }
        }
        compactOrder()
        return changed.map { counts(of: $0) }
    }

    /// `order` keeps a record per change ever taken until the budget reaches it: cut out those gone once they are most.
    private mutating func compactOrder() {
        guard order.count - orderHead > 2 * kept + 1_024 || (orderHead > 1_024 && orderHead * 2 > order.count) else { return }
        var live = Set<Int>()
        for s in stacks.values {
            for e in s.undo { live.insert(e.serial) }
            for e in s.redo { live.insert(e.serial) }
        }
        order = order[orderHead...].filter { live.contains($0.serial) }
        orderHead = 0
    }
}
