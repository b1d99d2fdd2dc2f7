import LiveControlsProtocol

extension Wizard: StorableControl {
    public static let stateKeys: Set<String> = ["steps", "index", "phase"]

    /// `{label, steps, index, phase, cycle, initialSteps, initialIndex}`; each step `{id, title, form?, element?}`.
    public var storedState: JSONValue {
        [
            "label": .string(label), "steps": Self.stored(steps), "index": .int(index), "phase": .string(phase.rawValue),
            "cycle": .bool(cycle), "initialSteps": Self.stored(initialSteps), "initialIndex": .int(initialIndex),
        ]
    }

    public init(storedState: JSONValue) throws(StoredStateError) {
        let s = StoredValue(storedState)
        let steps = try Self.steps(s, "steps"), index = try s.int("index")
        let initialSteps = try Self.steps(s, "initialSteps"), initialIndex = try s.int("initialIndex")
        guard steps.indices.contains(index) else { throw s.error("index \(index) is outside the \(steps.count) steps") }
        guard initialSteps.indices.contains(initialIndex) else {
            throw s.error("initialIndex \(initialIndex) is outside the \(initialSteps.count) initial steps")
        }
        self.init(label: try s.string("label"), steps: steps, index: index, phase: try s.required("phase").raw(Phase.self),
                  cycle: try s.bool("cycle"), initialSteps: initialSteps, initialIndex: initialIndex)
    }

    private static func stored(_ steps: [Step]) -> JSONValue {
        .array(steps.map { step in
            var o: JSONObject = ["id": .string(step.id), "title": .string(step.title)]
            o.setIfPresent("form", step.form.map { .string($0) })
            o.setIfPresent("element", step.element.map { .string($0) })
            return .object(o)
        })
    }

    private static func steps(_ s: StoredValue, _ key: String) throws(StoredStateError) -> [Step] {
        var steps: [Step] = []
        for step in try s.array(key) {
            steps.append(Step(id: try step.string("id"), title: try step.string("title"),
                              form: try step.optionalString("form"), element: try step.optionalString("element")))
        }
        return steps
    }
}
