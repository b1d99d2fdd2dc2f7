import LiveControlsProtocol

extension Poll: StorableControl {
    public static let stateKeys: Set<String> = ["phase", "ballots", "added", "nextAdded"]

    /// `{label, mode, maxVotes, seeVotes, showVoters, allowAdd, maxOptions, options, phase, ballots: [{session, choices}],
    /// added: [{id, label, addedBy?}], nextAdded}`: `options` are the config's, `added` those members added.
    public var storedState: JSONValue {
        func optionJSON(_ o: Option) -> JSONValue {
            var object: JSONObject = ["id": .string(o.id), "label": .string(o.label)]
            object.setIfPresent("addedBy", o.addedBy.map(\.storedState))
            return .object(object)
        }
        return [
            "label": .string(label), "mode": .string(mode.rawValue), "maxVotes": .int(maxVotes), "seeVotes": .array(seeVotes.map { .string($0) }),
            "showVoters": .bool(showVoters), "allowAdd": .bool(allowAdd), "maxOptions": .int(maxOptions),
            "options": .array(configured.map(optionJSON)), "phase": .string(phase.rawValue),
            "ballots": .array(ballots.map { ["session": $0.session.storedState, "choices": .array($0.choices.map { .string($0) })] }),
            "added": .array(options.dropFirst(configured.count).map(optionJSON)), "nextAdded": .int(nextAdded),
        ]
    }

    public init(storedState: JSONValue) throws(StoredStateError) {
        let s = StoredValue(storedState)
        func option(_ v: StoredValue) throws(StoredStateError) -> Option {
            Option(id: try v.string("id"), label: try v.string("label"), addedBy: try v["addedBy"].map { (a) throws(StoredStateError) in try SessionID(stored: a) })
        }
        var configured: [Option] = []
        for v in try s.array("options") { configured.append(try option(v)) }
        let mode = try s.required("mode").raw(Mode.self)
        let maxVotes = try s.int("maxVotes")
        guard mode == .multi ? (1...Self.maxOptionLimit).contains(maxVotes) : maxVotes == 1 else { throw s.error("maxVotes \(maxVotes) does not fit mode \(mode)") }
        var seeVotes: [String] = []
        for v in try s.array("seeVotes") { seeVotes.append(try v.string()) }
        self.init(label: try s.string("label"), options: configured, mode: mode, maxVotes: maxVotes, seeVotes: seeVotes,
                  showVoters: try s.bool("showVoters"), allowAdd: try s.bool("allowAdd"), maxOptions: try s.int("maxOptions"))
        for v in try s.array("added") { options.append(try option(v)) }
        guard options.count <= Self.maxOptionLimit, Set(options.map(\.id)).count == options.count else { throw s.error("options repeat or exceed \(Self.maxOptionLimit)") }
        phase = try s.required("phase").raw(Phase.self)
        nextAdded = try s.int("nextAdded")
        var seen = Set<SessionID>()
        for v in try s.array("ballots") {
            let session = try SessionID(stored: try v.required("session"))
            var choices: [String] = []
            for c in try v.array("choices") { choices.append(try c.string()) }
            guard seen.insert(session).inserted, !choices.isEmpty, choices.count <= maxVotes,
                  choices.allSatisfy({ c in options.contains { $0.id == c } }) else { throw v.error("a ballot repeats a voter, or chooses what the poll does not have") }
            ballots.append((session, choices))
        }
    }
}
