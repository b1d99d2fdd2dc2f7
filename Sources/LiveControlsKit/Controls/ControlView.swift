/// A typed view of one control kind over a ``LiveControl``: fields in the seeds' vocabulary, intents as methods.
/// Reading a field reads the control's current state (and, in SwiftUI, observes that control only).
@MainActor
public protocol ControlView {
    /// The `kind` this view reads.
    static var kind: String { get }
    var control: LiveControl { get }
    init(unchecked control: LiveControl)
}

extension ControlView {
    /// The view of `control`, or nil when the control is of another kind.
    public init?(_ control: LiveControl) {
        guard control.kind == Self.kind else { return nil }
        self.init(unchecked: control)
    }

    public var id: String { control.id }
    public var label: String { control.label }
    var json: JSONValue { control.json }
}

/// The kinds that step through values and share hold-to-repeat: stepper, list and pager.
@MainActor
public protocol SequentialControl: ControlView {}

extension SequentialControl {
    /// Whether `next` is possible now (disable the button when false).
    public var canNext: Bool { json["canNext"]?.boolValue ?? false }
    /// Whether `prev` is possible now.
    public var canPrev: Bool { json["canPrev"]?.boolValue ?? false }
    /// The running hold, by anyone; nil when none.
    public var holding: HoldInfo? {
        guard let session = json["holding"]?["session"]?.stringValue,
              let direction = json["holding"]?["direction"]?.stringValue.flatMap(Direction.init(rawValue:)) else { return nil }
        return HoldInfo(session: session, direction: direction)
    }

    /// `count` steps forward (default 1) in one change, as `count` single steps would go: a control that does not
    /// wrap stops at its end, and throws `at_bound` only when already there.
    @discardableResult public func next(count: Int = 1) async throws -> Int {
        try await control.send("next", count == 1 ? [:] : ["count": .int(count)])
    }
    /// `count` steps back (default 1).
    @discardableResult public func prev(count: Int = 1) async throws -> Int {
        try await control.send("prev", count == 1 ? [:] : ["count": .int(count)])
    }

    /// Starts hold-to-repeat: one step at once, then the server repeats until the returned ``Hold`` ends.
    public func press(_ direction: Direction) async throws -> Hold {
        guard let room = control.room, let client = room.client else { throw LiveControlsError.notConnected }
        return try await client.press(in: room, control: control.id, direction: direction)
    }

    /// Holds while `body` runs: the hold ends when it returns or throws (make `body` end on cancellation, as
    /// `Task.sleep` does, so a cancelled task releases).
    /// ```swift
    /// try await stepper.hold(.next) { try await fingerLifted() }
    /// ```
    public func hold<T>(_ direction: Direction, while body: () async throws -> T) async throws -> T {
        let hold = try await press(direction)
        do {
            let result = try await body()
            await hold.release()
            return result
        } catch {
            await hold.release()
            throw error
        }
    }
}

extension Room {
    /// The control `id` as a typed view, or nil when the room has no such control of that kind.
    public func control<View: ControlView>(_ id: String, as view: View.Type) -> View? {
        models[id].flatMap { View($0) }
    }

    public func stepper(_ id: String) -> StepperControl? { control(id, as: StepperControl.self) }
    public func list(_ id: String) -> ListControl? { control(id, as: ListControl.self) }
    public func wizard(_ id: String) -> WizardControl? { control(id, as: WizardControl.self) }
    public func form(_ id: String) -> FormControl? { control(id, as: FormControl.self) }
    public func pager(_ id: String) -> PagerControl? { control(id, as: PagerControl.self) }
}
