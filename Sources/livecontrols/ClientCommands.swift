import ArgumentParser
import Foundation
import LiveControlsClient
import LiveControlsProtocol

/// Where a client command connects, and as whom.
struct ConnectionFlags: ParsableArguments {
    @Option(help: "The server's WebSocket URL (ws:// only).")
    var url = "ws://127.0.0.1:8080/ws"

    @Option(help: "Access token for servers that require one (or set LIVECONTROLS_TOKEN).")
    var token: String?

    @Option(help: "Display name shown in presence.")
    var name: String?

    @Option(help: "Seconds to wait for the server.")
    var timeout: Double = 10

    var effectiveToken: String? { token ?? ProcessInfo.processInfo.environment["LIVECONTROLS_TOKEN"] }
}

/// `ROOM CONTROL INTENT [ARGS]`: one intent, as `send` (WebSocket) and `intent` (server API) take it.
struct IntentArguments: ParsableArguments {
    @Argument(help: "Room name.") var room: String
    @Argument(help: "Control id, e.g. quantity.") var control: String
    @Argument(help: "Intent, e.g. next, set, press.") var intent: String
    @Argument(help: "Arguments as a JSON object, e.g. '{\"value\": 5}'.") var args: String?

    /// ARGS as an object (nil when not given).
    func parsedArgs() throws -> JSONObject? {
        guard let args else { return nil }
        guard let object = (try? JSONParser.parse(args))?.objectValue else {
            throw ValidationError("ARGS must be a JSON object, e.g. '{\"value\": 5}'")
        }
        return object
    }
}

/// `livecontrols send ROOM CONTROL INTENT [ARGS]`: one intent; prints the ack or error; exit 0 on ack.
struct Send: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send one intent and print the server's ack or error (exit status 0 on ack, 1 on error).",
        discussion: #"Example: livecontrols send demo quantity set '{"value": 5}'"#
    )

    @OptionGroup var target: IntentArguments
    @OptionGroup var connection: ConnectionFlags

    func run() throws {
        let parsedArgs = try target.parsedArgs()
        do {
            let client = try RoomClient(url: connection.url, room: target.room, timeout: connection.timeout)
            try client.join(name: connection.name, token: connection.effectiveToken, timeout: connection.timeout)
            let reply = try client.send(control: target.control, intent: target.intent, args: parsedArgs, timeout: connection.timeout)
            print(JSONWriter.string(reply))
            client.socket.close()
            if reply["type"]?.stringValue != "ack" { throw ExitCode(1) }
        } catch let error as ClientError {
            FileHandle.standardError.write(Data("livecontrols: \(error)\n".utf8))
            throw ExitCode(2)
        }
    }
}

/// `livecontrols watch ROOM`: prints the snapshot and every patch (or the live state) as JSON lines.
struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Join a room and print its snapshot and each patch as JSON lines, until interrupted.",
        discussion: "With --state, print the whole room state after each change instead."
    )

    @Argument(help: "Room name.") var room: String
    @Flag(help: "Print the whole state (one JSON line per version) instead of the messages.") var state = false
    @Option(help: "Stop after this many patches (for scripts).") var count: Int?
    @OptionGroup var connection: ConnectionFlags

    func run() throws {
        do {
            let client = try RoomClient(url: connection.url, room: room, timeout: connection.timeout)
            let snapshot = try client.join(name: connection.name, token: connection.effectiveToken, timeout: connection.timeout)
            emit(state ? client.state : snapshot, version: client.version)
            var seen = 0
            while count.map({ seen < $0 }) ?? true {
                let message = try client.read(timeout: nil)
                switch message["type"]?.stringValue {
                case "patch", "snapshot":
                    if message["type"]?.stringValue == "patch" { seen += 1 }
                    emit(state ? client.state : message, version: client.version)
                case "error":
                    emit(message, version: client.version)
                    if message["code"] == "unavailable", message["room"]?.stringValue == room, message["id"] == nil {
                        // The room stopped on the server (saving a change failed): join it again, as the web client
                        // does; it loads from the server's store.
                        let again = try rejoin(client)
                        emit(state ? client.state : again, version: client.version)
                    }
                default:
                    continue
                }
            }
            client.socket.close()
        } catch let error as ClientError {
            FileHandle.standardError.write(Data("livecontrols: \(error)\n".utf8))
            throw ExitCode(2)
        }
    }

    /// Joins again after the room stopped, with backoff (250 ms doubling to 4 s) while the server still answers
    /// `unavailable`; the snapshot, or the last refusal after ten tries.
    private func rejoin(_ client: RoomClient) throws -> JSONValue {
        var delay = 0.25
        for attempt in 1...10 {
            Thread.sleep(forTimeInterval: delay)
            do {
                return try client.join(name: connection.name, token: connection.effectiveToken, timeout: connection.timeout)
            } catch let error as ClientError where attempt < 10 && "\(error)".contains("unavailable") {
                delay = min(4, delay * 2)
            }
        }
        throw ClientError("room \(room) could not be joined again")
    }

    private func emit(_ value: JSONValue, version: Int) {
        if state {
            print(JSONWriter.string(["version": .int(version), "state": value]))
        } else {
            print(JSONWriter.string(value))
        }
        fflush(nil)
    }
}
