import LiveControlsProtocol

/// One message from the server: its `type` and its fields, parsed off the main actor.
struct Incoming: Sendable {
    let type: String
    let object: JSONObject

    subscript(key: String) -> JSONValue? { object[key] }

    /// The message in `text`, or nil when it is not a JSON object with a string `type`.
    nonisolated static func parse(_ text: String) async -> Incoming? {
        guard let object = (try? JSONParser.parse(text, maxDepth: 512))?.objectValue,
              let type = object["type"]?.stringValue else { return nil }
        return Incoming(type: type, object: object)
    }
}
