/// A client-chosen request id: a string (1…128 characters) or an integer, echoed back as given.
public enum RequestID: Sendable, Hashable {
    case string(String)
    case int(Int)

    public var json: JSONValue {
        switch self {
        case let .string(s): return .string(s)
        case let .int(i): return .int(i)
        }
    }

    public init?(json: JSONValue) {
        switch json {
        case let .string(s) where !s.isEmpty && s.count <= 128: self = .string(s)
        case let .int(i): self = .int(i)
        default: return nil
        }
    }
}

/// Where a client left off: resume from `version` of the room's lifetime `epoch`.
public struct ResumePoint: Sendable, Equatable {
    public var epoch: String
    public var version: Int
    /// The session the held state was seen as (the former connection's `welcome.session`): in a room whose members
    /// see different states (a poll's ballots) it tells whether that state fits this session's patches.
    public var session: String?
    public init(epoch: String, version: Int, session: String? = nil) { self.epoch = epoch; self.version = version; self.session = session }
}

/// `join {room, since?, name?, template?, token?, id?}`
public struct JoinRequest: Sendable, Equatable {
    public var id: RequestID?
    public var room: String
    public var template: String?
    public var name: String?
    public var since: ResumePoint?
    public var token: String?
    /// Set by the server from the session's token (never read from the message): the roles the member joins with.
    public var roles: [String] = []
    /// Set by the server from the session's token (never read from the message): its `sub`.
    public var user: String?

    public init(id: RequestID? = nil, room: String, template: String? = nil, name: String? = nil, since: ResumePoint? = nil, token: String? = nil) {
        self.id = id
        self.room = room
        self.template = template
        self.name = name
        self.since = since
        self.token = token
    }
}

/// `intent {id, room, control, intent, args?}`
public struct IntentRequest: Sendable, Equatable {
    public var id: RequestID
    public var room: String
    public var control: String
    public var intent: String
    /// Always an object; `{}` when the client sent none.
    public var args: JSONObject

    public init(id: RequestID, room: String, control: String, intent: String, args: JSONObject = JSONObject()) {
        self.id = id
        self.room = room
        self.control = control
        self.intent = intent
        self.args = args
    }
}

/// `presence {room, data, id?}`: set (merge) the session's own presence data; a key set to `null` is removed.
public struct PresenceRequest: Sendable, Equatable {
    public var id: RequestID?
    public var room: String
    public var data: JSONObject

    public init(id: RequestID? = nil, room: String, data: JSONObject) {
        self.id = id
        self.room = room
        self.data = data
    }

    /// The longest key of presence data, in UTF-8 bytes.
    public static let maxKeyLength = 64
}

/// `claim {room, control, target?, id?}` (and `unclaim`): a session says it is editing a control (`*`, the default)
/// or a part of it (`account.email`), or that it is done.
public struct ClaimRequest: Sendable, Equatable {
    public var id: RequestID?
    public var room: String
    public var control: String
    public var target: String
    /// `unclaim`: give the claim up.
    public var release: Bool
    /// `unclaim {reason: "blur"}`: the field lost focus (else `release`); `cause.claimsEnded` tells which.
    public var blur: Bool

    public init(id: RequestID? = nil, room: String, control: String, target: String = "*", release: Bool = false, blur: Bool = false) {
        self.id = id
        self.room = room
        self.control = control
        self.target = target
        self.release = release
        self.blur = blur
    }

    /// The longest target: an element id, a dot, a field id.
    public static let maxTargetLength = 2 * ClientMessage.maxNameLength + 1

    static func isValidTarget(_ s: String) -> Bool {
        s == "*" || (s.utf8.count <= maxTargetLength && s.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { ClientMessage.isValidName(String($0)) })
    }
}

/// `broadcast {room, event, id?}`: `event` (any JSON) for the room's other members, as is; not state.
public struct BroadcastRequest: Sendable, Equatable {
    public var id: RequestID?
    public var room: String
    public var event: JSONValue

    public init(id: RequestID? = nil, room: String, event: JSONValue) {
        self.id = id
        self.room = room
        self.event = event
    }
}

/// `undo {room, id?}` / `redo {room, id?}`: takes back the sender's (its user's) last change in the room, or the last undo.
public struct UndoRequest: Sendable, Equatable {
    public var id: RequestID?
    public var room: String
    /// `redo`: take back the last undo.
    public var redo: Bool

    public init(id: RequestID? = nil, room: String, redo: Bool = false) {
        self.id = id
        self.room = room
        self.redo = redo
    }
}

/// Every message a client can send, decoded once from a text frame.
public enum ClientMessage: Sendable, Equatable {
    case join(JoinRequest)
    case leave(room: String, id: RequestID?)
    case intent(IntentRequest)
    case presence(PresenceRequest)
    case claim(ClaimRequest)
    case broadcast(BroadcastRequest)
    case undo(UndoRequest)

    /// The room the message is for.
    public var room: String {
        switch self {
        case let .join(r): r.room
        case let .leave(room, _): room
        case let .intent(r): r.room
        case let .presence(r): r.room
        case let .claim(r): r.room
        case let .broadcast(r): r.room
        case let .undo(r): r.room
        }
    }

    /// Limits on names the server accepts.
    public static let maxNameLength = 64

    /// Decodes one text frame. Every failure is a typed `ProtocolError` carrying the request's id when readable.
    public static func decode(_ bytes: UnsafeBufferPointer<UInt8>) throws(ProtocolError) -> ClientMessage {
        let json: JSONValue
        do {
            json = try JSONParser.parse(bytes)
        } catch {
            throw ProtocolError(.invalidJSON, "not valid JSON: \(error)")
        }
        return try decode(json)
    }

    public static func decode(_ json: JSONValue) throws(ProtocolError) -> ClientMessage {
        guard let object = json.objectValue else {
            throw ProtocolError(.invalidMessage, "a message must be a JSON object, got \(json.typeName)")
        }
        // An optional member whose value is `null` counts as absent, for every optional field alike (`id`,
        // `template`, `name`, `token`, `since`, `args`, a claim's `target` and `reason`…: `Fields` reads them all);
        // required ones must be present and not null.
        var id: RequestID? = nil
        if let rawID = object["id"], rawID != .null {
            guard let parsed = RequestID(json: rawID) else {
                throw ProtocolError(.invalidMessage, "id must be a non-empty string (at most 128 characters) or an integer")
            }
            id = parsed
        }
        var fields = Fields(object: object, id: id)
        guard let typeValue = object["type"] else { throw fields.error(.invalidMessage, "missing field type") }
        guard let type = typeValue.stringValue else { throw fields.error(.invalidMessage, "type must be a string") }
        // Once the message is known to be a request for a room, its errors name that room when it is a valid name
        // (errors about the frame itself — its JSON, its type — name none).
        switch type {
        case "join", "leave", "intent", "presence", "claim", "unclaim", "broadcast", "undo", "redo":
            if let room = object["room"]?.stringValue, isValidName(room) { fields.room = room }
        default: break
        }
        switch type {
        case "join":
            let room = try fields.roomName()
            var request = JoinRequest(id: id, room: room)
            request.template = try fields.optionalName("template")
            request.name = try fields.optionalString("name", maxLength: 64)
            request.token = try fields.optionalString("token", maxLength: 4096)
            if let since = object["since"], since != .null {
                // An integer is an integer: `4.0` is not one (as for intent arguments).
                guard let s = since.objectValue, let epoch = s["epoch"]?.stringValue, case let .int(version)? = s["version"], version >= 0,
                      s["session"].map({ $0 == .null || ($0.stringValue.map { (1...128).contains($0.count) } ?? false) }) ?? true else {
                    throw fields.error(.invalidMessage, "since must be {\"epoch\": string, \"version\": integer ≥ 0, \"session\"?: string}", room: room)
                }
                request.since = ResumePoint(epoch: epoch, version: version, session: s["session"]?.stringValue)
            }
            return .join(request)
        case "leave":
            return .leave(room: try fields.roomName(), id: id)
        case "undo", "redo":
            return .undo(UndoRequest(id: id, room: try fields.roomName(), redo: type == "redo"))
        case "broadcast":
            let room = try fields.roomName()
            guard let event = object["event"] else { throw fields.error(.invalidMessage, "broadcast needs an event (any JSON value)", room: room) }
            return .broadcast(BroadcastRequest(id: id, room: room, event: event))
        case "intent":
            guard let id else { throw fields.error(.invalidMessage, "intent needs an id (string or integer)") }
            let room = try fields.roomName()
            let control = try fields.name("control")
            guard let intent = object["intent"]?.stringValue, !intent.isEmpty, intent.count <= maxNameLength else {
                throw fields.error(.invalidMessage, "intent must be a non-empty string", room: room)
            }
            var args = JSONObject()
            if let rawArgs = object["args"], rawArgs != .null {
                guard let a = rawArgs.objectValue else {
                    throw fields.error(.invalidMessage, "args must be an object, got \(rawArgs.typeName)", room: room)
                }
                args = a
            }
            return .intent(IntentRequest(id: id, room: room, control: control, intent: intent, args: args))
        case "presence":
            let room = try fields.roomName()
            guard let rawData = object["data"], let data = rawData.objectValue else {
                throw fields.error(.invalidMessage, "presence needs data, an object of the fields to set (null removes one)", room: room)
            }
            for key in data.keys where key.isEmpty || key.utf8.count > PresenceRequest.maxKeyLength {
                throw fields.error(.invalidMessage, "presence data keys must be 1–\(PresenceRequest.maxKeyLength) bytes long", room: room)
            }
            return .presence(PresenceRequest(id: id, room: room, data: data))
        case "claim", "unclaim":
            let room = try fields.roomName()
            let control = try fields.name("control")
            var target = "*"
            if let raw = object["target"], raw != .null {
                guard let t = raw.stringValue, ClaimRequest.isValidTarget(t) else {
                    throw fields.error(.invalidMessage, "target must be * or a part's id (names of A–Z a–z 0–9 _ - : joined by dots)", room: room)
                }
                target = t
            }
            var blur = false
            if type == "unclaim", let reason = object["reason"], reason != .null {
                guard let r = reason.stringValue, r == "release" || r == "blur" else {
                    throw fields.error(.invalidMessage, "reason must be \"release\" or \"blur\"", room: room)
                }
                blur = r == "blur"
            }
            return .claim(ClaimRequest(id: id, room: room, control: control, target: target, release: type == "unclaim", blur: blur))
        default:
            throw fields.error(.unknownType, "unknown message type \"\(type)\"")
        }
    }

    /// A room, control or template name: 1…64 of `A-Z a-z 0-9 _ - . :`.
    public static func isValidName(_ s: String) -> Bool {
        guard !s.isEmpty, s.utf8.count <= maxNameLength else { return false }
        return s.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
                || c == UInt8(ascii: "_") || c == UInt8(ascii: "-") || c == UInt8(ascii: ".") || c == UInt8(ascii: ":")
        }
    }
}

/// Typed field access with errors that carry the request id.
private struct Fields {
    var object: JSONObject
    var id: RequestID?
    /// The message's room, once its type says it has one and the name is valid: every error names it.
    var room: String? = nil

    func error(_ code: ErrorCode, _ message: String, room: String? = nil) -> ProtocolError {
        ProtocolError(code, message, id: id, room: room ?? self.room)
    }

    func name(_ key: String) throws(ProtocolError) -> String {
        guard let value = object[key] else { throw error(.invalidMessage, "missing field \(key)") }
        guard let s = value.stringValue else { throw error(.invalidMessage, "\(key) must be a string, got \(value.typeName)") }
        guard ClientMessage.isValidName(s) else {
            throw error(.invalidMessage, "\(key) must be 1–64 characters of A–Z a–z 0–9 _ - . :")
        }
        return s
    }

    /// The message's `room` (checked once, when the message's type was read).
    func roomName() throws(ProtocolError) -> String {
        if let room { return room }
        return try name("room")  // throws: absent, not a string, or not a valid name
    }

    func optionalName(_ key: String) throws(ProtocolError) -> String? {
        guard let value = object[key], value != .null else { return nil }
        return try name(key)
    }

    func optionalString(_ key: String, maxLength: Int) throws(ProtocolError) -> String? {
        guard let value = object[key], value != .null else { return nil }
        guard let s = value.stringValue else { throw error(.invalidMessage, "\(key) must be a string, got \(value.typeName)") }
        guard s.count <= maxLength else { throw error(.invalidMessage, "\(key) is longer than \(maxLength) characters") }
        return s
    }
}
