import Foundation
import LiveControlsProtocol

/// A protocol-v1 client of one room for scripts: join, follow patches, send intents.
public final class RoomClient {
    public let socket: WebSocketClient
    public let room: String
    public private(set) var session = ""
    public private(set) var epoch = ""
    public private(set) var version = 0
    public private(set) var state: JSONValue = .null
    private var nextID = 1

    /// Connects and reads `welcome`.
    public init(url: String, room: String, timeout: TimeInterval = 10) throws {
        self.socket = try WebSocketClient(url: url, timeout: timeout)
        self.room = room
        let welcome = try read(timeout: timeout)
        guard welcome["type"]?.stringValue == "welcome", let session = welcome["session"]?.stringValue else {
            throw ClientError("expected welcome, got \(JSONWriter.string(welcome))")
        }
        self.session = session
    }

    /// Sends `join`; returns the `snapshot` (or throws with the server's `error`).
    @discardableResult
    public func join(name: String? = nil, token: String? = nil, timeout: TimeInterval = 10) throws -> JSONValue {
        var join: JSONObject = ["type": "join", "room": .string(room)]
        if let name { join["name"] = .string(name) }
        if let token { join["token"] = .string(token) }
        try socket.send(text: JSONWriter.string(.object(join)))
        while true {
            let message = try read(timeout: timeout)
            switch message["type"]?.stringValue {
            case "snapshot": return message
            case "error": throw ClientError("join refused: \(message["code"]?.stringValue ?? "?"): \(message["message"]?.stringValue ?? "")")
            default: continue
            }
        }
    }

    /// Sends one intent and returns its `ack` or `error` message.
    public func send(control: String, intent: String, args: JSONObject?, timeout: TimeInterval = 10) throws -> JSONValue {
        let id = "cli-\(nextID)"
        nextID += 1
        var message: JSONObject = ["type": "intent", "id": .string(id), "room": .string(room), "control": .string(control), "intent": .string(intent)]
        if let args { message["args"] = .object(args) }
        try socket.send(text: JSONWriter.string(.object(message)))
        while true {
            let reply = try read(timeout: timeout)
            if reply["id"] == .string(id), ["ack", "error"].contains(reply["type"]?.stringValue ?? "") { return reply }
        }
    }

    /// Reads the next message, keeping the room document current (snapshot, patches with version checks).
    public func read(timeout: TimeInterval?) throws -> JSONValue {
        guard let text = try socket.receive(timeout: timeout) else {
            throw ClientError("the server closed the connection" + (socket.closeCode.map { " (code \($0))" } ?? ""))
        }
        let message: JSONValue
        do { message = try JSONParser.parse(text) } catch { throw ClientError("the server sent invalid JSON: \(error)") }
        switch message["type"]?.stringValue {
        case "snapshot" where message["room"]?.stringValue == room:
            epoch = message["epoch"]?.stringValue ?? ""
            version = message["version"]?.intValue ?? 0
            state = message["state"] ?? .null
        case "patch" where message["room"]?.stringValue == room:
            guard message["epoch"]?.stringValue == epoch, message["version"]?.intValue == version + 1 else {
                throw ClientError("version gap: at \(version), got \(message["version"].map(JSONWriter.string) ?? "?")")
            }
            let ops: [PatchOp]
            do {
                ops = try (message["ops"]?.arrayValue ?? []).map { try PatchOp(json: $0) }
                state = try state.applying(ops)
            } catch {
                throw ClientError("cannot apply patch \(version + 1): \(error)")
            }
            version += 1
        default:
            break
        }
        return message
    }
}
