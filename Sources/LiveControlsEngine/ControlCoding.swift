import LiveControlsProtocol

/// Stores controls by kind: each `StorableControl` converts itself to and from a `JSONValue`, kept as
/// JSON text (`JSONWriter`, read back with `JSONParser`) in the store. A kind that is not storable cannot be
/// restored exactly; its room then starts a new epoch after a restart.
public enum ControlCoding {
    /// Every storable kind, by its `kind` string.
    public static let storableKinds: [String: any StorableControl.Type] = {
        var kinds: [String: any StorableControl.Type] = [:]
        for type in ControlKinds.all {
            if let storable = type as? any StorableControl.Type { kinds[storable.kind] = storable }
        }
        return kinds
    }()

    public static func kind(of control: any Control) -> String { type(of: control).kind }

    /// The control's exact state, or nil when its kind is not storable.
    public static func storedState(of control: any Control) -> JSONValue? {
        guard let storable = control as? any StorableControl, storableKinds[kind(of: control)] != nil else { return nil }
        return storable.storedState
    }

    /// The control's exact state as JSON text, or nil when its kind is not storable.
    public static func encode(_ control: any Control) -> String? {
        storedState(of: control).map(JSONWriter.string)
    }

    /// Rebuilds a control of `kind` from its stored state; throws when the kind is not storable or the state
    /// does not fit it.
    public static func restore(kind: String, storedState: JSONValue) throws(StoredStateError) -> any Control {
        guard let type = storableKinds[kind] else { throw StoredStateError(path: "", message: "controls of kind \"\(kind)\" are not stored") }
        return try type.init(storedState: storedState)
    }

    /// Rebuilds a control of `kind` from the JSON text `encode` wrote (or an earlier release's `JSONEncoder`
    /// wrote: the shapes are the same).
    public static func restore(kind: String, state: String) throws(StoredStateError) -> any Control {
        let json: JSONValue
        do { json = try JSONParser.parse(state, maxDepth: storedStateMaxDepth) } catch { throw StoredStateError(path: "", message: "not JSON: \(error)") }
        return try restore(kind: kind, storedState: json)
    }

    /// How deep a stored state may nest: a value as deep as any message may carry, inside the state's own
    /// levels (a list item's value sits six levels down).
    public static let storedStateMaxDepth = JSONParser.defaultMaxDepth + 16

    /// What the config set for `control` (its stored state without the keys use changes), to tell whether a stored
    /// control was configured as its template configures it now; nil when its kind is not storable.
    public static func configuration(of control: any Control) -> JSONValue? {
        guard storableKinds[kind(of: control)] != nil, let storable = control as? any StorableControl,
              case let .object(state) = storable.storedState else { return nil }
        let changing = type(of: storable).stateKeys.union(storable.settingsResolvedAtCreation)
        var configured = storable.settingsInsideState
        for (key, value) in state where !changing.contains(key) { configured[key] = value }
        return .object(configured)
    }
}
