import LiveControlsProtocol

extension SharedText: StorableControl {
    public static let stateKeys: Set<String> = ["text", "rev", "log"]

    /// `{label, maxLength, text, rev, log: [{length, splices: [[at, delete, insert]]}]}`: the recent edits, so a splice
    /// made before a restart is still transformed against what came after it.
    public var storedState: JSONValue {
        [
            "label": .string(label), "maxLength": .int(maxLength), "text": .string(string), "rev": .int(rev),
            "log": .array(log.map { op in
                ["length": .int(op.baseLength),
                 "splices": .array(op.splices.map { [.int($0.at), .int($0.delete), .string(String(String.UnicodeScalarView($0.insert)))] })]
            }),
        ]
    }

    public init(storedState: JSONValue) throws(StoredStateError) {
        let s = StoredValue(storedState)
        let maxLength = try s.int("maxLength")
        guard (1...Self.maxLengthLimit).contains(maxLength) else { throw s.error("maxLength \(maxLength) is outside 1…\(Self.maxLengthLimit)") }
        self.init(label: try s.string("label"), text: try s.string("text"), maxLength: maxLength)
        rev = try s.int("rev")
        var log: [TextOperation] = []
        for entry in try s.array("log") {
            // An edit is rebuilt from its splices, applied one after another to a text of `length`.
            var length = try entry.int("length")
            let baseLength = length
            var op = TextOperation()
            op.retain(length)
            for splice in try entry.array("splices") {
                let parts = try splice.array()
                guard parts.count == 3 else { throw splice.error("a splice is [at, delete, insert]") }
                let at = try parts[0].int(), delete = try parts[1].int(), insert = Array(try parts[2].string().unicodeScalars)
                guard at >= 0, delete >= 0, at <= length, delete <= length - at else { throw splice.error("a splice past the text") }
                op = op.composedForStorage(with: TextOperation(length: length, at: at, delete: delete, insert: insert))
                length += insert.count - delete
            }
            guard op.baseLength == baseLength else { throw entry.error("an edit that does not fit its length") }
            log.append(op)
        }
        guard rev >= log.count, log.count <= Self.logLimit, text.count <= maxLength else { throw s.error("rev, log and text do not fit together") }
        if let last = log.last, last.targetLength != text.count { throw s.error("the last edit does not make the text") }
        // Each edit applies to what the one before made (a late splice is transformed through all of them).
        for i in log.indices.dropFirst() where log[i - 1].targetLength != log[i].baseLength {
            throw s.error("edit \(i) of the log does not follow the one before")
        }
        self.log = log
    }
}

extension TextOperation {
    /// `self` then `next` (an edit of what `self` makes) as one edit; for rebuilding stored edits from their splices.
    func composedForStorage(with next: TextOperation) -> TextOperation {
        precondition(targetLength == next.baseLength)
        var result = TextOperation()
        var i = 0, j = 0
        var a: Component? = components.first, b: Component? = next.components.first
        func nextA() { i += 1; a = i < components.count ? components[i] : nil }
        func nextB() { j += 1; b = j < next.components.count ? next.components[j] : nil }
        while a != nil || b != nil {
            if case let .delete(n)? = a { result.delete(n); nextA(); continue }
            if case let .insert(s)? = b { result.insert(s); nextB(); continue }
            guard let x = a, let y = b else { preconditionFailure("compose of edits that do not fit") }
            switch (x, y) {
            case let (.retain(n), .retain(m)):
                result.retain(min(n, m))
                if n > m { a = .retain(n - m); nextB() } else if n < m { b = .retain(m - n); nextA() } else { nextA(); nextB() }
            case let (.insert(s), .delete(m)):
                if s.count > m { a = .insert(Array(s[m...])); nextB() } else if s.count < m { b = .delete(m - s.count); nextA() } else { nextA(); nextB() }
            case let (.insert(s), .retain(m)):
                if s.count > m { result.insert(Array(s[..<m])); a = .insert(Array(s[m...])); nextB() }
                else { result.insert(s); if s.count < m { b = .retain(m - s.count); nextA() } else { nextA(); nextB() } }
            case let (.retain(n), .delete(m)):
                result.delete(min(n, m))
                if n > m { a = .retain(n - m); nextB() } else if n < m { b = .delete(m - n); nextA() } else { nextA(); nextB() }
            default:
                preconditionFailure("deletes and inserts were taken above")
            }
        }
        return result
    }
}
