/// A shared plain text (kind `text`) that several people type into at once. ``splice(at:delete:insert:base:)`` edits
/// the text as it was at revision `base` (offsets in Unicode scalar values); the server transforms it against the edits
/// applied since and says the edit as applied in the patch's `cause.splices` (``RoomEvent/cause``), from which a client
/// keeping edits of its own transforms them (docs/PROTOCOL.md, *text*; `web/ot.js` is such a client).
@MainActor
public struct TextControl: ControlView {
    public static let kind = "text"
    public let control: LiveControl
    public init(unchecked control: LiveControl) { self.control = control }

    /// The text: `lines` joined with a newline.
    public var text: String { lines.joined(separator: "\n") }
    public var lines: [String] { json["lines"]?.arrayValue?.compactMap(\.stringValue) ?? [""] }
    /// How many edits it has had: the `base` of a splice made on this text.
    public var rev: Int { json["rev"]?.intValue ?? 0 }
    /// The most Unicode scalar values it holds.
    public var maxLength: Int { json["maxLength"]?.intValue ?? 0 }

    /// Deletes `delete` scalars at `at` and inserts `insert`, in the text at revision `base` (default: ``rev``, the text
    /// as this client has it). Throws `out_of_range`, `conflict` (a base older than the edits the server keeps),
    /// `too_large`.
    @discardableResult public func splice(at: Int, delete: Int = 0, insert: String = "", base: Int? = nil) async throws -> Int {
        try await control.send("splice", ["at": .int(at), "delete": .int(delete), "insert": .string(insert), "base": .int(base ?? rev)])
    }
    /// Replaces the whole text.
    @discardableResult public func set(_ text: String) async throws -> Int { try await control.send("set", ["text": .string(text)]) }
}

extension Room {
    public func text(_ id: String) -> TextControl? { control(id, as: TextControl.self) }
}
