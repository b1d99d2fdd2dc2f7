import LiveControlsProtocol

extension ListStepper {
    /// What to do when the configured `selected` value is not among the values (the seed's
    /// `.Fail`, `.First`, `.Append`).
    /// What happens when the selected value is not in the list: in the config, and again whenever the selected item
    /// is removed (the seed's `ArrayStepper` keeps following its setting as the values change).
    public enum SelectionPolicy: String, Sendable, CaseIterable {
        /// Refuse the config; refuse a `remove` of the selected item (the seed's default, its `fatalError`).
        case fail
        /// Select the first item instead.
        case first
        /// Append the value to the last section and select it (a removed selected item comes back, at the end).
        case append
    }

    /// Reads a list from its template entry: `values` (a plain list) or `sections`
    /// (`[{id?, header?, items}]`), `selected` (a value, matched by JSON equality, first match in
    /// flattened order), `selectionPolicy`, `display`, `wrap`, `maxItems`, `hold`.
    public init(config node: ConfigNode, id: ControlID) throws(ConfigError) {
        _ = try node.object(allowed: ["kind", "label", "values", "sections", "selected", "selectionPolicy",
                                      "display", "wrap", "maxItems", "hold"])
        var display: DisplayTemplate? = nil
        if let text = try node.optionalString("display") {
            do { display = try DisplayTemplate(text) } catch { throw node.error(at: "display", error.message) }
        }
        let maxItems = try node.int("maxItems", default: 1000)
        guard maxItems >= 1 else { throw node.error(at: "maxItems", "must be ≥ 1") }
        let sections = try Self.configSections(node)
        let total = sections.reduce(0) { $0 + $1.values.count }
        guard total <= maxItems else {
            throw node.error(at: node["sections"] != nil ? "sections" : "values", "\(total) items are more than maxItems (\(maxItems))")
        }
        let policyName = try node.string("selectionPolicy", default: SelectionPolicy.fail.rawValue)
        guard let policy = SelectionPolicy(rawValue: policyName) else {
            throw node.error(at: "selectionPolicy", "must be one of \(SelectionPolicy.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")), got \"\(policyName)\"")
        }

        self.init(label: try node.string("label", default: id.rawValue), sections: sections, selectedIndex: 0,
                  display: display, wrap: try node.bool("wrap", default: false), maxItems: maxItems,
                  timing: try node.holdTiming(defaultIntervalMs: 250))
        selectionPolicy = policy

        guard let wanted = node["selected"]?.value else { return }
        if let i = items.firstIndex(where: { $0.value == wanted }) {
            select(flatIndex: i)
            return
        }
        let shown = JSONWriter.string(wanted)
        switch policy {
        case .fail:
            throw node.error(at: "selected", "\(shown) is not among the values (selectionPolicy \"fail\"; \"first\" selects the first value instead, \"append\" adds it)")
        case .first:
            return
        case .append:
            guard total < maxItems else { throw node.error(at: "selected", "cannot append \(shown): the list would exceed maxItems (\(maxItems))") }
            appendItem(wanted, toSection: self.sections.count - 1)
            select(flatIndex: count - 1)
        }
    }

    private static func configSections(_ node: ConfigNode) throws(ConfigError) -> [(id: String, header: String?, values: [JSONValue])] {
        if let valuesNode = node["values"] {
            if node["sections"] != nil { throw node.error(at: "sections", "give either values or sections, not both") }
            guard let values = valuesNode.value.arrayValue else { throw valuesNode.error("expected an array, got \(valuesNode.value.typeName)") }
            return [(id: "s1", header: nil, values: values)]
        }
        guard let sectionsNode = node["sections"] else { throw node.error(at: "values", "a list needs values (an array) or sections") }
        let nodes = try sectionsNode.array()
        guard !nodes.isEmpty else { throw sectionsNode.error("at least one section is needed") }
        var result: [(id: String, header: String?, values: [JSONValue])] = []
        for (n, sectionNode) in nodes.enumerated() {
            _ = try sectionNode.object(allowed: ["id", "header", "items"])
            let sectionID = try sectionNode.string("id", default: "s\(n + 1)")
            guard ClientMessage.isValidName(sectionID) else {
                throw sectionNode.error(at: "id", "section id must be 1–64 characters of A–Z a–z 0–9 _ - . :")
            }
            guard !result.contains(where: { $0.id == sectionID }) else { throw sectionNode.error(at: "id", "duplicate section id \"\(sectionID)\"") }
            guard let itemsNode = sectionNode["items"] else { throw sectionNode.error(at: "items", "required array is missing") }
            guard let values = itemsNode.value.arrayValue else { throw itemsNode.error("expected an array, got \(itemsNode.value.typeName)") }
            result.append((id: sectionID, header: try sectionNode.optionalString("header"), values: values))
        }
        return result
    }
}
