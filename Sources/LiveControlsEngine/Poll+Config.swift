import LiveControlsProtocol

extension Poll {
    /// Reads a poll from its template entry: `options` (strings, or `{id, label}`), `mode`, `maxVotes`, `seeVotes`,
    /// `showVoters`, `allowAdd`, `maxOptions`.
    public init(config node: ConfigNode, id: ControlID, today: CivilDate) throws(ConfigError) {
        _ = try node.object(allowed: ["kind", "label", "options", "mode", "maxVotes", "seeVotes", "showVoters", "allowAdd", "maxOptions"])
        let modeName = try node.string("mode", default: Mode.single.rawValue)
        guard let mode = Mode(rawValue: modeName) else { throw node.error(at: "mode", "must be \"single\" or \"multi\"") }
        let allowAdd = try node.bool("allowAdd", default: false)
        var options: [Option] = []
        if let list = node["options"] {
            for entry in try list.array() {
                let option: Option
                if let text = entry.value.stringValue {
                    option = Option(id: text, label: text, addedBy: nil)
                } else {
                    _ = try entry.object(allowed: ["id", "label"])
                    let optionID = try entry.string("id")
                    option = Option(id: optionID, label: try entry.string("label", default: optionID), addedBy: nil)
                }
                guard ClientMessage.isValidName(option.id) else { throw entry.error("an option id must be 1–64 characters of A–Z a–z 0–9 _ - . :") }
                guard !option.id.hasPrefix("added-") else { throw entry.error("option ids starting with added- are for options members add") }
                guard (1...Self.maxLabelLength).contains(option.label.count) else { throw entry.error("an option label must be 1…\(Self.maxLabelLength) characters") }
                guard !options.contains(where: { $0.id == option.id }) else { throw entry.error("option id \"\(option.id)\" is used twice") }
                options.append(option)
            }
        } else if !allowAdd {
            throw node.error(at: "options", "a poll needs its options (or allowAdd, for options members add)")
        }
        let maxOptions = try node.int("maxOptions", default: max(20, options.count))
        guard (1...Self.maxOptionLimit).contains(maxOptions) else { throw node.error(at: "maxOptions", "must be 1…\(Self.maxOptionLimit)") }
        guard options.count <= maxOptions else { throw node.error(at: "options", "has \(options.count) options, more than maxOptions (\(maxOptions))") }
        guard !options.isEmpty || allowAdd else { throw node.error(at: "options", "a poll needs at least one option (or allowAdd)") }
        let maxVotes = try node.int("maxVotes", default: mode == .single ? 1 : max(1, options.count))
        switch mode {
        case .single: guard maxVotes == 1 else { throw node.error(at: "maxVotes", "a single-choice poll takes one vote (use mode multi for more)") }
        case .multi: guard (1...Self.maxOptionLimit).contains(maxVotes) else { throw node.error(at: "maxVotes", "must be 1…\(Self.maxOptionLimit)") }
        }
        var seeVotes: [String] = []
        if let roles = node["seeVotes"] {
            for role in try roles.array() {
                guard let name = role.value.stringValue, ClientMessage.isValidName(name) else {
                    throw role.error("a role name is 1–64 characters of A–Z a–z 0–9 _ - . :")
                }
                if !seeVotes.contains(name) { seeVotes.append(name) }
            }
        }
        self.init(label: try node.string("label", default: id.rawValue), options: options, mode: mode, maxVotes: maxVotes, seeVotes: seeVotes,
                  showVoters: try node.bool("showVoters", default: false), allowAdd: allowAdd, maxOptions: maxOptions)
    }
}
