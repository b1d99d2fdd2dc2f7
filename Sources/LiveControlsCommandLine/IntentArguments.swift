import ArgumentParser
import LiveControlsProtocol

/// `ROOM CONTROL INTENT [ARGS]`: one intent named on the command line, as `livecontrols intent` (the server API) and
/// `livecontrols-client send` (a WebSocket client) take it.
public struct IntentArguments: ParsableArguments, Sendable {
    public init() {}
    @Argument(help: "Room name.") public var room: String
    @Argument(help: "Control id, e.g. quantity.") public var control: String
    @Argument(help: "Intent, e.g. next, set, press.") public var intent: String
    @Argument(help: "Arguments as a JSON object, e.g. '{\"value\": 5}'.") public var args: String?

    /// ARGS as an object (nil when not given).
    public func parsedArgs() throws -> JSONObject? {
        guard let args else { return nil }
        guard let object = (try? JSONParser.parse(args))?.objectValue else {
            throw ValidationError("ARGS must be a JSON object, e.g. '{\"value\": 5}'")
        }
        return object
    }
}
