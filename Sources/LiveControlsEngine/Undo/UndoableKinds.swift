import LiveControlsProtocol

// Which changes of each kind can be undone, and what an undo puts back (docs/PROTOCOL.md, *Undo and redo*, lists them).
// A hold (`press`, its ticks, to its end) is one change where the kind says so. Not undoable: a timer (the clock moved
// on), a poll's close, reveal and reset, a form's or wizard's `reset` — and whatever the server API or a timer's `then`
// changed.

/// `next` and `prev` undo each other.
private func stepInverse(_ intent: String) -> String? {
    switch intent {
    case "next": "prev"
    case "prev": "next"
    default: nil
    }
}

extension Stepper: UndoableControl {
    public static let undoableIntents: Set<String> = ["next", "prev", "set"]
    public static let undoableKeys = ["value"]
    public static var undoableHolds: Bool { true }
    public static func inverse(of intent: String) -> String? { stepInverse(intent) }
}

extension ListStepper: UndoableControl {
    public static let undoableIntents: Set<String> = ["next", "prev", "select", "append", "insert", "move", "edit", "remove"]
    /// Items are matched by id (`StateMerge`); `nextItemNumber` is not put back, so an id is never given twice.
    public static let undoableKeys = ["sections", "selected"]
    public static var undoableHolds: Bool { true }

    public static func inverse(of intent: String) -> String? {
        switch intent {
        case "append", "insert": "remove"
        case "remove": "insert"
        default: stepInverse(intent)
        }
    }

    /// A selection or a step shares the items with the list before it: a little, not the whole list again.
    public func undoBytes(from before: ListStepper) -> Int {
        let shared = sections.withUnsafeBufferPointer { a in before.sections.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress } }
        return shared ? 256 : stateBytes
    }

    /// An undone removal puts an item back: not past `maxItems`.
    public func undoRefusal(becoming result: ListStepper, in room: RoomView) -> IntentError? {
        result.count > maxItems && result.count > count ? IntentError(.outOfRange, "the list is full (\(maxItems) items)") : nil
    }
}

extension Pager: UndoableControl {
    public static let undoableIntents: Set<String> = ["next", "prev", "goto"]
    public static let undoableKeys = ["position"]
    public static var undoableHolds: Bool { true }
    public static func inverse(of intent: String) -> String? { stepInverse(intent) }
}

extension Toggle: UndoableControl {
    public static let undoableIntents: Set<String> = ["set", "flip"]
    public static let undoableKeys = ["on"]
    /// A toggle with `confirmHoldMs` switches only by a hold that long (an "on air" switch must not flip by accident):
    /// an undo would switch it at once, so none of its changes is recorded.
    public func recordsUndo(from before: Toggle) -> Bool { confirmHoldMs == nil }
}

extension Fader: UndoableControl {
    /// A drag (its `set`s until `release`, or a pause) is one change.
    public static let undoableIntents: Set<String> = ["set", "nudge"]
    public static let undoableKeys = ["value"]
    /// A set the room holds back for its next patch is recorded too (it moved the value); one that moved nothing is not.
    public func recordsUndo(from before: Fader) -> Bool { value != before.value }
}

extension Wizard: UndoableControl {
    public static let undoableIntents: Set<String> = ["next", "prev", "append"]
    public static let undoableKeys = ["steps", "index", "phase"]
    /// A `next` or `prev` that ends the wizard is not recorded: its webhook (`wizard.completed`, `wizard.exited`) has gone.
    public func recordsUndo(from before: Wizard) -> Bool { !phase.isFinal }

    public static func inverse(of intent: String) -> String? { stepInverse(intent) }
    public var endedForUndo: IntentError? { phase.isFinal ? IntentError(.finished, "\(label) has ended; only reset applies") : nil }
    public static var endsForUndo: Bool { true }

    public func undoRefusal(becoming result: Wizard, in room: RoomView) -> IntentError? {
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

    public static func inverse(of intent: String) -> String? {
        switch intent {
        case "finish": "expand"
        case "expand": "finish"
        default: nil
        }
    }

    /// An undo keeps the form's rules: fields change only in the expanded element (as `set`), and it moves forward only
    /// past elements that are valid (as `finish`).
    public func undoRefusal(becoming result: Form, in room: RoomView) -> IntentError? {
        guard let current, let next = result.current else { return nil }  // (completing is never an undo: not recorded)
        for i in elements.indices where i != current && i < result.elements.count && result.elements[i].fields != elements[i].fields {
            return IntentError(.conflict, "element \(elements[i].id) is collapsed (\(elements[current].id) is expanded); expand it first")
        }
        if next > current, let invalid = result.elements[current..<next].first(where: { !$0.valid }) {
            return IntentError(.notValid, "element \(invalid.id) is not valid: the form cannot move past it")
        }
        return nil
    }

    public var endedForUndo: IntentError? {
        completed ? IntentError(.finished, "the form is completed; nothing in it changes before a reset") : nil
    }
    public static var endsForUndo: Bool { true }
}

extension Poll: UndoableControl {
    /// A vote, taking it back, and an option added (while the poll is open).
    public static let undoableIntents: Set<String> = ["vote", "unvote", "add"]
    public static let undoableKeys = ["ballots", "added"]

    public static func inverse(of intent: String) -> String? {
        switch intent {
        case "vote": "unvote"
        case "unvote": "vote"
        default: nil
        }
    }

    /// A closed poll's votes stay as they were counted (its `poll.closed` webhook has gone).
    public var endedForUndo: IntentError? {
        phase == .open ? nil : IntentError(.closed, "\(label) is \(phase.rawValue): its votes no longer change")
    }
    public static var endsForUndo: Bool { true }

    /// A redone `add` puts an option back: not past `maxOptions`.
    public func undoRefusal(becoming result: Poll, in room: RoomView) -> IntentError? {
        result.options.count > maxOptions && result.options.count > options.count
            ? IntentError(.outOfRange, "\(label) has its \(maxOptions) options") : nil
    }
}
