import LiveControlsEngine
import LiveControlsProtocol
import LiveControlsRuntime

/// One server API request, from its method and path (`/api/v1/…`). Pure: no lws, tested on its own.
enum APIRoute: Equatable {
    case listRooms
    case createRoom
    case getRoom(String)
    case deleteRoom(String)
    case applyIntents(String)
    case resetRoom(String)
    case broadcast(String)
    case members(String)
    case disconnect(room: String, session: String)
    case patches(String)
    case webhooks
    case failedWebhooks
    case retryWebhook(String)
    case nodes

    /// The room the request is about, if any.
    var room: String? {
        switch self {
        case .listRooms, .createRoom, .webhooks, .failedWebhooks, .retryWebhook, .nodes: return nil
        case let .getRoom(r), let .deleteRoom(r), let .applyIntents(r), let .resetRoom(r), let .members(r), let .patches(r),
             let .broadcast(r): return r
        case let .disconnect(room, _): return room
        }
    }

    /// Whether the request carries a JSON body to read before it is handled.
    var takesBody: Bool {
        switch self {
        case .createRoom, .applyIntents, .broadcast: return true
        default: return false
        }
    }

    static let prefix = "/api/v1"

    /// Whether `path` is under the `/api` mount (the API answers it, in JSON, even where it has no route).
    static func isAPIPath(_ path: String) -> Bool {
        path == "/api" || path.hasPrefix("/api/")
    }

    /// 1–64 ASCII letters and digits, or characters of `extra`: an event or session id.
    private static func isIdentifier(_ text: String, alsoAllowing extra: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 64 && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || extra.contains($0)) }
    }

    /// The route for `method` and `path` (the path without its query), or the HTTP error: 404 `not_found` for a
    /// path the API does not have, 405 `method_not_allowed` (with the methods it does take), 400 for a room name,
    /// session id or event id that cannot exist.
    static func match(method: String, path: String) -> Result<APIRoute, APIError> {
        guard path == prefix || path.hasPrefix(prefix + "/") else { return .failure(.notFound(path)) }
        let parts = path.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        func pick(_ allowed: [(String, APIRoute)]) -> Result<APIRoute, APIError> {
            if let route = allowed.first(where: { $0.0 == method })?.1 { return .success(route) }
            return .failure(.methodNotAllowed(allowed.map(\.0)))
        }
        func room(_ name: String) -> APIError? {
            ClientMessage.isValidName(name) ? nil
                : APIError(status: 400, ProtocolError(.invalidMessage, "a room name is 1–64 characters of A–Z a–z 0–9 _ - . :"))
        }
        switch parts.count {
        case 1 where parts[0] == "webhooks":
            return pick([("GET", .webhooks)])
        case 1 where parts[0] == "nodes":
            return pick([("GET", .nodes)])
        case 2 where parts[0] == "webhooks" && parts[1] == "failed":
            return pick([("GET", .failedWebhooks)])
        case 4 where parts[0] == "webhooks" && parts[1] == "failed" && parts[3] == "retry":
            guard isIdentifier(parts[2], alsoAllowing: "_") else {
                return .failure(APIError(status: 400, ProtocolError(.invalidMessage, "an event id is 1–64 characters of A–Z a–z 0–9 _")))
            }
            return pick([("POST", .retryWebhook(parts[2]))])
        case 1 where parts[0] == "rooms":
            return pick([("GET", .listRooms), ("POST", .createRoom)])
        case 2 where parts[0] == "rooms":
            if let error = room(parts[1]) { return .failure(error) }
            return pick([("GET", .getRoom(parts[1])), ("DELETE", .deleteRoom(parts[1]))])
        case 3 where parts[0] == "rooms":
            if let error = room(parts[1]) { return .failure(error) }
            switch parts[2] {
            case "intents": return pick([("POST", .applyIntents(parts[1]))])
            case "reset": return pick([("POST", .resetRoom(parts[1]))])
            case "broadcast": return pick([("POST", .broadcast(parts[1]))])
            case "members": return pick([("GET", .members(parts[1]))])
            case "patches": return pick([("GET", .patches(parts[1]))])
            default: return .failure(.notFound(path))
            }
        case 4 where parts[0] == "rooms" && parts[2] == "members":
            if let error = room(parts[1]) { return .failure(error) }
            guard isIdentifier(parts[3], alsoAllowing: "_-") else {
                return .failure(APIError(status: 400, ProtocolError(.invalidMessage, "a session id is 1–64 characters of A–Z a–z 0–9 _ -")))
            }
            return pick([("DELETE", .disconnect(room: parts[1], session: parts[3]))])
        default:
            return .failure(.notFound(path))
        }
    }
}

/// A refused API request: its HTTP status and the protocol error (plus, for a list of intents, which one).
struct APIError: Error, Equatable {
    var status: Int
    var error: ProtocolError
    var index: Int? = nil
    /// For 405: the methods the path takes (`Allow`).
    var allow: [String] = []

    init(status: Int, _ error: ProtocolError, index: Int? = nil) {
        self.status = status
        self.error = error
        self.index = index
    }

    static func notFound(_ path: String) -> APIError {
        APIError(status: 404, ProtocolError(.notFound, "no API route \(path) (see docs/openapi.yaml)"))
    }

    static func methodNotAllowed(_ allowed: [String]) -> APIError {
        var error = APIError(status: 405, ProtocolError(.methodNotAllowed, "this path takes \(allowed.joined(separator: ", "))"))
        error.allow = allowed
        return error
    }

    static func badBody(_ message: String) -> APIError {
        APIError(status: 400, ProtocolError(.invalidMessage, message))
    }

    /// A refusal from the rooms, with the status its code stands for.
    init(_ failure: AdminFailure) {
        self.init(status: Self.status(of: failure.error.code), failure.error, index: failure.index)
    }

    /// The HTTP status of each protocol error code, as the API answers it (docs/PROTOCOL.md, *Server API*).
    static func status(of code: ErrorCode) -> Int {
        switch code {
        case .invalidJSON, .invalidMessage, .unknownType: return 400
        case .unauthorized, .tokenExpired: return 401
        case .forbidden, .denied: return 403
        case .unknownRoom, .notJoined: return 404
        case .methodNotAllowed: return 405
        case .roomExists, .conflict, .finished, .atBound, .notHolder, .guardFailed, .presenceOff, .claimed, .holdRequired, .closed, .nothingToUndo: return 409
        case .tooLarge: return 413
        case .unknownTemplate, .unknownControl, .unknownIntent, .invalidArgs, .outOfRange, .notFound, .notValid: return 422
        case .rateLimited: return 429
        case .internalError: return 500
        case .roomLimit, .unavailable, .overloaded: return 503
        case .roomDeleted: return 410
        }
    }
}

/// Reading request bodies: the JSON the API takes.
enum APIBody {
    /// At most this many intents in one request.
    static let maxIntents = 1_000

    static func parse(_ bytes: [UInt8]) -> Result<JSONObject, APIError> {
        let json: JSONValue
        do {
            json = try bytes.withUnsafeBufferPointer { try JSONParser.parse($0) }
        } catch {
            return .failure(APIError(status: 400, ProtocolError(.invalidJSON, "the body is not valid JSON: \(error)")))
        }
        guard let object = json.objectValue else { return .failure(.badBody("the body must be a JSON object, got \(json.typeName)")) }
        return .success(object)
    }

    /// `POST /rooms/{room}/broadcast`: `{"event": any JSON}`.
    static func broadcastEvent(_ object: JSONObject) -> Result<JSONValue, APIError> {
        if let unknown = object.keys.first(where: { $0 != "event" }) { return .failure(.badBody("unknown field \(unknown) (the body takes event)")) }
        guard let event = object["event"] else { return .failure(.badBody("the body needs event (any JSON value)")) }
        return .success(event)
    }

    /// `POST /rooms`: `{"room", "template"?, "intents"?}`.
    static func creation(_ object: JSONObject) -> Result<(room: String, template: String?, intents: [ServerIntent]), APIError> {
        if let unknown = object.keys.first(where: { !["room", "template", "intents"].contains($0) }) {
            return .failure(.badBody("unknown field \(unknown) (the body takes room, template and intents)"))
        }
        guard let room = object["room"]?.stringValue, ClientMessage.isValidName(room) else {
            return .failure(.badBody("room must be a name: 1–64 characters of A–Z a–z 0–9 _ - . :"))
        }
        guard room != ".", room != ".." else {
            // Dot segments: no URL path can name such a room (clients and servers resolve them away).
            return .failure(.badBody("room \(room) cannot be reached by a URL path; choose another name"))
        }
        var template: String? = nil
        if let value = object["template"], value != .null {
            guard let name = value.stringValue, ClientMessage.isValidName(name) else { return .failure(.badBody("template must be a template's name")) }
            template = name
        }
        var intents: [ServerIntent] = []
        if let value = object["intents"], value != .null {
            switch list(value) {
            case let .success(list): intents = list
            case let .failure(error): return .failure(error)
            }
        }
        return .success((room, template, intents))
    }

    /// `POST /rooms/{room}/intents`: one intent `{"control", "intent", "args"?}` or `{"intents": [...]}`.
    static func intents(_ object: JSONObject) -> Result<[ServerIntent], APIError> {
        if let value = object["intents"] {
            guard object.count == 1 else { return .failure(.badBody("send either one intent {control, intent, args} or {intents: [...]}, not both")) }
            return list(value)
        }
        return intent(object, at: nil).map { [$0] }
    }

    private static func list(_ value: JSONValue) -> Result<[ServerIntent], APIError> {
        guard let array = value.arrayValue else { return .failure(.badBody("intents must be an array of {control, intent, args}")) }
        guard array.count <= maxIntents else { return .failure(.badBody("at most \(maxIntents) intents in one request")) }
        var intents: [ServerIntent] = []
        for (index, item) in array.enumerated() {
            guard let object = item.objectValue else { return .failure(.badBody("intents[\(index)] must be an object")) }
            switch intent(object, at: index) {
            case let .success(intent): intents.append(intent)
            case let .failure(error): return .failure(error)
            }
        }
        return .success(intents)
    }

    private static func intent(_ object: JSONObject, at index: Int?) -> Result<ServerIntent, APIError> {
        let place = index.map { "intents[\($0)]." } ?? ""
        func bad(_ message: String) -> Result<ServerIntent, APIError> {
            var error = APIError.badBody(place + message)
            error.index = index
            return .failure(error)
        }
        if let unknown = object.keys.first(where: { !["control", "intent", "args"].contains($0) }) {
            return bad("unknown field \(unknown) (an intent has control, intent and args)")
        }
        guard let control = object["control"]?.stringValue, ClientMessage.isValidName(control) else {
            return bad("control must be a control id: 1–64 characters of A–Z a–z 0–9 _ - . :")
        }
        // Counted in code points, as JSON Schema's maxLength counts (docs/openapi.yaml).
        guard let name = object["intent"]?.stringValue, !name.isEmpty, name.unicodeScalars.count <= 64 else {
            return bad("intent must be a string of 1–64 characters")
        }
        var args = JSONObject()
        if let value = object["args"], value != .null {
            guard let a = value.objectValue else { return bad("args must be an object, got \(value.typeName)") }
            args = a
        }
        return .success(ServerIntent(control: ControlID(control), intent: name, args: args))
    }
}
