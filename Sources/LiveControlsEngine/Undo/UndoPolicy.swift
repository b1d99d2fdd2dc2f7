import LiveControlsProtocol

/// How a template's rooms keep their members' changes for `undo` and `redo` (`"undo": false | {depth, maxBytes}`):
/// each user (a token's `sub`, else the session) has a stack of its last `depth` changes; all the room's stacks together
/// keep at most about `maxBytes` (the oldest change in the room goes first). Kept in the memory of the room's owner only
/// (docs/PROTOCOL.md, *Undo and redo*).
public struct UndoPolicy: Sendable, Equatable {
    /// False: the template turned undo off (`"undo": false`); nothing is recorded.
    public var enabled = true
    /// Changes each user can undo (and then redo).
    public var depth = 50
    /// What the room's stacks may keep, counted as the controls' `stateBytes` before and after each change.
    public var maxBytes = 4 * 1024 * 1024

    public init() {}

    public static let off: UndoPolicy = { var policy = UndoPolicy(); policy.enabled = false; return policy }()

    static func parse(_ node: ConfigNode?) throws(ConfigError) -> UndoPolicy {
        guard let node else { return UndoPolicy() }
        if let flag = node.value.boolValue { return flag ? UndoPolicy() : .off }
        _ = try node.object(allowed: ["depth", "maxBytes"])
        var policy = UndoPolicy()
        policy.depth = try node.bounded("depth", try node.int("depth", default: policy.depth), 1...1_000)
        policy.maxBytes = try node.bounded("maxBytes", try node.int("maxBytes", default: policy.maxBytes), 1_024...(1 << 30))
        return policy
    }
}

/// A control kind whose members' changes can be undone: which intents record a change, and which keys of its stored
/// state an undo puts back (the others — a hold, a text's revision count, the next item number — stay as they are).
public protocol UndoableControl: StorableControl {
    /// The intents whose changes are recorded (holds, finishing and what the clock drives are not).
    static var undoableIntents: Set<String> { get }
    /// The keys of `storedState` an undo reverts.
    static var undoableKeys: [String] { get }
    /// Whether what a hold does is one change (intent `press`): from the press through its ticks to the hold's end (a
    /// toggle's confirming hold: the switch it makes). False by default.
    static var undoableHolds: Bool { get }
    /// Whether a change this control went through from `before` should be recorded at all (a wizard's `next` into its
    /// end is not: its webhook has gone). True by default.
    func recordsUndo(from before: Self) -> Bool
    /// This control (as it is now) with what the change `before` → `after` did taken back; throws `UndoConflict` when
    /// something else changed the same part since. Returns the fields the change adds to its patch's cause (a text's
    /// splices). The default reverts the undoable keys of the stored state (`StateMerge`).
    func reverting(_ before: Self, _ after: Self) throws(UndoConflict) -> (control: Self, detail: JSONObject?)
    /// Why this control (as it is now) takes no undo that would make it `result`: a guard holds it back, a bound. Nil by
    /// default.
    func undoRefusal(becoming result: Self, in room: RoomView) -> IntentError?
    /// Why nothing in this control can be undone any more (a completed form, an ended wizard, a closed poll): its
    /// recorded changes are dropped when it ends. Nil by default.
    var endedForUndo: IntentError? { get }
    /// Whether a control of the kind can end (`endedForUndo`): only those are looked at after their changes.
    static var endsForUndo: Bool { get }
    /// The intent an undo of a change made by `intent` amounts to (`append` → `remove`, `next` → `prev`): the member
    /// must be allowed both (`permissions`). Nil: the same intent.
    static func inverse(of intent: String) -> String?
    /// What keeping this change costs, in the room's `undo.maxBytes`: the control's `stateBytes` after it by default (what
    /// it shares with the state before is counted once per change).
    func undoBytes(from before: Self) -> Int
}

/// Why a change cannot be undone: the part of the control (a path in its stored state, or a text's range) that
/// something else changed since.
public struct UndoConflict: Error, Sendable, Equatable {
    /// Where, as stored-state keys (`StateMerge`); empty: the control as a whole (a text).
    public var path: [String]
    public var message: String
    /// A text: the revision of the edit that touched the span (who made it is named from it).
    public var revision: Int?
    public init(path: [String], _ message: String, revision: Int? = nil) {
        self.path = path
        self.message = message
        self.revision = revision
    }
}

extension UndoableControl {
    public func recordsUndo(from before: Self) -> Bool { true }
    public static var undoableHolds: Bool { false }
    public func undoRefusal(becoming result: Self, in room: RoomView) -> IntentError? { nil }
    public var endedForUndo: IntentError? { nil }
    public static var endsForUndo: Bool { false }
    public static func inverse(of intent: String) -> String? { nil }
    public func undoBytes(from before: Self) -> Int { stateBytes }

    public func reverting(_ before: Self, _ after: Self) throws(UndoConflict) -> (control: Self, detail: JSONObject?) {
        guard case var .object(current) = storedState, case let .object(b) = before.storedState, case let .object(a) = after.storedState else {
            throw UndoConflict(path: [], "the control's state is not an object")
        }
        func undoable(_ o: JSONObject) -> JSONValue {
            var picked = JSONObject()
            for key in Self.undoableKeys { picked.setIfPresent(key, o[key]) }
            return .object(picked)
        }
        let merged = try StateMerge.revert(before: undoable(b), after: undoable(a), current: undoable(current))
        for key in Self.undoableKeys { current[key] = merged[key] }
        do {
            return (try Self(storedState: .object(current)), nil)
        } catch {
            // The parts put back no longer fit what changed around them (an option voted for, an index past a list).
            throw UndoConflict(path: [], "it no longer fits the control as it is (\(error.message))")
        }
    }
}

extension Room {
    /// The controls of `template` that can end (`UndoableControl.endsForUndo`), in a template that keeps undo.
    static func undoEnding(of template: RoomTemplate) -> Set<ControlID> {
        guard template.undo.enabled else { return [] }
        return Set(template.controls.compactMap { id, control in
            (control as? any UndoableControl).map { type(of: $0).endsForUndo ? id : nil } ?? nil
        })
    }

    /// The intents of each control whose changes are recorded, for a room whose template keeps undo (empty otherwise);
    /// `press` stands for a hold when the kind records holds (`undoableHolds`).
    static func undoableIntents(of template: RoomTemplate) -> [ControlID: Set<String>] {
        guard template.undo.enabled else { return [:] }
        var result: [ControlID: Set<String>] = [:]
        for (id, control) in template.controls {
            guard let undoable = control as? any UndoableControl else { continue }
            var intents = type(of: undoable).undoableIntents
            if type(of: undoable).undoableHolds { intents.insert("press") }
            // The backend decides about this control: an undo would change it behind its back (an undone append is a
            // removal it was never asked about). Nothing of it is recorded.
            if let hook = template.intentHook, type(of: control).intents.contains(where: { hook.covers(id, $0) }) { continue }
            result[id] = intents
        }
        return result
    }
}
