import LiveControlsProtocol

/// What the store has of one control: the stored state as of its last full write plus the deltas written since.
struct StoredBaseline: Sendable {
    var state: JSONValue
    /// The size of the last full write, and of the deltas written after it (bytes of JSON), and how many.
    var fullBytes: Int
    var deltaBytes = 0
    var deltas = 0
}

/// A durable change costs what it changes (issue #40). A store that takes deltas (`RoomStore.takesControlDeltas`) gets,
/// for a control it has a full state of, the operations from what it has to what the control is now
/// (`StoredStateDiff`: exact, found by identity), stored after that state and replayed onto it when the room is
/// loaded. A list's step in a 3 MB room writes a few bytes, an append the item, not the list. Once a control's deltas
/// outgrow its last full state (or number `maxDeltas`), its full state is written again and its deltas dropped: the
/// bytes written stay within twice what changed, a load replays at most the state's size again. After a load a control
/// is written whole the first time (the room does not know how far the store's deltas go).
extension Room {
    /// Deltas after one full state, at most.
    static let maxDeltas = 256
    /// Deltas may together take at least this many bytes before a full write, whatever the state's size.
    static let minDeltaBytes = 4_096

    mutating func storeControls(_ ids: [ControlID], into write: inout StoreWrite) {
        for id in ids {
            guard let object = storedObject(id) else { continue }
            let state = JSONValue.object(object)
            let kind = ControlCoding.kind(of: controls[id]!)
            if var baseline = storedBaselines[id] {
                let ops = StoredStateDiff.diff(from: baseline.state, to: state)
                if ops.isEmpty { continue }
                let text = JSONWriter.string(.array(ops.map(\.json)))
                let bytes = text.utf8.count
                if baseline.deltas < Self.maxDeltas, baseline.deltaBytes + bytes <= max(baseline.fullBytes, Self.minDeltaBytes) {
                    baseline.state = state
                    baseline.deltas += 1
                    baseline.deltaBytes += bytes
                    storedBaselines[id] = baseline
                    write.controlDeltas.append((id, kind, baseline.deltas, text))
                    continue
                }
            }
            let text = JSONWriter.string(state)
            storedBaselines[id] = StoredBaseline(state: state, fullBytes: text.utf8.count)
            write.controls.append((id, kind, text))
        }
    }
}

extension StoredRoom {
    /// A store's deltas of its controls (`StoreWrite.controlDeltas`: each control's operations numbered from 1 after
    /// its full state), applied in order onto the full states `controls` holds: each control's state at the room's
    /// version. Deltas of a control with no full state are ignored (it is no longer stored). A control whose deltas do
    /// not apply is left out, as a control that cannot be decoded: the room then starts a new epoch from its template
    /// (`Room.init(restoring:)`), as it does for any stored state it cannot read. Returns what was left out, and why.
    @discardableResult
    public static func replay(_ deltas: [(id: ControlID, seq: Int, ops: String)], onto controls: inout [ControlID: String]) -> [ControlID: String] {
        var current: [ControlID: JSONValue] = [:]
        var failed: [ControlID: String] = [:]
        for (id, _, ops) in deltas.sorted(by: { ($0.id.rawValue, $0.seq) < ($1.id.rawValue, $1.seq) }) {
            guard let state = controls[id], failed[id] == nil else { continue }
            do {
                let base = try current[id] ?? JSONParser.parse(state, maxDepth: ControlCoding.storedStateMaxDepth)
                let operations = try (JSONParser.parse(ops, maxDepth: ControlCoding.storedStateMaxDepth).arrayValue ?? []).map { try PatchOp(json: $0) }
                current[id] = try base.applying(operations)
            } catch {
                failed[id] = "a stored change does not apply to its stored state (\(error))"
                current[id] = nil
            }
        }
        for (id, state) in current { controls[id] = JSONWriter.string(state) }
        for id in failed.keys { controls[id] = nil }
        return failed
    }
}
