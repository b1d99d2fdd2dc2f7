import LiveControlsProtocol

/// The control kinds a template may use, by their `kind` string. This list is the one place a kind is named: a new
/// kind is its engine file (a `ConfigurableControl`, and a `StorableControl` to survive restarts) added here, plus its
/// view on the page and its schemas (docs/asyncapi.yaml, docs/openapi.yaml).
public enum ControlKinds {
    public static let all: [any ConfigurableControl.Type] = [Stepper.self, ListStepper.self, Wizard.self, Form.self, Pager.self, Toggle.self, SharedTimer.self, Fader.self, Poll.self, SharedText.self]

    /// Reads one control from its template entry (its `kind` picks the type); `today` is the date the config is read on.
    public static func make(_ node: ConfigNode, id: ControlID, today: CivilDate) throws(ConfigError) -> any Control {
        _ = try node.object()
        guard let kindNode = node["kind"] else { throw node.error(at: "kind", "required string is missing") }
        guard let kind = kindNode.value.stringValue else { throw kindNode.error("expected a string, got \(kindNode.value.typeName)") }
        guard let type = all.first(where: { $0.kind == kind }) else {
            throw kindNode.error("unknown control kind \"\(kind)\" (known: \(all.map { $0.kind }.joined(separator: ", ")))")
        }
        return try type.init(config: node, id: id, today: today)
    }
    // (Kinds are named with `{ $0.kind }`, not `\.kind`: Swift 6.3 crashes generating SIL for a key path to a static
    // property through an existential metatype.)
}

/// A control a template configures: read from its entry in the config, with errors by JSON Pointer.
public protocol ConfigurableControl: Control {
    /// Reads the control from its template entry; `today` is the date the config is read on (a pager's bounds).
    init(config node: ConfigNode, id: ControlID, today: CivilDate) throws(ConfigError)
}

extension Stepper: ConfigurableControl {
    public init(config node: ConfigNode, id: ControlID, today: CivilDate) throws(ConfigError) { try self.init(config: node, id: id) }
}
extension ListStepper: ConfigurableControl {
    public init(config node: ConfigNode, id: ControlID, today: CivilDate) throws(ConfigError) { try self.init(config: node, id: id) }
}
extension Wizard: ConfigurableControl {
    public init(config node: ConfigNode, id: ControlID, today: CivilDate) throws(ConfigError) { try self.init(config: node, id: id) }
}
extension Form: ConfigurableControl {
    public init(config node: ConfigNode, id: ControlID, today: CivilDate) throws(ConfigError) { try self.init(config: node, id: id) }
}
extension Pager: ConfigurableControl {}
