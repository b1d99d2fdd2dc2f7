import LiveControlsProtocol

/// Text with `{field}` placeholders filled from a JSON value: the seed's `display` closure, as data.
///
/// - `{name}` is the member `name` of an object value; `{address.city}` follows nested objects.
/// - `{}` is the whole value.
/// - `{age|?}` shows `?` when `age` is missing or null; without a fallback such a field shows `—`.
/// - `{{` and `}}` are a literal `{` and `}`.
///
/// Strings show bare, numbers and booleans as JSON, arrays and objects as compact JSON. A value that
/// is not an object shows as itself under a template that names fields.
/// Used by `list` (item labels) and `form` (collapsed summaries).
public struct DisplayTemplate: Sendable, Equatable {
    enum Part: Sendable, Equatable {
        case text(String)
        case field(path: [String], fallback: String?)
    }

    /// What a missing or null field shows when its placeholder has no `|fallback`.
    public static let missingText = "—"

    public let source: String
    let parts: [Part]

    /// Parses a template; the error message says what is wrong and where.
    public init(_ source: String) throws(TemplateSyntaxError) {
        var parts: [Part] = []
        var text = ""
        var chars = Array(source)[...]
        var offset = 0
        func take() -> Character? {
            guard let c = chars.popFirst() else { return nil }
            offset += 1
            return c
        }
        while let c = take() {
            switch c {
            case "{":
                if chars.first == "{" { _ = take(); text.append("{"); continue }
                let start = offset - 1
                var body = ""
                var closed = false
                while let d = take() {
                    if d == "}" { closed = true; break }
                    if d == "{" { throw TemplateSyntaxError(message: "\"{\" inside the placeholder that starts at character \(start)") }
                    body.append(d)
                }
                guard closed else { throw TemplateSyntaxError(message: "placeholder at character \(start) is not closed with \"}\"") }
                if !text.isEmpty { parts.append(.text(text)); text = "" }
                parts.append(Self.placeholder(body))
            case "}":
                guard chars.first == "}" else {
                    throw TemplateSyntaxError(message: "stray \"}\" at character \(offset - 1) (write \"}}\" for a literal brace)")
                }
                _ = take()
                text.append("}")
            default:
                text.append(c)
            }
        }
        if !text.isEmpty { parts.append(.text(text)) }
        self.source = source
        self.parts = parts
    }

    private static func placeholder(_ body: String) -> Part {
        var name = Substring(body)
        var fallback: String? = nil
        if let bar = body.firstIndex(of: "|") {
            name = body[..<bar]
            fallback = String(body[body.index(after: bar)...])
        }
        let trimmed = name.filter { $0 != " " }
        let path = trimmed.isEmpty ? [] : trimmed.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        return .field(path: path, fallback: fallback)
    }

    /// Whether any placeholder names a field (rather than `{}`, the whole value).
    public var namesFields: Bool {
        parts.contains { if case .field(let path, _) = $0 { return !path.isEmpty } else { return false } }
    }

    /// The text for `value`. A value that is not an object has no fields to show, so a template that
    /// names fields shows such a value as itself (appending `"Zed"` to a `{name}: {age}` list shows `Zed`).
    public func render(_ value: JSONValue) -> String {
        if value.objectValue == nil && namesFields { return Self.text(of: value) }
        var out = ""
        for part in parts {
            switch part {
            case .text(let t):
                out += t
            case .field(let path, let fallback):
                var current: JSONValue? = value
                for key in path { current = current?.objectValue?[key] }
                if let current, current != .null {
                    out += Self.text(of: current)
                } else {
                    out += fallback ?? Self.missingText
                }
            }
        }
        return out
    }

    /// How a value shows without a template: strings bare, `null` as `—`, anything else as compact JSON.
    public static func text(of value: JSONValue) -> String {
        switch value {
        case .null: return missingText
        case .string(let s): return s
        case .int(let i): return String(i)
        case .bool(let b): return b ? "true" : "false"
        default: return JSONWriter.string(value)
        }
    }
}

/// A template that does not parse.
public struct TemplateSyntaxError: Error, Sendable, Equatable {
    public var message: String
}
