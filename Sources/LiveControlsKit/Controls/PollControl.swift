/// A vote (kind `poll`). Ballots are private until the reveal: before it ``ballots`` holds only this session's own
/// (every ballot for the roles the poll's `seeVotes` names) and ``tally`` is nil (set for those roles); after it the
/// tally is everyone's, and the ballots too when the poll shows voters.
@MainActor
public struct PollControl: ControlView {
    public static let kind = "poll"
    public let control: LiveControl
    public init(unchecked control: LiveControl) { self.control = control }

    public enum Phase: String, Sendable { case open, closed, revealed }

    public struct Option: Equatable, Sendable, Identifiable {
        public var id: String
        public var label: String
        /// The session that added it; nil for the config's options.
        public var addedBy: String?
    }

    public var phase: Phase { json["phase"]?.stringValue.flatMap(Phase.init) ?? .open }
    /// Whether a ballot holds several choices (up to ``maxVotes``).
    public var isMultipleChoice: Bool { json["mode"]?.stringValue == "multi" }
    public var maxVotes: Int { json["maxVotes"]?.intValue ?? 1 }
    /// Whether members may add options (``add(_:)``).
    public var allowsAdding: Bool { json["allowAdd"]?.boolValue ?? false }
    public var options: [Option] {
        (json["options"]?.arrayValue ?? []).compactMap { o in
            guard let id = o["id"]?.stringValue, let label = o["label"]?.stringValue else { return nil }
            return Option(id: id, label: label, addedBy: o["addedBy"]?.stringValue)
        }
    }
    /// How many members voted (everyone sees it).
    public var voters: Int { json["voters"]?.intValue ?? 0 }
    /// The ballots this session sees: session → option ids.
    public var ballots: [String: [String]] {
        var result: [String: [String]] = [:]
        for (session, choices) in json["ballots"]?.objectValue ?? [:] { result[session] = choices.arrayValue?.compactMap(\.stringValue) ?? [] }
        return result
    }
    /// This session's own choices.
    public var myChoices: [String] {
        guard let session = control.room?.client?.session else { return [] }
        return json["ballots"]?[session]?.arrayValue?.compactMap(\.stringValue) ?? []
    }
    /// Votes per option id, when this session may see them (after the reveal, or with a `seeVotes` role).
    public var tally: [String: Int]? {
        guard let object = json["tally"]?.objectValue else { return nil }
        var result: [String: Int] = [:]
        for (option, votes) in object { result[option] = votes.intValue ?? 0 }
        return result
    }

    /// Chooses `option` (single choice: moves this session's vote there). Throws `closed`, `finished`, `not_found`,
    /// `out_of_range` (a multiple-choice ballot that is full).
    @discardableResult public func vote(_ option: String) async throws -> Int { try await control.send("vote", ["option": .string(option)]) }
    /// Takes `option` out of this session's ballot.
    @discardableResult public func unvote(_ option: String) async throws -> Int { try await control.send("unvote", ["option": .string(option)]) }
    /// Adds an option (its id is `added-<n>`); throws `forbidden` when the poll takes none from members, `conflict` for a
    /// label it has, `too_large` past its `maxOptions`.
    @discardableResult public func add(_ label: String) async throws -> Int { try await control.send("add", ["label": .string(label)]) }
    @discardableResult public func close() async throws -> Int { try await control.send("close") }
    @discardableResult public func open() async throws -> Int { try await control.send("open") }
    /// Shows the tally to everyone.
    @discardableResult public func reveal() async throws -> Int { try await control.send("reveal") }
    /// Back to open, with no ballots and the config's options.
    @discardableResult public func reset() async throws -> Int { try await control.send("reset") }
}

extension Room {
    public func poll(_ id: String) -> PollControl? { control(id, as: PollControl.self) }
}
