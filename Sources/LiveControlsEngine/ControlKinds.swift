import LiveControlsProtocol

/// The control kinds a template may use, by their `kind` string.
public enum ControlKinds {
    /// Reads one control of a kind from its template entry; `today` is the date the config is read on.
    public typealias Factory = @Sendable (ConfigNode, ControlID, _ today: CivilDate) throws(ConfigError) -> any Control

    public static let all: [(kind: String, make: Factory)] = [
        (Stepper.kind, { (node, id, _) throws(ConfigError) in try Stepper(config: node, id: id) }),
        (ListStepper.kind, { (node, id, _) throws(ConfigError) in try ListStepper(config: node, id: id) }),
        (Wizard.kind, { (node, id, _) throws(ConfigError) in try Wizard(config: node, id: id) }),
        (Form.kind, { (node, id, _) throws(ConfigError) in try Form(config: node, id: id) }),
        (Pager.kind, { (node, id, today) throws(ConfigError) in try Pager(config: node, id: id, today: today) }),
    ]

    public static func make(_ node: ConfigNode, id: ControlID, today: CivilDate) throws(ConfigError) -> any Control {
        _ = try node.object()
        guard let kindNode = node["kind"] else { throw node.error(at: "kind", "required string is missing") }
        guard let kind = kindNode.value.stringValue else { throw kindNode.error("expected a string, got \(kindNode.value.typeName)") }
        guard let entry = all.first(where: { $0.kind == kind }) else {
            throw kindNode.error("unknown control kind \"\(kind)\" (known: \(all.map(\.kind).joined(separator: ", ")))")
        }
        return try entry.make(node, id, today)
    }
}
