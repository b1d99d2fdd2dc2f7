import LiveControlsProtocol

extension Form {
    /// Reads a form from its template entry: `elements`, each `{id, title?, cta?, summary?, fields}`,
    /// each field `{id, label?, type, required?, value?, …rules}`.
    public init(config node: ConfigNode, id: ControlID) throws(ConfigError) {
        _ = try node.object(allowed: ["kind", "label", "elements"])
        guard let elementsNode = node["elements"] else { throw node.error(at: "elements", "required array is missing") }
        let nodes = try elementsNode.array()
        guard !nodes.isEmpty else { throw elementsNode.error("at least one element is needed") }
        var elements: [FormElement] = []
        for (i, elementNode) in nodes.enumerated() {
            let element = try Self.element(elementNode, isLast: i == nodes.count - 1)
            guard !elements.contains(where: { $0.id == element.id }) else {
                throw elementNode.error(at: "id", "duplicate element id \"\(element.id)\"")
            }
            elements.append(element)
        }
        self.init(label: try node.string("label", default: id.rawValue), elements: elements)
    }

    private static func element(_ node: ConfigNode, isLast: Bool) throws(ConfigError) -> FormElement {
        let o = try node.object(allowed: ["id", "title", "cta", "summary", "fields"])
        let id = try node.string("id")
        guard ClientMessage.isValidName(id), !id.contains(".") else {
            throw node.error(at: "id", "element id must be 1–64 characters of A–Z a–z 0–9 _ - : (no dots: a claim names a field as element.field)")
        }
        // `"cta": null` hides the button; a missing cta gets the default text.
        let cta: String? = o["cta"] == .null ? nil : try node.string("cta", default: isLast ? "Done" : "Continue")
        var summary: DisplayTemplate? = nil
        if let text = try node.optionalString("summary") {
            do { summary = try DisplayTemplate(text) } catch { throw node.error(at: "summary", error.message) }
        }
        var fields: [FormField] = []
        if let fieldsNode = node["fields"] {
            for fieldNode in try fieldsNode.array() {
                let field = try Self.field(fieldNode)
                guard !fields.contains(where: { $0.id == field.id }) else {
                    throw fieldNode.error(at: "id", "duplicate field id \"\(field.id)\"")
                }
                fields.append(field)
            }
        }
        return FormElement(id: id, title: try node.string("title", default: id), cta: cta, summary: summary, fields: fields)
    }

    private static let ruleKeys: [FormField.FieldType: [String]] = [
        .text: ["minLength", "maxLength", "pattern"], .number: ["min", "max", "integer"], .choice: ["choices"], .boolean: [],
    ]

    private static func field(_ node: ConfigNode) throws(ConfigError) -> FormField {
        let o = try node.object(allowed: ["id", "label", "type", "required", "value", "minLength", "maxLength", "pattern",
                                          "min", "max", "integer", "choices"])
        let id = try node.string("id")
        guard ClientMessage.isValidName(id), !id.contains(".") else {
            throw node.error(at: "id", "field id must be 1–64 characters of A–Z a–z 0–9 _ - : (no dots: a claim names a field as element.field)")
        }
        let typeName = try node.string("type")
        guard let type = FormField.FieldType(rawValue: typeName) else {
            throw node.error(at: "type", "must be one of \(FormField.FieldType.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")), got \"\(typeName)\"")
        }
        let own = ruleKeys[type]!
        for key in ruleKeys.values.joined() where o[key] != nil && !own.contains(key) {
            throw node.error(at: key, "\(key) does not apply to \(typeName) fields")
        }
        var field = FormField(id: id, label: try node.string("label", default: id), type: type)
        field.required = try node.bool("required", default: false)
        switch type {
        case .text:
            field.minLength = try node.optionalInt("minLength")
            field.maxLength = try node.optionalInt("maxLength")
            if let m = field.minLength, m < 0 { throw node.error(at: "minLength", "must be ≥ 0") }
            if let m = field.maxLength, m < Swift.max(field.minLength ?? 0, 1) {
                throw node.error(at: "maxLength", "must be ≥ 1 and ≥ minLength")
            }
            if let pattern = try node.optionalString("pattern") {
                guard FormField.patternCompiles(pattern) else { throw node.error(at: "pattern", "not a valid regular expression: \(pattern)") }
                field.pattern = pattern
            }
        case .number:
            for key in ["min", "max"] {
                if let n = node[key], n.value.doubleValue == nil { throw n.error("expected a number, got \(n.value.typeName)") }
            }
            field.min = node["min"]?.value
            field.max = node["max"]?.value
            if let lo = field.min?.doubleValue, let hi = field.max?.doubleValue, lo > hi {
                throw node.error(at: "max", "must be ≥ min")
            }
            field.integer = try node.bool("integer", default: false)
        case .choice:
            guard let choicesNode = node["choices"] else { throw node.error(at: "choices", "a choice field needs choices") }
            var choices: [String] = []
            for c in try choicesNode.array() {
                guard let s = c.value.stringValue else { throw c.error("expected a string, got \(c.value.typeName)") }
                guard !choices.contains(s) else { throw c.error("duplicate choice \"\(s)\"") }
                choices.append(s)
            }
            guard !choices.isEmpty else { throw choicesNode.error("at least one choice is needed") }
            field.choices = choices
        case .boolean:
            break
        }
        let value = o["value"] ?? (type == .boolean ? .bool(false) : .null)
        if let problem = field.typeProblem(value) { throw node.error(at: "value", problem) }
        field.assign(value)
        return field
    }
}
