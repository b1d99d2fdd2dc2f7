/// A multi-step form filled in together (StackedForm): one element expanded at a time.
@MainActor
public struct FormControl: ControlView {
    public static let kind = "form"
    public let control: LiveControl
    public init(unchecked control: LiveControl) { self.control = control }

    public struct Field: Sendable, Equatable, Identifiable {
        public var id: String
        public var label: String
        /// `text`, `number`, `choice`, `boolean`.
        public var type: String
        public var value: JSONValue
        /// The first broken rule (`"required"`, `"at most 60 characters"`…), nil when valid.
        public var error: String?
        public var required: Bool
        /// For a choice field.
        public var choices: [String]
        /// The whole field as sent (its type's rules: minLength, pattern, min, max, integer…).
        public var json: JSONValue
    }

    public struct Element: Sendable, Equatable, Identifiable {
        public var id: String
        public var title: String
        public var isExpanded: Bool
        public var valid: Bool
        public var cta: String?
        /// The collapsed view's text.
        public var summary: String
        public var fields: [Field]
    }

    public var completed: Bool { json["completed"]?.boolValue ?? false }
    /// The expanded element's id; nil once completed.
    public var current: String? { json["current"]?.stringValue }
    /// The expanded element's call to action; nil hides the button.
    public var cta: String? { json["cta"]?.stringValue }
    /// Whether the expanded element is valid (enable the button).
    public var canFinish: Bool { json["canFinish"]?.boolValue ?? false }
    public var elements: [Element] {
        (json["elements"]?.arrayValue ?? []).map { element in
            Element(id: element["id"]?.stringValue ?? "", title: element["title"]?.stringValue ?? "",
                    isExpanded: element["status"]?.stringValue == "expanded", valid: element["valid"]?.boolValue ?? false,
                    cta: element["cta"]?.stringValue, summary: element["summary"]?.stringValue ?? "",
                    fields: (element["fields"]?.arrayValue ?? []).map(Self.field))
        }
    }
    /// Once completed, the collected data: element id → field id → value.
    public var data: JSONObject? { json["data"]?.objectValue }

    /// The element with this id.
    public func element(_ id: String) -> Element? { elements.first { $0.id == id } }

    /// Sets a field of the expanded element (a value breaking a rule is stored and shows as the field's error).
    @discardableResult public func set(_ element: String, _ field: String, to value: JSONValue) async throws -> Int {
        try await control.send("set", ["element": .string(element), "field": .string(field), "value": value])
    }

    /// Finishes the expanded element (naming it guards against finishing the next one by accident).
    @discardableResult public func finish(_ element: String? = nil) async throws -> Int {
        try await control.send("finish", element.map { ["element": .string($0)] } ?? [:])
    }

    /// Goes back to an earlier element.
    @discardableResult public func expand(_ element: String) async throws -> Int {
        try await control.send("expand", ["element": .string(element)])
    }

    @discardableResult public func reset() async throws -> Int { try await control.send("reset") }

    private static func field(_ json: JSONValue) -> Field {
        Field(id: json["id"]?.stringValue ?? "", label: json["label"]?.stringValue ?? "",
              type: json["type"]?.stringValue ?? "", value: json["value"] ?? .null, error: json["error"]?.stringValue,
              required: json["required"]?.boolValue ?? false,
              choices: json["choices"]?.arrayValue?.compactMap(\.stringValue) ?? [], json: json)
    }
}
