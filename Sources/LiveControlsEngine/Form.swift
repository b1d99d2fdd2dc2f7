import LiveControlsProtocol

/// A multi-step form (the StackedForm seed), filled in together by everyone in the room.
///
/// Elements come in order; exactly one is `expanded` until the form completes, the others show a
/// collapsed `summary`. `set` stores a field's value (only in the expanded element) and the server
/// recomputes that field's `error` and the element's `valid` in the same patch; a set changes nothing
/// but its own field, so concurrent sets on different fields both land. `finish` (the seed's CTA /
/// `didFinishInput`) collapses a valid element and expands the next; after the last one the form is
/// `completed` and carries its `data`. `expand` goes back to an earlier element; `reset` starts over.
public struct Form: Control {
    public static let kind = "form"
    public static let intents = ["set", "finish", "expand", "reset"]

    public var label: String
    public private(set) var elements: [FormElement]
    /// The expanded element's index; `nil` once the form is completed.
    public private(set) var current: Int?
    /// The configured elements, for `reset`.
    public let initialElements: [FormElement]

    public init(label: String, elements: [FormElement]) {
        precondition(!elements.isEmpty)
        self.label = label
        self.elements = elements
        self.initialElements = elements
        self.current = 0
    }

    /// A form exactly as stored (`Form+Storage.swift`); the caller has checked `current`.
    init(label: String, elements: [FormElement], current: Int?, initialElements: [FormElement]) {
        self.label = label
        self.elements = elements
        self.current = current
        self.initialElements = initialElements
    }

    public var completed: Bool { current == nil }

    public func element(_ id: String) -> FormElement? { elements.first { $0.id == id } }

    /// `{elementID: {fieldID: value}}`.
    public var data: JSONValue { .object(JSONObject(pairs: elements.map { ($0.id, $0.data) })) }

    public func render() -> JSONValue {
        let expanded = current.map { elements[$0] }
        return [
            "kind": .string(Self.kind), "label": .string(label),
            "completed": .bool(completed),
            "current": expanded.map { .string($0.id) } ?? .null,
            "cta": expanded?.cta.map { .string($0) } ?? .null,
            "canFinish": .bool(expanded?.valid ?? false),
            "elements": .array(elements.indices.map { i in
                let e = elements[i]
                return [
                    "id": .string(e.id), "title": .string(e.title),
                    "status": .string(i == current ? "expanded" : "collapsed"),
                    "valid": .bool(e.valid),
                    "cta": e.cta.map { .string($0) } ?? .null,
                    "summary": .string(e.summaryText),
                    "fields": .array(e.fields.map { $0.render() }),
                ]
            }),
            "data": completed ? data : .null,
        ]
    }

    public mutating func apply(_ intent: String, args: IntentArgs, by session: SessionID, at now: Instant, room: RoomView) throws(IntentError) -> ControlEvents {
        switch intent {
        case "set": try set(args)
        case "finish": try finish(args)
        case "expand": try expand(args)
        case "reset":
            elements = initialElements
            current = 0
        default: throw Self.unknownIntent(intent, known: Self.intents)
        }
        return .none
    }

    /// An element (`account`) or one of its fields (`account.email`) may be claimed.
    public func isClaimTarget(_ target: String) -> Bool {
        let parts = target.split(separator: ".", maxSplits: 1).map(String.init)
        guard let element = element(parts[0]) else { return false }
        return parts.count == 1 || element.fieldIndex(parts[1]) != nil
    }

    /// `set` writes its field, `finish` its element (the expanded one when unnamed), `reset` everything; `expand`
    /// moves between elements and writes none. Malformed args reach nothing (the intent's own error says why).
    public func reach(of intent: String, args: IntentArgs) -> IntentReach {
        let element = args.object["element"]?.stringValue
        switch intent {
        case "set":
            guard let element, let field = args.object["field"]?.stringValue else { return .navigation }
            return .parts([element + "." + field])
        case "finish":
            guard let id = element ?? current.map({ elements[$0].id }) else { return .navigation }
            return .parts([id])
        case "reset": return .whole
        default: return .navigation
        }
    }

    private func notCompleted(_ intent: String) throws(IntentError) -> Int {
        guard let current else { throw IntentError(.finished, "the form is completed; \(intent) needs a reset first") }
        return current
    }

    private func elementIndex(_ args: IntentArgs) throws(IntentError) -> Int {
        let id = try args.string("element")
        guard let i = elements.firstIndex(where: { $0.id == id }) else {
            throw IntentError(.notFound, "the form has no element \"\(id)\" (it has: \(elements.map(\.id).joined(separator: ", ")))")
        }
        return i
    }

    /// `set {element, field, value}`: only the expanded element takes input.
    private mutating func set(_ args: IntentArgs) throws(IntentError) {
        let current = try notCompleted("set")
        let e = try elementIndex(args)
        let fieldID = try args.string("field")
        guard let f = elements[e].fieldIndex(fieldID) else {
            throw IntentError(.notFound, "element \(elements[e].id) has no field \"\(fieldID)\" (it has: \(elements[e].fields.map(\.id).joined(separator: ", ")))")
        }
        let value = try args.value("value")
        guard e == current else {
            throw IntentError(.conflict, "element \(elements[e].id) is collapsed (\(elements[current].id) is expanded); expand it first")
        }
        if let problem = elements[e].fields[f].typeProblem(value) { throw IntentError(.invalidArgs, "args.value: \(problem)") }
        elements[e].fields[f].assign(value)
    }

    /// `finish {element?}`: collapse the expanded element when it is valid and expand the next.
    /// Naming the element guards against finishing one that someone else already moved past.
    private mutating func finish(_ args: IntentArgs) throws(IntentError) {
        let current = try notCompleted("finish")
        if args.object["element"] != nil && args.object["element"] != .null {
            let e = try elementIndex(args)
            guard e == current else {
                throw IntentError(.conflict, "element \(elements[e].id) is not the expanded one (\(elements[current].id) is)")
            }
        }
        let element = elements[current]
        guard element.valid else {
            let problems = element.fields.compactMap { f in f.error.map { "\(f.id): \($0)" } }
            throw IntentError(.notValid, "element \(element.id) is not valid (\(problems.joined(separator: "; ")))")
        }
        self.current = current + 1 < elements.count ? current + 1 : nil
    }

    /// `expand {element}`: go back to an element before the expanded one.
    private mutating func expand(_ args: IntentArgs) throws(IntentError) {
        let current = try notCompleted("expand")
        let e = try elementIndex(args)
        guard e <= current else {
            throw IntentError(.outOfRange, "element \(elements[e].id) comes after the expanded one (\(elements[current].id)); finish to move on")
        }
        self.current = e
    }
}
