import LiveControlsProtocol

// Which changes of each kind can be undone, and what an undo puts back (docs/PROTOCOL.md, *Undo and redo*, lists them).
// Not undoable: holds (`press`, `release` and their ticks), a timer (the clock moved on), a poll's close, reveal and
// reset, a form's or wizard's `reset` — and whatever the server API or a timer's `then` changed.

extension Stepper: UndoableControl {
    public static let undoableIntents: Set<String> = ["next", "prev", "set"]
    public static let undoableKeys = ["value"]
}

extension ListStepper: UndoableControl {
    public static let undoableIntents: Set<String> = ["next", "prev", "select", "append", "insert", "move", "edit", "remove"]
    /// Items are matched by id (`StateMerge`); `nextItemNumber` is not put back, so an id is never given twice.
    public static let undoableKeys = ["sections", "selected"]
}

extension Pager: UndoableControl {
    public static let undoableIntents: Set<String> = ["next", "prev", "goto"]
    public static let undoableKeys = ["position"]
}

extension Toggle: UndoableControl {
    public static let undoableIntents: Set<String> = ["set", "flip"]
    public static let undoableKeys = ["on"]
}

extension Fader: UndoableControl {
    /// A drag (its `set`s until `release`, or a pause) is one change.
    public static let undoableIntents: Set<String> = ["set", "nudge"]
    public static let undoableKeys = ["value"]
}

extension Wizard: UndoableControl {
    public static let undoableIntents: Set<String> = ["next", "prev", "append"]
    public static let undoableKeys = ["steps", "index", "phase"]
    /// A `next` or `prev` that ends the wizard is not recorded: its webhook (`wizard.completed`, `wizard.exited`) has gone.
    public func recordsUndo(from before: Wizard) -> Bool { !phase.isFinal }

    public func undoRefusal(becoming result: Wizard, in room: RoomView) -> IntentError? {
        if phase.isFinal { return IntentError(.finished, "\(label) has ended; only reset applies") }
        // Forward again (the undo of a prev): only past a step whose guard lets it.
        guard result.index > index else { return nil }
        do { try checkGuard(of: steps[index], in: room) } catch { return error }
        return nil
    }
}

extension Form: UndoableControl {
    public static let undoableIntents: Set<String> = ["set", "expand", "finish"]
    public static let undoableKeys = ["elements", "current"]
    /// The `finish` that completes the form is not recorded: `form.completed` has gone.
    public func recordsUndo(from before: Form) -> Bool { !completed }

    public func undoRefusal(becoming result: Form, in room: RoomView) -> IntentError? {
        completed ? IntentError(.finished, "the form is completed; nothing in it changes before a reset") : nil
    }
}

extension Poll: UndoableControl {
    /// A vote, taking it back, and an option added (while the poll is open).
    public static let undoableIntents: Set<String> = ["vote", "unvote", "add"]
    public static let undoableKeys = ["ballots", "added"]

    public func undoRefusal(becoming result: Poll, in room: RoomView) -> IntentError? {
        phase == .open ? nil : IntentError(.closed, "\(label) is \(phase.rawValue): its votes no longer change")
    }
}
