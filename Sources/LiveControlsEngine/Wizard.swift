import LiveControlsProtocol

/// Ordered steps (the StepView/StepController seed), moved through together by everyone in the room.
///
/// `phase` follows the seed's `StepViewState`: `start` until the first move, `inProgress` after it,
/// `complete` when `next` is asked on the last step (or, with `cycle`, back to the first step instead),
/// `exit` when `prev` is asked on the first step. `complete` and `exit` are final: `next`/`prev` are then
/// refused with `finished` until `reset`; `append` still works. A step may be guarded by a `form`
/// control (or one of its elements): `next` from it is refused with `guard_failed` until that is valid.
public struct Wizard: Control {
    public static let kind = "wizard"
    public static let intents = ["next", "prev", "append", "reset"]
    /// Most steps a wizard may hold; `append` beyond it is `out_of_range`.
    public static let maxSteps = 200

    public enum Phase: String, Sendable, CaseIterable {
        case start, inProgress, complete, exit
        public var isFinal: Bool { self == .complete || self == .exit }
    }

    public struct Step: Sendable, Equatable {
        public var id: String
        public var title: String
        /// A form control that must be valid before `next` leaves this step.
        public var form: String?
        /// With `form`: only this element of it must be valid (otherwise the whole form must be completed).
        public var element: String?

        public init(id: String, title: String? = nil, form: String? = nil, element: String? = nil) {
            self.id = id
            self.title = title ?? id
            self.form = form
            self.element = element
        }

        var json: JSONValue {
            [
                "id": .string(id), "title": .string(title),
                "guard": form.map { ["form": .string($0), "element": element.map { .string($0) } ?? .null] } ?? .null,
            ]
        }
    }

    public var label: String
    public private(set) var steps: [Step]
    public private(set) var index: Int
    public private(set) var phase: Phase = .start
    public var cycle: Bool
    public let initialSteps: [Step]
    public let initialIndex: Int

    public init(label: String, steps: [Step], index: Int = 0, cycle: Bool = false) {
        precondition(steps.indices.contains(index))
        self.label = label
        self.steps = steps
        self.index = index
        self.cycle = cycle
        self.initialSteps = steps
        self.initialIndex = index
    }

    /// A wizard exactly as stored (`Wizard+Storage.swift`); the caller has checked both indices.
    init(label: String, steps: [Step], index: Int, phase: Phase, cycle: Bool, initialSteps: [Step], initialIndex: Int) {
        self.label = label
        self.steps = steps
        self.index = index
        self.phase = phase
        self.cycle = cycle
        self.initialSteps = initialSteps
        self.initialIndex = initialIndex
    }

    public func render() -> JSONValue {
        [
            "kind": .string(Self.kind), "label": .string(label),
            "phase": .string(phase.rawValue),
            "index": .int(index), "step": .string(steps[index].id), "title": .string(steps[index].title),
            "count": .int(steps.count), "cycle": .bool(cycle),
            "steps": .array(steps.map(\.json)),
        ]
    }

    public mutating func apply(_ intent: String, args: IntentArgs, by session: SessionID, at now: Instant, room: RoomView) throws(IntentError) -> ControlEvents {
        switch intent {
        case "next":
            try notFinal(intent)
            try checkGuard(of: steps[index], in: room)
            if index + 1 < steps.count {
                index += 1
                phase = .inProgress
            } else if cycle {
                index = 0
                phase = .inProgress
            } else {
                phase = .complete
            }
        case "prev":
            try notFinal(intent)
            if index > 0 {
                index -= 1
                phase = .inProgress
            } else {
                phase = .exit
            }
        case "append":
            let step = try Self.step(from: args)
            guard !steps.contains(where: { $0.id == step.id }) else { throw IntentError(.invalidArgs, "args.step.id: the wizard already has a step \"\(step.id)\"") }
            guard steps.count < Self.maxSteps else { throw IntentError(.outOfRange, "the wizard is full (\(Self.maxSteps) steps)") }
            steps.append(step)
        case "reset":
            steps = initialSteps
            index = initialIndex
            phase = .start
        default:
            throw Self.unknownIntent(intent, known: Self.intents)
        }
        return .none
    }

    public static var readsOtherControls: Bool { true }

    /// A step's guard names a form: the wizard's `canNext` follows it.
    public func reads(_ id: ControlID) -> Bool { steps.contains { $0.form == id.rawValue } }

    /// `render()` with what `next` and `prev` would do now: `canNext`, `canPrev`, and `blocked` (why `next` would be
    /// refused, as the error it would get, with the guarding form and element; null when it would not).
    public func render(in room: RoomView) -> JSONValue {
        guard case var .object(state) = render() else { return render() }
        var blocked: JSONValue = .null
        do throws(IntentError) {
            try notFinal("next")
            try checkGuard(of: steps[index], in: room)
        } catch {
            var why: JSONObject = ["code": .string(error.code.rawValue), "message": .string(error.message)]
            if error.code == .guardFailed, let form = steps[index].form {
                why["form"] = .string(form)
                why["element"] = steps[index].element.map { .string($0) } ?? .null
            }
            blocked = .object(why)
        }
        state["canNext"] = .bool(blocked == .null)
        state["canPrev"] = .bool(!phase.isFinal)
        state["blocked"] = blocked
        return .object(state)
    }

    private func notFinal(_ intent: String) throws(IntentError) {
        guard phase.isFinal else { return }
        throw IntentError(.finished, "the wizard is in phase \(phase.rawValue); \(intent) needs a reset first")
    }

    /// Refuses with `guard_failed` unless the step's form (or form element) is valid.
    public func checkGuard(of step: Step, in room: RoomView) throws(IntentError) {
        guard let formID = step.form else { return }
        guard let control = room.control(ControlID(formID)) else {
            throw IntentError(.guardFailed, "step \(step.id) is guarded by form \"\(formID)\", which this room does not have")
        }
        guard let form = control as? Form else {
            throw IntentError(.guardFailed, "step \(step.id) is guarded by \"\(formID)\", which is not a form")
        }
        if let elementID = step.element {
            guard let element = form.element(elementID) else {
                throw IntentError(.guardFailed, "step \(step.id) is guarded by element \"\(elementID)\", which form \(formID) does not have")
            }
            guard element.valid else {
                throw IntentError(.guardFailed, "step \(step.id) needs \(formID).\(elementID) to be valid first")
            }
        } else {
            guard form.completed else { throw IntentError(.guardFailed, "step \(step.id) needs form \(formID) to be completed first") }
        }
    }

    /// `args.step` of `append`: `{id, title?, form?, element?}`.
    static func step(from args: IntentArgs) throws(IntentError) -> Step {
        let raw = try args.value("step")
        guard let o = raw.objectValue else { throw IntentError(.invalidArgs, "args.step must be an object, got \(raw.typeName)") }
        let fields = IntentArgs(o)
        for key in o.keys where !["id", "title", "form", "element"].contains(key) {
            throw IntentError(.invalidArgs, "args.step.\(key) is not a step field (id, title, form, element)")
        }
        let id: String
        do { id = try fields.string("id") } catch { throw IntentError(.invalidArgs, "args.step.id must be a string") }
        guard ClientMessage.isValidName(id) else { throw IntentError(.invalidArgs, "args.step.id must be 1–64 characters of A–Z a–z 0–9 _ - . :") }
        let title: String?, form: String?, element: String?
        do {
            title = try fields.optionalString("title")
            form = try fields.optionalString("form")
            element = try fields.optionalString("element")
        } catch {
            throw IntentError(.invalidArgs, "args.step: title, form and element must be strings")
        }
        guard element == nil || form != nil else { throw IntentError(.invalidArgs, "args.step.element needs args.step.form") }
        return Step(id: id, title: title, form: form, element: element)
    }
}
