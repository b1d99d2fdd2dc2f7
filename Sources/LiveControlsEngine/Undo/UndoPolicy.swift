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
    /// Whether a change this control went through from `before` should be recorded at all (a wizard's `next` into its
    /// end is not: its webhook has gone). True by default.
    func recordsUndo(from before: Self) -> Bool
    /// This control (as it is now) with what the change `before` → `after` did taken back; throws `UndoConflict` when
    /// something else changed the same part since. Returns the fields the change adds to its patch's cause (a text's
    /// splices). The default reverts the undoable keys of the stored state (`StateMerge`).
    func reverting(_ before: Self, _ after: Self) throws(UndoConflict) -> (control: Self, detail: JSONObject?)
    /// Why this control (as it is now) takes no undo that would make it `result`: it has ended, or a guard holds it back.
    /// Nil by default.
    func undoRefusal(becoming result: Self, in room: RoomView) -> IntentError?
}

/// Why a change cannot be undone: the part of the control (a path in its stored state, or a text's range) that
/// something else changed since.
public struct UndoConflict: Error, Sendable, Equatable {
    /// Where, as stored-state keys (`StateMerge`); empty: the control as a whole (a text).
    public var path: [String]
    public var message: String
    public init(path: [String], _ message: String) {
        self.path = path
        self.message = message
    }
}

extension UndoableControl {
    public func recordsUndo(from before: Self) -> Bool { true }
    public func undoRefusal(becoming result: Self, in room: RoomView) -> IntentError? { nil }

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
    /// The intents of each control whose changes are recorded, for a room whose template keeps undo (empty otherwise).
    static func undoableIntents(of template: RoomTemplate) -> [ControlID: Set<String>] {
        guard template.undo.enabled else { return [:] }
        var result: [ControlID: Set<String>] = [:]
        for (id, control) in template.controls {
            guard let undoable = control as? any UndoableControl else { continue }
            var intents = type(of: undoable).undoableIntents
            // The backend decided those: an undo would change the control behind its back.
            if let hook = template.intentHook { intents = intents.filter { !hook.covers(id, $0) } }
            if !intents.isEmpty { result[id] = intents }
        }
        return result
    }
}
