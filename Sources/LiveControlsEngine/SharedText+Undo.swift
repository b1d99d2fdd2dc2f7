import LiveControlsProtocol

/// Undo of a text edit: the inverse splice, transformed against the edits made since (as a late splice is), so what
/// others typed elsewhere stays. Refused (`conflict`) when an edit since touched what the undo would change: typed
/// inside the inserted text or deleted some of it (or, for a deletion, deleted across where its text would come back).
extension SharedText: UndoableControl {
    public static let undoableIntents: Set<String> = ["splice", "set"]
    public static let undoableKeys = ["text"]

    public func reverting(_ before: SharedText, _ after: SharedText) throws(UndoConflict) -> (control: SharedText, detail: JSONObject?) {
        let change = Self.smallestEdit(from: before.text, to: after.text)
        guard let splice = change.splices.first else { return (self, nil) }
        let inserted = splice.insert.count
        var undo = TextOperation(length: after.text.count, at: splice.at, delete: inserted,
                                 insert: Array(before.text[splice.at..<(splice.at + splice.delete)]))
        let since = rev - after.rev
        guard since >= 0, since <= log.count else {
            throw UndoConflict(path: [], "edited \(since) times since (\(label) keeps its last \(log.count) edits to place an undo among)")
        }
        // [lo, hi): what the undo deletes (the change's insert), or where its text comes back (lo == hi), in the text as
        // each edit since found it.
        var lo = splice.at, hi = splice.at + inserted
        for applied in log[(log.count - since)...] {
            var position = 0, shift = 0
            for component in applied.components {
                switch component {
                case let .retain(n):
                    position += n
                case let .insert(s):
                    if position > lo && position < hi { throw UndoConflict(path: [], "typed into since") }
                    if position < lo || (position == lo && lo < hi) { shift += s.count }
                case let .delete(n):
                    let end = position + n
                    if lo < hi ? (position < hi && end > lo) : (position < lo && end > lo) { throw UndoConflict(path: [], "deleted since") }
                    if end <= lo { shift -= n }
                    position = end
                }
            }
            lo += shift
            hi += shift
            undo = TextOperation.transform(undo, applied).0
        }
        var result = self
        guard !undo.isNoop else { return (result, nil) }
        result.text = undo.apply(to: text)
        result.rev += 1
        result.log.append(undo)
        result.trimLog()
        let splices: JSONValue = .array(undo.splices.map { ["at": .int($0.at), "delete": .int($0.delete), "insert": .string(String(String.UnicodeScalarView($0.insert)))] })
        return (result, ["splices": splices])
    }

    public func undoRefusal(becoming result: SharedText, in room: RoomView) -> IntentError? {
        guard result.text.count > maxLength, result.text.count > text.count else { return nil }
        return IntentError(.tooLarge, "\(label) would hold \(result.text.count) characters, over its maxLength of \(maxLength)")
    }
}
