import LiveControlsProtocol

/// A vote shared by a room: options, one or several choices per member, and phases `open` → `closed` → `revealed`.
///
/// Ballots are private until the poll is revealed (`Views.swift`): a member sees how many have voted (`voters`) and
/// its own ballot (`ballots.<its session>`); roles named in `seeVotes` (a workshop's `host`) see every ballot and the
/// `tally`. At `reveal` the tally turns public, and the ballots too when `showVoters` is set. Phase intents (`open`,
/// `close`, `reveal`, `reset`) are anyone's unless the template's permissions reserve them (the workshop's host).
public struct Poll: ConfigurableControl {
    public static let kind = "poll"
    public static let intents = ["vote", "unvote", "open", "close", "reveal", "reset", "add"]
    /// The most options a poll has, configured and added.
    public static let maxOptionLimit = 100
    /// The longest option label.
    public static let maxLabelLength = 200

    public enum Mode: String, Sendable { case single, multi }
    public enum Phase: String, Sendable { case open, closed, revealed }

    public struct Option: Sendable, Equatable {
        public var id: String
        public var label: String
        /// The member who added it (`add`); nil for the config's options.
        public var addedBy: SessionID?
    }

    public var label: String
    public let mode: Mode
    /// How many options one ballot may choose (1 in `single` mode).
    public let maxVotes: Int
    /// Roles that see every ballot and the tally before the reveal.
    public let seeVotes: [String]
    /// Whether the ballots (who chose what) turn public at the reveal; otherwise only the tally does.
    public let showVoters: Bool
    /// Whether members may add options (`add`), up to `maxOptions`.
    public let allowAdd: Bool
    public let maxOptions: Int
    /// The options the config set (a `reset` goes back to them).
    public let configured: [Option]
    public internal(set) var options: [Option]
    public internal(set) var phase: Phase = .open
    /// Each voter's choices, in the order they first voted; a ballot with no choice left is removed.
    public internal(set) var ballots: [(session: SessionID, choices: [String])] = []
    /// The number the next added option's id takes (`added-<n>`).
    var nextAdded = 1

    public init(label: String, options: [Option], mode: Mode = .single, maxVotes: Int = 1, seeVotes: [String] = [],
                showVoters: Bool = false, allowAdd: Bool = false, maxOptions: Int = 20) {
        precondition(mode == .multi || maxVotes == 1)
        self.label = label
        self.mode = mode
        self.maxVotes = maxVotes
        self.seeVotes = seeVotes
        self.showVoters = showVoters
        self.allowAdd = allowAdd
        self.maxOptions = maxOptions
        self.configured = options
        self.options = options
    }

    // MARK: State

    /// Votes for each option, in option order.
    public var tally: [(option: String, votes: Int)] {
        var counts: [String: Int] = [:]
        for ballot in ballots { for choice in ballot.choices { counts[choice, default: 0] += 1 } }
        return options.map { ($0.id, counts[$0.id] ?? 0) }
    }

    public func render() -> JSONValue {
        var ballotsJSON = JSONObject()
        for ballot in ballots { ballotsJSON[ballot.session.rawValue] = .array(ballot.choices.map { .string($0) }) }
        var tallyJSON = JSONObject()
        for (option, votes) in tally { tallyJSON[option] = .int(votes) }
        return .object(JSONObject(pairs: [
            ("kind", .string(Self.kind)), ("label", .string(label)), ("mode", .string(mode.rawValue)), ("maxVotes", .int(maxVotes)),
            ("allowAdd", .bool(allowAdd)), ("phase", .string(phase.rawValue)),
            ("options", .array(options.map { o in
                ["id": .string(o.id), "label": .string(o.label), "addedBy": o.addedBy.map { .string($0.rawValue) } ?? .null]
            })),
            ("voters", .int(ballots.count)), ("ballots", .object(ballotsJSON)), ("tally", .object(tallyJSON)),
        ]))
    }

    public static var hasPrivateParts: Bool { true }

    /// Before the reveal: each ballot to its voter and `seeVotes`, the tally to `seeVotes`. After it: the tally to all,
    /// and the ballots too with `showVoters`.
    public var privateParts: [PrivatePart] {
        var parts: [PrivatePart] = []
        if phase != .revealed || !showVoters {
            for ballot in ballots { parts.append(PrivatePart(path: ["ballots", ballot.session.rawValue], audience: Audience(owner: ballot.session, roles: seeVotes))) }
        }
        if phase != .revealed { parts.append(PrivatePart(path: ["tally"], audience: Audience(roles: seeVotes))) }
        return parts
    }

    public var stateBytes: Int {
        256 + options.reduce(0) { $0 + 48 + $1.id.utf8.count + $1.label.utf8.count } + ballots.reduce(0) { $0 + 40 + $1.choices.count * 24 }
    }

    // MARK: Intents

    public mutating func apply(_ intent: String, args: IntentArgs, by session: SessionID, at now: Instant, room: RoomView) throws(IntentError) -> ControlEvents {
        switch intent {
        case "vote":
            let option = try args.string("option")
            try checkVoter(session)
            try checkVoting(intent)
            try vote(option, by: session)
        case "unvote":
            let option = try args.string("option")
            try checkVoter(session)
            try checkVoting(intent)
            guard options.contains(where: { $0.id == option }) else { throw unknownOption(option) }
            guard let i = ballots.firstIndex(where: { $0.session == session }) else { return .none }
            ballots[i].choices.removeAll { $0 == option }
            if ballots[i].choices.isEmpty { ballots.remove(at: i) }
        case "open":
            if phase == .revealed { throw IntentError(.finished, "\(label) was revealed: reset it to vote again") }
            phase = .open
        case "close":
            if phase == .open { phase = .closed }
        case "reveal":
            phase = .revealed
        case "reset":
            phase = .open
            ballots = []
            options = configured
            nextAdded = 1
        case "add":
            let text = try args.string("label")
            try add(text, by: session)
        default:
            throw Self.unknownIntent(intent, known: Self.intents)
        }
        return .none
    }

    /// Members vote; the server API (the app's backend) casts no ballot.
    private func checkVoter(_ session: SessionID) throws(IntentError) {
        if session == .server { throw IntentError(.forbidden, "the server API casts no ballot in \(label): members vote") }
    }

    private func checkVoting(_ intent: String) throws(IntentError) {
        switch phase {
        case .open: return
        case .closed: throw IntentError(.closed, "\(label) is closed: no \(intent) until it is opened again")
        case .revealed: throw IntentError(.finished, "\(label) was revealed: reset it to vote again")
        }
    }

    private func unknownOption(_ option: String) -> IntentError {
        IntentError(.notFound, "\(label) has no option \"\(option)\" (it has: \(options.map(\.id).joined(separator: ", ")))")
    }

    private mutating func vote(_ option: String, by session: SessionID) throws(IntentError) {
        guard options.contains(where: { $0.id == option }) else { throw unknownOption(option) }
        guard let i = ballots.firstIndex(where: { $0.session == session }) else {
            ballots.append((session, [option]))
            return
        }
        if ballots[i].choices.contains(option) { return }
        if mode == .single {
            ballots[i].choices = [option]
            return
        }
        guard ballots[i].choices.count < maxVotes else {
            throw IntentError(.outOfRange, "\(label) takes at most \(maxVotes) votes per member: unvote one first")
        }
        // Choices keep the options' order, so a ballot reads the same whatever order it was made in.
        ballots[i].choices.append(option)
        let order = Dictionary(uniqueKeysWithValues: options.enumerated().map { ($1.id, $0) })
        ballots[i].choices.sort { order[$0]! < order[$1]! }
    }

    private mutating func add(_ text: String, by session: SessionID) throws(IntentError) {
        guard allowAdd || session == .server else { throw IntentError(.forbidden, "\(label) takes no options from members (its config has no allowAdd)") }
        let trimmed = text.trimmingSpaces
        guard !trimmed.isEmpty, trimmed.count <= Self.maxLabelLength else {
            throw IntentError(.invalidArgs, "args.label must be 1…\(Self.maxLabelLength) characters (not only spaces)")
        }
        guard phase == .open else { try checkVoting("add"); return }
        if options.contains(where: { $0.label.lowercased() == trimmed.lowercased() }) {
            throw IntentError(.conflict, "\(label) already has an option \"\(trimmed)\"")
        }
        guard options.count < maxOptions else { throw IntentError(.tooLarge, "\(label) has its \(maxOptions) options (maxOptions)") }
        var id = "added-\(nextAdded)"
        while options.contains(where: { $0.id == id }) { nextAdded += 1; id = "added-\(nextAdded)" }
        nextAdded += 1
        options.append(Option(id: id, label: trimmed, addedBy: session == .server ? nil : session))
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and newlines.
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
