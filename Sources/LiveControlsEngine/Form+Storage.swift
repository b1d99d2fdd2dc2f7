import LiveControlsProtocol

extension Form: StorableControl {
    public static let stateKeys: Set<String> = ["elements", "current"]

    /// `{label, elements, current?, initialElements}`; each element `{id, title, cta?, summary?, fields}`, each
    /// field `{id, label, type, required, minLength?, maxLength?, pattern?, min?, max?, integer, choices, value,
    /// error?}`. `value`, `min` and `max` are the JSON values themselves (`1.0` stays a double).
    public var storedState: JSONValue {
        var o: JSONObject = ["label": .string(label), "elements": Self.stored(elements)]
        o.setIfPresent("current", current.map { .int($0) })
        o["initialElements"] = Self.stored(initialElements)
        return .object(o)
    }

    public init(storedState: JSONValue) throws(StoredStateError) {
        let s = StoredValue(storedState)
        let elements = try Self.elements(s, "elements")
        let current = try s.optionalInt("current")
        if let current, !elements.indices.contains(current) {
            throw s.error("current \(current) is outside the \(elements.count) elements")
        }
        let initialElements = try Self.elements(s, "initialElements")
        guard !elements.isEmpty, !initialElements.isEmpty else { throw s.error("a form needs at least one element") }
        self.init(label: try s.string("label"), elements: elements, current: current, initialElements: initialElements)
    }

    private static func stored(_ elements: [FormElement]) -> JSONValue {
        .array(elements.map { e in
            var o: JSONObject = ["id": .string(e.id), "title": .string(e.title)]
            o.setIfPresent("cta", e.cta.map { .string($0) })
            o.setIfPresent("summary", e.summary.map { .string($0.source) })
            o["fields"] = .array(e.fields.map(\.storedState))
            return .object(o)
        })
    }

    private static func elements(_ s: StoredValue, _ key: String) throws(StoredStateError) -> [FormElement] {
        var elements: [FormElement] = []
        for e in try s.array(key) {
            var summary: DisplayTemplate? = nil
            if let node = e["summary"] {
                let source = try node.string()
                do { summary = try DisplayTemplate(source) } catch { throw node.error(error.message) }
            }
            var fields: [FormField] = []
            for f in try e.array("fields") { fields.append(try FormField(stored: f)) }
            elements.append(FormElement(id: try e.string("id"), title: try e.string("title"), cta: try e.optionalString("cta"),
                                        summary: summary, fields: fields))
        }
        return elements
    }
}

extension FormField {
    var storedState: JSONValue {
        var o: JSONObject = ["id": .string(id), "label": .string(label), "type": .string(type.rawValue), "required": .bool(required)]
        o.setIfPresent("minLength", minLength.map { .int($0) })
        o.setIfPresent("maxLength", maxLength.map { .int($0) })
        o.setIfPresent("pattern", pattern.map { .string($0) })
        o.setIfPresent("min", min)
        o.setIfPresent("max", max)
        o["integer"] = .bool(integer)
        o["choices"] = .array(choices.map { .string($0) })
        o["value"] = value
        o.setIfPresent("error", error.map { .string($0) })
        return .object(o)
    }

    init(stored s: StoredValue) throws(StoredStateError) {
        self.init(id: try s.string("id"), label: try s.string("label"), type: try s.required("type").raw(FieldType.self))
        required = try s.bool("required")
        minLength = try s.optionalInt("minLength")
        maxLength = try s.optionalInt("maxLength")
        pattern = try s.optionalString("pattern")
        for key in ["min", "max"] {
            if let bound = s[key], bound.value.doubleValue == nil { throw bound.error("expected a number, got \(bound.value.typeName)") }
        }
        min = s["min"]?.value
        max = s["max"]?.value
        integer = try s.bool("integer")
        choices = try s.array("choices").map { c throws(StoredStateError) in try c.string() }
        restore(value: try s.json("value"), error: try s.optionalString("error"))
    }
}
