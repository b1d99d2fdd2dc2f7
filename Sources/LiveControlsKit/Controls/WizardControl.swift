/// Ordered steps moved through together (StepView / StepController).
@MainActor
public struct WizardControl: ControlView {
    public static let kind = "wizard"
    public let control: LiveControl
    public init(unchecked control: LiveControl) { self.control = control }

    /// The seed's `StepViewState`.
    public enum Phase: Sendable, Equatable {
        case start, inProgress, complete, exit
        /// A phase newer than this SDK.
        case other(String)

        init(_ raw: String) {
            switch raw {
            case "start": self = .start
            case "inProgress": self = .inProgress
            case "complete": self = .complete
            case "exit": self = .exit
            default: self = .other(raw)
            }
        }
    }

    public struct Step: Sendable, Equatable, Identifiable {
        public var id: String
        public var title: String
        /// The form (and element) that must be valid before `next` leaves this step; nil when unguarded.
        public var guardForm: String?
        public var guardElement: String?
    }

    /// Why `next` would be refused now.
    public struct Blocked: Sendable, Equatable {
        public var code: String
        public var message: String
        public var form: String?
        public var element: String?
    }

    public var phase: Phase { Phase(json["phase"]?.stringValue ?? "start") }
    public var index: Int { json["index"]?.intValue ?? 0 }
    /// The current step's id and title.
    public var step: String { json["step"]?.stringValue ?? "" }
    public var title: String { json["title"]?.stringValue ?? "" }
    public var count: Int { json["count"]?.intValue ?? 0 }
    public var cycle: Bool { json["cycle"]?.boolValue ?? false }
    public var steps: [Step] {
        (json["steps"]?.arrayValue ?? []).map { step in
            Step(id: step["id"]?.stringValue ?? "", title: step["title"]?.stringValue ?? "",
                 guardForm: step["guard"]?["form"]?.stringValue, guardElement: step["guard"]?["element"]?.stringValue)
        }
    }
    /// `next` would be accepted now (the phase is not final and the step's guard passes).
    public var canNext: Bool { json["canNext"]?.boolValue ?? false }
    public var canPrev: Bool { json["canPrev"]?.boolValue ?? false }
    public var blocked: Blocked? {
        guard let blocked = json["blocked"], let code = blocked["code"]?.stringValue else { return nil }
        return Blocked(code: code, message: blocked["message"]?.stringValue ?? "",
                       form: blocked["form"]?.stringValue, element: blocked["element"]?.stringValue)
    }

    /// The next step (on the last: `complete`); throws `guard_failed` or `finished`.
    @discardableResult public func next() async throws -> Int { try await control.send("next") }
    /// The previous step (on the first: `exit`).
    @discardableResult public func prev() async throws -> Int { try await control.send("prev") }
    /// Back to the configured steps and index, phase `start`.
    @discardableResult public func reset() async throws -> Int { try await control.send("reset") }

    /// Adds a step at the end, optionally guarded by a form (element).
    @discardableResult
    public func append(id: String, title: String? = nil, form: String? = nil, element: String? = nil) async throws -> Int {
        var step: JSONObject = ["id": .string(id)]
        if let title { step["title"] = .string(title) }
        if let form { step["form"] = .string(form) }
        if let element { step["element"] = .string(element) }
        return try await control.send("append", ["step": .object(step)])
    }
}
