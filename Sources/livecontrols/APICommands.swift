import ArgumentParser
import LiveControlsCommandLine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LiveControlsProtocol
import Synchronization

/// Where the server API is, and the key for it.
struct APIFlags: ParsableArguments {
    @Option(help: "The server's HTTP address (its /api/v1/ is used).")
    var server = "http://127.0.0.1:8080"

    @Option(help: "The server's API key or an admin token (or set LIVECONTROLS_API_KEY).")
    var apiKey: String?

    @Option(help: "Seconds to wait for the server.")
    var timeout: Double = 10

    /// Sends one request and returns the status and the JSON body; exit status 2 when the server cannot be reached
    /// or does not answer in JSON.
    func call(_ method: String, _ path: String, body: JSONValue? = nil) throws -> (status: Int, body: JSONValue) {
        guard let key = apiKey ?? ProcessInfo.processInfo.environment["LIVECONTROLS_API_KEY"], !key.isEmpty else {
            throw ValidationError("the server API needs a key: --api-key or LIVECONTROLS_API_KEY")
        }
        let base = server.hasSuffix("/") ? String(server.dropLast()) : server
        guard let url = URL(string: base + "/api/v1" + path), url.scheme == "http" || url.scheme == "https" else {
            throw ValidationError("--server must be an http:// or https:// address, e.g. http://127.0.0.1:8080")
        }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(JSONWriter.encode(body))
        }
        let result = Mutex<Result<(Int, Data), any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: request) { data, response, error in
            let outcome: Result<(Int, Data), any Error>
            if let error {
                outcome = .failure(error)
            } else {
                outcome = .success(((response as? HTTPURLResponse)?.statusCode ?? 0, data ?? Data()))
            }
            result.withLock { $0 = outcome }
            done.signal()
        }.resume()
        done.wait()
        switch result.withLock({ $0 })! {
        case let .failure(error):
            fail("cannot reach \(base): \(error.localizedDescription)")
        case let .success((status, data)):
            guard let json = try? JSONParser.parse(Array(data)) else { fail("\(base) answered \(status) without JSON; is it a LiveControls server?") }
            return (status, json)
        }
    }

    func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("livecontrols: \(message)\n".utf8))
        Foundation.exit(2)
    }

    /// Prints a success's body to stdout, or a refusal's to stderr and exits 1.
    func finish(_ reply: (status: Int, body: JSONValue)) throws {
        guard (200..<300).contains(reply.status) else {
            FileHandle.standardError.write(Data("\(JSONWriter.string(reply.body))\n".utf8))
            throw ExitCode(1)
        }
        print(JSONWriter.string(reply.body))
    }
}

/// `livecontrols rooms`: the server's rooms.
struct Rooms: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the server's rooms (through the server API): name, template, version, members, loaded.",
        discussion: "Example: LIVECONTROLS_API_KEY=… livecontrols rooms --server http://127.0.0.1:8080"
    )

    @Flag(help: "Print the API's JSON instead of a table.") var json = false
    @OptionGroup var api: APIFlags

    func run() throws {
        let reply = try api.call("GET", "/rooms")
        guard !json, (200..<300).contains(reply.status), let rooms = reply.body["rooms"]?.arrayValue else { return try api.finish(reply) }
        let rows = [["ROOM", "TEMPLATE", "EPOCH", "VERSION", "MEMBERS", "LOADED"]] + rooms.map { room in
            [room["room"]?.stringValue ?? "", room["template"]?.stringValue ?? "", room["epoch"]?.stringValue ?? "",
             String(room["version"]?.intValue ?? 0), String(room["members"]?.intValue ?? 0), room["loaded"] == .bool(true) ? "yes" : "no"]
        }
        let widths = (0..<6).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            print(row.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  "))
        }
    }
}

/// `livecontrols state ROOM`: one room's document, version and members.
struct State: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print one room as JSON (through the server API): state, version, epoch, members.",
        discussion: "Exit status 1 when the server refuses (an unknown room, say), 2 when it cannot be reached."
    )

    @Argument(help: "Room name.") var room: String
    @OptionGroup var api: APIFlags

    func run() throws {
        guard ClientMessage.isValidName(room) else { throw ValidationError("ROOM must be 1–64 characters of A–Z a–z 0–9 _ - . :") }
        try api.finish(try api.call("GET", "/rooms/\(room)"))
    }
}

/// `livecontrols intent ROOM CONTROL INTENT [ARGS]`: one intent applied by the server.
struct Intent: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply one intent as the server (through the server API); print the room's new version.",
        discussion: #"Example: livecontrols intent demo quantity set '{"value": 5}' (exit status 1 with the error when refused)"#
    )

    @OptionGroup var target: IntentArguments
    @OptionGroup var api: APIFlags

    func run() throws {
        guard ClientMessage.isValidName(target.room) else { throw ValidationError("ROOM must be 1–64 characters of A–Z a–z 0–9 _ - . :") }
        var body: JSONObject = ["control": .string(target.control), "intent": .string(target.intent)]
        if let args = try target.parsedArgs() { body["args"] = .object(args) }
        try api.finish(try api.call("POST", "/rooms/\(target.room)/intents", body: .object(body)))
    }
}
