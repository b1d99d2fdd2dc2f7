import LiveControlsProtocol

/// Undo of a text edit: the inverse of the edit as it was applied (the log's edits of the change, composed), transformed
/// against the edits made since (as a late splice is), so what others typed elsewhere stays. Refused (`conflict`) when an
/// edit since touched what the undo would change: typed inside a span it takes out or deleted some of it, or deleted
/// across a place where its text comes back.
extension SharedText: UndoableControl {
    public static let undoableIntents: Set<String> = ["splice", "set"]
    public static let undoableKeys = ["text"]

    public func reverting(_ before: SharedText, _ after: SharedText) throws(UndoConflict) -> (control: SharedText, detail: JSONObject?) {
        var undo = Self.appliedEdit(from: before, to: after).inverted(base: before.text)
        let since = rev - after.rev
        guard since >= 0, since <= log.count else {
            throw UndoConflict(path: [], "edited \(since) times since (\(label) keeps its last \(log.count) edits to place an undo among)")
        }
        // What the undo changes, in the text as each edit since found it: spans it deletes, places it inserts at (empty).
        var spans = undo.changedSpans
        for (k, applied) in log[(log.count - since)...].enumerated() {
            let revision = after.rev + k + 1
            for i in spans.indices {
                var position = 0, shift = 0
                let (lo, hi) = spans[i]
                for component in applied.components {
                    switch component {
                    case let .retain(n):
                        position += n
                    case let .insert(s):
                        if position > lo && position < hi { throw UndoConflict(path: [], "typed into since", revision: revision) }
                        if position < lo || (position == lo && lo < hi) { shift += s.count }
                    case let .delete(n):
                        let end = position + n
                        if lo < hi ? (position < hi && end > lo) : (position < lo && end > lo) {
                            throw UndoConflict(path: [], "deleted since", revision: revision)
                        }
                        if end <= lo { shift -= n }
                        position = end
                    }
                }
                spans[i] = (lo + shift, hi + shift)
            }
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

    /// The edit that made `after` of `before`: the log's edits since `before`'s revision, composed (a run of typing is
    /// several); the smallest edit between the two texts when the log no longer has them.
    static func appliedEdit(from before: SharedText, to after: SharedText) -> TextOperation {
        let count = after.rev - before.rev
        if count >= 1, count <= after.log.count {
            var edit = after.log[after.log.count - count]
            for next in after.log[(after.log.count - count + 1)...] { edit = edit.composedForStorage(with: next) }
            if edit.baseLength == before.text.count, edit.targetLength == after.text.count { return edit }
        }
        return smallestEdit(from: before.text, to: after.text)
    }

    public func undoRefusal(becoming result: SharedText, in room: RoomView) -> IntentError? {
        guard result.text.count > maxLength, result.text.count > text.count else { return nil }
        return IntentError(.tooLarge, "\(label) would hold \(result.text.count) characters, over its maxLength of \(maxLength)")
    }
}

extension TextOperation {
    /// The edit that takes what this one made of `base` back to `base`.
    func inverted(base: [Unicode.Scalar]) -> TextOperation {
        var inverse = TextOperation()
        var index = 0
        for component in components {
            switch component {
            case let .retain(n):
                inverse.retain(n)
                index += n
            case let .insert(s):
                inverse.delete(s.count)
            case let .delete(n):
                inverse.insert(Array(base[index..<(index + n)]))
                index += n
            }
        }
        return inverse
    }

    /// The spans of its base it deletes, and the places it inserts at (empty spans), in order.
    var changedSpans: [(Int, Int)] {
        var spans: [(Int, Int)] = []
        var position = 0
        for component in components {
            switch component {
            case let .retain(n): position += n
            case .insert: spans.append((position, position))
            case let .delete(n):
                spans.append((position, position + n))
                position += n
            }
        }
        return spans
    }
}
