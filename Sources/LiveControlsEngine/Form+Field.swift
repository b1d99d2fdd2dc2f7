import LiveControlsProtocol

/// One input of a form element, with the rules the server checks.
///
/// A value of the wrong JSON type for the field is refused (`invalid_args`); a value of the right type
/// that breaks a rule is stored anyway (typing is never lost) and shows as the field's `error`.
/// `null` clears any field.
public struct FormField: Sendable, Equatable {
    public enum FieldType: String, Sendable, CaseIterable {
        /// A string.
        case text
        /// A JSON number.
        case number
        /// One of `choices` (strings).
        case choice
        /// `true` or `false`.
        case boolean
    }

    /// Longest text the server stores, rules or not.
    public static let maxStoredLength = 10_000

    // Rules are set while the config is read, before the first `assign`; `error` follows `value`.
    public internal(set) var id: String
    public internal(set) var label: String
    public internal(set) var type: FieldType
    /// Text and choice: not null or blank. Number: not null. Boolean: must be `true` (a must-tick box).
    public internal(set) var required: Bool = false
    public internal(set) var minLength: Int? = nil
    public internal(set) var maxLength: Int? = nil
    /// A regular expression the whole text must match (HTML `pattern` semantics); empty text is not checked.
    public internal(set) var pattern: String? = nil
    public internal(set) var min: JSONValue? = nil
    public internal(set) var max: JSONValue? = nil
    /// Number: must be a whole number.
    public internal(set) var integer: Bool = false
    public internal(set) var choices: [String] = []
    public private(set) var value: JSONValue = .null
    /// The first rule `value` breaks, as a message for people; nil when valid. Computed once per `assign`,
    /// so rendering never re-runs the rules (a `pattern` compiles on each check).
    public private(set) var error: String? = nil

    public init(id: String, label: String? = nil, type: FieldType) {
        self.id = id
        self.label = label ?? id
        self.type = type
        self.error = ruleError(.null)
    }

    /// Why `candidate` cannot be stored in this field (wrong JSON type, unknown choice, too long), or nil.
    public func typeProblem(_ candidate: JSONValue) -> String? {
        if candidate == .null { return nil }
        switch type {
        case .text:
            guard let s = candidate.stringValue else { return "\(id) is a text field; expected a string or null, got \(candidate.typeName)" }
            guard s.unicodeScalars.count <= Self.maxStoredLength else { return "\(id): text longer than \(Self.maxStoredLength) characters" }
        case .number:
            guard candidate.doubleValue != nil else { return "\(id) is a number field; expected a number or null, got \(candidate.typeName)" }
        case .choice:
            guard let s = candidate.stringValue else { return "\(id) is a choice field; expected a string or null, got \(candidate.typeName)" }
            guard choices.contains(s) else { return "\(id): \"\(s)\" is not one of \(choices.map { "\"\($0)\"" }.joined(separator: ", "))" }
        case .boolean:
            guard candidate.boolValue != nil else { return "\(id) is a boolean field; expected true, false or null, got \(candidate.typeName)" }
        }
        return nil
    }

    /// Stores a value (already type-checked with `typeProblem`) and validates it.
    public mutating func assign(_ newValue: JSONValue) {
        value = newValue
        error = ruleError(newValue)
    }

    /// Puts back a stored value with the error stored beside it (`Form+Storage.swift`): the state as it was,
    /// without running the rules again.
    mutating func restore(value: JSONValue, error: String?) {
        self.value = value
        self.error = error
    }

    public func ruleError(_ v: JSONValue) -> String? {
        switch type {
        case .text:
            let s = v.stringValue ?? ""
            if s.allSatisfy(\.isWhitespace) { return required ? "required" : nil }
            let length = s.count
            if let minLength, length < minLength { return "at least \(minLength) character\(minLength == 1 ? "" : "s")" }
            if let maxLength, length > maxLength { return "at most \(maxLength) character\(maxLength == 1 ? "" : "s")" }
            if let pattern, !Self.matches(pattern, s) { return "does not match the expected format" }
        case .number:
            guard let d = v.doubleValue else { return required ? "required" : nil }
            if integer, d.rounded() != d { return "must be a whole number" }
            if let min, let m = min.doubleValue, d < m { return "must be ≥ \(DisplayTemplate.text(of: min))" }
            if let max, let m = max.doubleValue, d > m { return "must be ≤ \(DisplayTemplate.text(of: max))" }
        case .choice:
            if v == .null { return required ? "required" : nil }
        case .boolean:
            if required, v.boolValue != true { return "must be checked" }
        }
        return nil
    }

    /// Whether `pattern` compiles (checked when the config is read).
    public static func patternCompiles(_ pattern: String) -> Bool { (try? Regex(pattern)) != nil }

    /// Whole-string match; `Regex` is not `Sendable`, so patterns are kept as text and compiled here.
    static func matches(_ pattern: String, _ s: String) -> Bool {
        guard let regex = try? Regex(pattern) else { return false }
        return ((try? regex.wholeMatch(in: s)) ?? nil) != nil
    }

    public func render() -> JSONValue {
        var o: JSONObject = [
            "id": .string(id), "label": .string(label), "type": .string(type.rawValue),
            "value": value, "error": error.map { .string($0) } ?? .null, "required": .bool(required),
        ]
        switch type {
        case .text:
            if let minLength { o["minLength"] = .int(minLength) }
            if let maxLength { o["maxLength"] = .int(maxLength) }
            if let pattern { o["pattern"] = .string(pattern) }
        case .number:
            if let min { o["min"] = min }
            if let max { o["max"] = max }
            o["integer"] = .bool(integer)
        case .choice:
            o["choices"] = .array(choices.map { .string($0) })
        case .boolean:
            break
        }
        return .object(o)
    }
}

/// One step of a stacked form: its fields, its call to action and its collapsed summary.
public struct FormElement: Sendable, Equatable {
    public var id: String
    public var title: String
    /// The call-to-action text; `nil` hides the button (`finish` still works).
    public var cta: String?
    /// The collapsed view's text, filled from the element's data; default: the values joined by ", ".
    public var summary: DisplayTemplate?
    public var fields: [FormField]

    public var valid: Bool { fields.allSatisfy { $0.error == nil } }

    /// `{fieldID: value}` in field order.
    public var data: JSONValue { .object(JSONObject(pairs: fields.map { ($0.id, $0.value) })) }

    public var summaryText: String {
        if let summary { return summary.render(data) }
        return fields.filter { $0.value != .null }.map { DisplayTemplate.text(of: $0.value) }.joined(separator: ", ")
    }

    public func fieldIndex(_ id: String) -> Int? { fields.firstIndex { $0.id == id } }
}
