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
