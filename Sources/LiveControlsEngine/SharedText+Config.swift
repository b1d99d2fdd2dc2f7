import LiveControlsProtocol

extension SharedText {
    /// Reads a text from its template entry: `text` (where it starts), `maxLength`.
    public init(config node: ConfigNode, id: ControlID, today: CivilDate) throws(ConfigError) {
        _ = try node.object(allowed: ["kind", "label", "text", "maxLength"])
        let maxLength = try node.int("maxLength", default: 10_000)
        guard (1...Self.maxLengthLimit).contains(maxLength) else { throw node.error(at: "maxLength", "must be 1…\(Self.maxLengthLimit) (characters)") }
        let text = try node.string("text", default: "")
        guard text.unicodeScalars.count <= maxLength else { throw node.error(at: "text", "is longer than maxLength (\(maxLength))") }
        self.init(label: try node.string("label", default: id.rawValue), text: text, maxLength: maxLength)
    }
}
