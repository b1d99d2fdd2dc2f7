import LiveControlsProtocol

/// One versioned change of a room: what every subscriber receives as a `patch`.
public struct Patch: Sendable, Equatable {
    /// The room version this change produces (previous version + 1).
    public var version: Int
    /// Operations turning the document at `version - 1` into the document at `version`.
    public var ops: [PatchOp]
    /// Why it happened (`cause` of the patch).
    public var cause: JSONValue
    /// Who receives each op (parallel to `ops`), when not everyone receives all of them: a change to a part of the
    /// state some members do not see (`Views.swift`). Nil: every member receives every op.
    public var access: [OpAccess]?

    public init(version: Int, ops: [PatchOp], cause: JSONValue, access: [OpAccess]? = nil) {
        precondition(access.map { $0.count == ops.count } ?? true)
        self.version = version
        self.ops = ops
        self.cause = cause
        self.access = access
    }
}

/// What a mutation of a room produced: a patch when anything visible changed, and timer effects.
public struct RoomUpdate: Sendable, Equatable {
    public var patch: Patch?
    /// Timers to (re)arm or cancel, as data for the room's owner to carry out.
    public var timers: [TimerEffect]
    /// Users whose undo or redo stacks changed size (`Room+Undo.swift`): their sessions are told (`undoable`).
    public var undoable: [UndoCounts] = []

    public init(patch: Patch?, timers: [TimerEffect], undoable: [UndoCounts] = []) {
        self.patch = patch
        self.timers = timers
        self.undoable = undoable
    }

    public static let none = RoomUpdate(patch: nil, timers: [])
}

/// Arm or cancel the wake-up timer of one control.
public struct TimerEffect: Sendable, Equatable {
    public var control: ControlID
    /// `nil` cancels the control's timer.
    public var deadline: Instant?

    public init(control: ControlID, deadline: Instant?) {
        self.control = control
        self.deadline = deadline
    }
}

/// The last `limit` changes of a room, for resuming clients.
public struct ChangeHistory: Sendable {
    public let limit: Int
    private var buffer: [Patch] = []
    private var start = 0

    public init(limit: Int) { self.limit = limit }

    public mutating func append(_ change: Patch) {
        guard limit > 0 else { return }
        if buffer.count < limit {
            buffer.append(change)
        } else {
            buffer[start] = change
            start = (start + 1) % limit
        }
    }

    /// Every change after `version`, in order, when all of them are still held; `nil` otherwise — always `nil`
    /// with a limit of 0, which disables resuming (even from the current version).
    public func changes(after version: Int, current: Int) -> [Patch]? {
        guard limit > 0 else { return nil }
        if version == current { return [] }
        guard version < current, !buffer.isEmpty else { return nil }
        let oldest = buffer[start].version
        guard version + 1 >= oldest else { return nil }
        let skip = version + 1 - oldest
        return (skip..<buffer.count).map { buffer[(start + $0) % buffer.count] }
    }
}
