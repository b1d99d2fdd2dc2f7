import LiveControlsProtocol

/// A shared plain text — a note, a wrap-up — that several people type into at once.
///
/// State: `lines` (the text split at each `\n`; a patch replaces only the lines an edit touched) and `rev`, the number
/// of edits applied. `splice {at, delete, insert, base}` edits the text as it was at revision `base` (offsets in Unicode
/// scalar values): the server transforms it against the edits applied since (`TextOperation.transform`, operational
/// transformation on a central server as in ot.js), so concurrent typists all keep their text and everyone converges.
/// The edit as applied is in the patch's `cause.splices`. `set {text}` replaces the text (as the smallest splice).
public struct SharedText: ConfigurableControl {
    public static let kind = "text"
    public static let intents = ["splice", "set"]
    /// The largest `maxLength`.
    public static let maxLengthLimit = 100_000
    /// How many applied edits are kept (at most; fewer when they inserted more than four times `maxLength`) to transform
    /// late splices against: a splice made on an older revision is refused (`conflict`: take the text again).
    public static let logLimit = 256

    public var label: String
    /// The most scalars the text may hold.
    public let maxLength: Int
    public internal(set) var text: [Unicode.Scalar]
    /// Edits applied so far.
    public internal(set) var rev = 0
    /// The last edits applied (at most `logLimit`), oldest first: the one at index i made revision `rev - log.count + i + 1`.
    var log: [TextOperation] = []

    public init(label: String, text: String = "", maxLength: Int = 10_000) {
        precondition((1...Self.maxLengthLimit).contains(maxLength))
        self.label = label
        self.maxLength = maxLength
        self.text = Array(text.unicodeScalars)
    }

    public var string: String { String(String.UnicodeScalarView(text)) }

    public func render() -> JSONValue {
        .object(JSONObject(pairs: [
            ("kind", .string(Self.kind)), ("label", .string(label)), ("maxLength", .int(maxLength)), ("rev", .int(rev)),
            ("lines", .array(string.split(separator: "\n", omittingEmptySubsequences: false).map { .string(String($0)) })),
        ]))
    }

    public var stateBytes: Int {
        128 + text.count * 2 + log.reduce(0) { total, op in
            total + 16 + op.components.reduce(0) { if case let .insert(s) = $1 { $0 + s.count * 2 } else { $0 + 8 } }
        }
    }

    public mutating func apply(_ intent: String, args: IntentArgs, by session: SessionID, at now: Instant, room: RoomView) throws(IntentError) -> ControlEvents {
        let op: TextOperation
        switch intent {
        case "splice":
            let at = try args.int("at"), base = try args.int("base")
            let delete = args.object["delete"] == nil || args.object["delete"] == .null ? 0 : try args.int("delete")
            let insert = Array((try args.optionalString("insert") ?? "").unicodeScalars)
            guard base <= rev else { throw IntentError(.outOfRange, "base \(base) is ahead of \(label)'s revision \(rev)") }
            guard base >= rev - log.count, base >= 0 else {
                throw IntentError(.conflict, "\(label) keeps its last \(Self.logLimit) edits; base \(base) is older (it is at \(rev)): take the text again and redo the edit")
            }
            let concurrent = log[(log.count - (rev - base))...]
            let length = concurrent.first?.baseLength ?? text.count
            // (No `at + delete`: a client's integers go to 2^63 − 1, and an overflow would stop the server.)
            guard at >= 0, delete >= 0, at <= length, delete <= length - at else {
                throw IntentError(.outOfRange, "at \(at) and delete \(delete) do not fit revision \(base)'s \(length) scalars")
            }
            guard insert.count <= maxLength else { throw IntentError(.tooLarge, "\(label) holds at most \(maxLength) characters") }
            var transformed = TextOperation(length: length, at: at, delete: delete, insert: insert)
            for applied in concurrent { transformed = TextOperation.transform(transformed, applied).0 }
            op = transformed
        case "set":
            let new = Array(try args.string("text").unicodeScalars)
            guard new.count <= maxLength else { throw IntentError(.tooLarge, "\(label) holds at most \(maxLength) characters") }
            op = Self.smallestEdit(from: text, to: new)
        default:
            throw Self.unknownIntent(intent, known: Self.intents)
        }
        guard !op.isNoop else { return .none }
        guard op.targetLength <= maxLength || op.targetLength <= op.baseLength else {
            throw IntentError(.tooLarge, "\(label) would hold \(op.targetLength) characters, over its maxLength of \(maxLength)")
        }
        text = op.apply(to: text)
        rev += 1
        log.append(op)
        trimLog()
        var events = ControlEvents()
        events.detail = ["splices": .array(op.splices.map { ["at": .int($0.at), "delete": .int($0.delete), "insert": .string(String(String.UnicodeScalarView($0.insert)))] })]
        return events
    }

    /// A reset to the template is one more edit: revisions go on, and a splice made before it is transformed against it.
    public mutating func succeed(_ previous: any Control) {
        guard let previous = previous as? SharedText else { return }
        let reset = Self.smallestEdit(from: previous.text, to: text)
        log = previous.log
        rev = previous.rev
        guard !reset.isNoop else { return }  // (the text is the template's already: no edit, no change)
        rev += 1
        log.append(reset)
        trimLog()
    }

    /// Keeps at most `logLimit` edits, and no more text in them than four times `maxLength` (at least 4,096 scalars): a
    /// few large pastes do not fill the room's state budget, and a splice older than what is kept gets `conflict`.
    mutating func trimLog() {
        if log.count > Self.logLimit { log.removeFirst(log.count - Self.logLimit) }
        let budget = max(4 * maxLength, 4_096)
        var kept = 0, from = log.count
        while from > 0 {
            let size = log[from - 1].insertedCount
            if kept + size > budget && from < log.count { break }
            kept += size
            from -= 1
        }
        if from > 0 { log.removeFirst(from) }
    }

    /// The edit from `old` to `new` as one splice over what differs between their common start and end.
    static func smallestEdit(from old: [Unicode.Scalar], to new: [Unicode.Scalar]) -> TextOperation {
        var start = 0
        while start < old.count, start < new.count, old[start] == new[start] { start += 1 }
        var end = 0
        while end < old.count - start, end < new.count - start, old[old.count - 1 - end] == new[new.count - 1 - end] { end += 1 }
        return TextOperation(length: old.count, at: start, delete: old.count - start - end, insert: Array(new[start..<(new.count - end)]))
    }
}
