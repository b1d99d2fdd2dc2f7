/// A position in an unbounded domain (InfiniteScrollViews): integers, months or days.
@MainActor
public struct PagerControl: SequentialControl {
    public static let kind = "pager"
    public let control: LiveControl
    public init(unchecked control: LiveControl) { self.control = control }

    /// `integer`, `month` or `day`.
    public var domain: String { json["domain"]?.stringValue ?? "integer" }
    /// The current position: an integer, `"YYYY-MM"` or `"YYYY-MM-DD"`.
    public var position: JSONValue { json["position"] ?? .null }
    public var min: JSONValue { json["min"] ?? .null }
    public var max: JSONValue { json["max"] ?? .null }
    public var step: Int { json["step"]?.intValue ?? 1 }
    public var radius: Int { json["radius"]?.intValue ?? 0 }
    /// The positions around the current one, in order (shorter near a bound).
    public var window: [JSONValue] { json["window"]?.arrayValue ?? [] }
    /// Moves when the pages' content was declared changed: reload what you show.
    public var generation: Int { json["generation"]?.intValue ?? 0 }

    /// Goes to a position in the domain's form; throws `out_of_range` outside `min…max`.
    @discardableResult public func goto(_ position: JSONValue) async throws -> Int {
        try await control.send("goto", ["position": position])
    }

    /// Declares the pages' content changed (`generation` + 1): every client reloads.
    @discardableResult public func refresh() async throws -> Int { try await control.send("refresh") }
}
