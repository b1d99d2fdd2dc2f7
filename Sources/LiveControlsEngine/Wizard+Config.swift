import LiveControlsProtocol

extension Wizard {
    /// Reads a wizard from its template entry: `steps` (`[{id, title?, form?, element?}]`),
    /// `index` (the initial step, default 0), `cycle` (default false).
    ///
    /// A guard's form is looked up when `next` is asked, so it may be any control of the room.
    public init(config node: ConfigNode, id: ControlID) throws(ConfigError) {
        _ = try node.object(allowed: ["kind", "label", "steps", "index", "cycle"])
        guard let stepsNode = node["steps"] else { throw node.error(at: "steps", "required array is missing") }
        let nodes = try stepsNode.array()
        guard !nodes.isEmpty else { throw stepsNode.error("at least one step is needed") }
        guard nodes.count <= Self.maxSteps else { throw stepsNode.error("at most \(Self.maxSteps) steps") }
        var steps: [Step] = []
        for stepNode in nodes {
            _ = try stepNode.object(allowed: ["id", "title", "form", "element"])
            let stepID = try stepNode.string("id")
            guard ClientMessage.isValidName(stepID) else { throw stepNode.error(at: "id", "step id must be 1–64 characters of A–Z a–z 0–9 _ - . :") }
            guard !steps.contains(where: { $0.id == stepID }) else { throw stepNode.error(at: "id", "duplicate step id \"\(stepID)\"") }
            let form = try stepNode.optionalString("form")
            let element = try stepNode.optionalString("element")
            if element != nil && form == nil { throw stepNode.error(at: "element", "element needs form (the form control's id)") }
            steps.append(Step(id: stepID, title: try stepNode.string("title", default: stepID), form: form, element: element))
        }
        let index = try node.int("index", default: 0)
        guard steps.indices.contains(index) else { throw node.error(at: "index", "\(index) is outside 0…\(steps.count - 1)") }
        self.init(label: try node.string("label", default: id.rawValue), steps: steps, index: index,
                  cycle: try node.bool("cycle", default: false))
    }
}
