import LiveControlsEngine
import LiveControlsProtocol

/// A request a node forwards to a room's owner, for one of its sessions.
enum ClusterRequest: Sendable, Equatable {
    case join(JoinRequest)
    /// An intent, presence update or claim carries who sent it as it joined (`Membership`): an owner that does not
    /// know the member (it took a `presence: false` room over, whose members are not stored) adds it as it was.
    case intent(IntentRequest, Membership?)
    case presence(PresenceRequest, Membership?)
    case claim(ClaimRequest, Membership?)
    case broadcast(BroadcastRequest, Membership?)
    case undo(UndoRequest, Membership?)
    case leave(id: RequestID?, reason: HoldEndReason)
    /// A fresh snapshot (a re-join, or a resync after an overflow or a gap).
    case snapshot(id: RequestID?)
    /// A server API request, run by the room's owner; the answer is an `AdminReply`.
    case admin(AdminCall)
    /// A server API request to the node the session's connection is on: close it (`RoomAdministration.disconnect`).
    case disconnect(grantedRooms: [String]?)
}

extension ClusterRequest {
    var isDisconnect: Bool {
        if case .disconnect = self { return true }
        return false
    }

    var isLeave: Bool {
        if case .leave = self { return true }
        return false
    }
}

/// A server API request that the room's owner runs (`RoomAdministration`).
enum AdminCall: Sendable, Equatable {
    case describe
    case apply([ServerIntent])
    case reset
    case broadcast(JSONValue)
    case history(epoch: String?, after: Int)
    case delete
}

/// What travels between nodes, as bytes: one header line of tab-separated fields, a newline, a body.
/// Room names, session ids and node ids never contain tabs or newlines (the protocol and the CLI refuse them).
///
/// - request to the owner's inbox `n:<owner>`: `Q <kind> <room> <from node> <session> <token>` + a JSON body
/// - reply to a session's node inbox `n:<node>`: `R <room> <session> <token> <epoch> <version>` + the message as
///   clients receive it; epoch and version are set for room-state messages (snapshot, resumed, patch), else empty
/// - a patch on `p:<room>`: `<epoch> <version> <owner node>` + the patch message as clients receive it (empty:
///   the room started a new epoch)
/// - a hand-back on `p:<room>`: `released <owner node>` + nothing: the owner stopped (SIGTERM) and released the
///   lease; requests sent to it that it has not answered never will be
/// - a deletion on `p:<room>`: `deleted <owner node>` + the `room_deleted` error every member gets
/// - a server API answer to the asking node's inbox: `A <room> <token>` + `{"ok": …}` or `{"error": {code, message…}}`
enum ClusterEnvelope {
    struct Request: Sendable {
        var request: ClusterRequest
        var room: String
        var node: String
        var session: SessionID
        var token: Int
    }

    struct Reply: Sendable {
        var room: String
        var session: SessionID
        var token: Int
        var epoch: String?
        var version: Int?
        var message: ArraySlice<UInt8>
        /// The node the request went to does not own the room (its `message` is the client's `unavailable`
        /// error): the sender must forget that owner.
        var notOwner = false
    }

    /// The answer to a server API request (`ClusterRequest.admin`, `.disconnect`).
    struct AdminReply: Sendable {
        var room: String
        var token: Int
        var result: Result<JSONValue, AdminFailure>
    }

    enum Inbox: Sendable {
        case request(Request)
        case reply(Reply)
        case adminReply(AdminReply)
    }

    static func encode(_ r: Request) -> [UInt8] {
        var body = JSONObject()
        let kind: String
        switch r.request {
        case let .join(join):
            kind = "join"
            if let id = join.id { body["id"] = id.json }
            if let name = join.name { body["name"] = .string(name) }
            if let since = join.since {
                var resume: JSONObject = ["epoch": .string(since.epoch), "version": .int(since.version)]
                if let session = since.session { resume["session"] = .string(session) }
                body["since"] = .object(resume)
            }
            body["roles"] = .array(join.roles.map { .string($0) })
            if let user = join.user { body["user"] = .string(user) }
        case let .intent(intent, member):
            kind = "intent"
            body["member"] = member?.json
            body["id"] = intent.id.json
            body["control"] = .string(intent.control)
            body["intent"] = .string(intent.intent)
            body["args"] = .object(intent.args)
        case let .presence(presence, member):
            kind = "presence"
            body["member"] = member?.json
            if let id = presence.id { body["id"] = id.json }
            body["data"] = .object(presence.data)
        case let .claim(claim, member):
            kind = claim.release ? "unclaim" : "claim"
            body["member"] = member?.json
            if let id = claim.id { body["id"] = id.json }
            body["control"] = .string(claim.control)
            body["target"] = .string(claim.target)
            if claim.blur { body["reason"] = "blur" }
        case let .broadcast(broadcast, member):
            kind = "broadcast"
            body["member"] = member?.json
            if let id = broadcast.id { body["id"] = id.json }
            body["event"] = broadcast.event
        case let .undo(undo, member):
            kind = undo.redo ? "redo" : "undo"
            body["member"] = member?.json
            if let id = undo.id { body["id"] = id.json }
        case let .leave(id, reason):
            kind = "leave"
            if let id { body["id"] = id.json }
            body["reason"] = .string(reason.rawValue)
        case let .snapshot(id):
            kind = "snapshot"
            if let id { body["id"] = id.json }
        case let .admin(call):
            kind = "admin"
            switch call {
            case .describe: body["call"] = "describe"
            case let .apply(intents):
                body["call"] = "apply"
                body["intents"] = .array(intents.map(\.json))
            case .reset: body["call"] = "reset"
            case let .broadcast(event):
                body["call"] = "broadcast"
                body["event"] = event
            case let .history(epoch, after):
                body["call"] = "history"
                if let epoch { body["epoch"] = .string(epoch) }
                body["after"] = .int(after)
            case .delete: body["call"] = "delete"
            }
        case let .disconnect(grantedRooms):
            kind = "disconnect"
            if let grantedRooms { body["rooms"] = .array(grantedRooms.map { .string($0) }) }
        }
        var bytes = Array("Q\t\(kind)\t\(r.room)\t\(r.node)\t\(r.session.rawValue)\t\(r.token)\n".utf8)
        bytes.append(contentsOf: JSONWriter.encode(.object(body)))
        return bytes
    }

    static func reply(room: String, session: SessionID, token: Int, state: (epoch: String, version: Int)?,
                      message: some Collection<UInt8>, notOwner: Bool = false) -> [UInt8] {
        var bytes = Array("\(notOwner ? "N" : "R")\t\(room)\t\(session.rawValue)\t\(token)\t\(state?.epoch ?? "")\t\(state.map { String($0.version) } ?? "")\n".utf8)
        bytes.append(contentsOf: message)
        return bytes
    }

    static func publication(epoch: String, version: Int, owner: String, message: [UInt8]) -> [UInt8] {
        var bytes = Array("\(epoch)\t\(version)\t\(owner)\n".utf8)
        bytes.append(contentsOf: message)
        return bytes
    }

    /// A patch members see differently (`Patch.access`): `<epoch> <version> <owner> views` + for each view a line
    /// `<length> <session>,<session>…` and its message of `length` bytes; the last view lists no session (it is for
    /// sessions not listed).
    static func publication(epoch: String, version: Int, owner: String, views: [(sessions: [SessionID], message: [UInt8])]) -> [UInt8] {
        var bytes = Array("\(epoch)\t\(version)\t\(owner)\tviews\n".utf8)
        for view in views {
            bytes.append(contentsOf: "\(view.message.count)\t\(view.sessions.map(\.rawValue).joined(separator: ","))\n".utf8)
            bytes.append(contentsOf: view.message)
        }
        return bytes
    }

    /// A published patch: one message for everyone, or one per view.
    struct Publication {
        var epoch: String
        var version: Int
        var owner: String
        var message: ArraySlice<UInt8>
        /// Set when members see the patch differently: the message of each session listed; `message` for the others.
        var views: [SessionID: ArraySlice<UInt8>]? = nil
    }

    /// A patch publication: nil when malformed.
    static func decodePublication(_ bytes: [UInt8]) -> Publication? {
        guard let (fields, body) = header(bytes), fields.count == 3 || (fields.count == 4 && fields[3] == "views"),
              let version = Int(fields[1]), !fields[2].isEmpty else { return nil }
        guard fields.count == 4 else { return Publication(epoch: fields[0], version: version, owner: fields[2], message: body) }
        var views: [SessionID: ArraySlice<UInt8>] = [:]
        var rest = body
        while let newline = rest.firstIndex(of: 0x0A) {
            let line = String(decoding: rest[..<newline], as: UTF8.self).split(separator: "\t", omittingEmptySubsequences: false)
            guard line.count == 2, let length = Int(line[0]), length >= 0, rest.endIndex - (newline + 1) >= length else { return nil }
            let message = rest[(newline + 1)..<(newline + 1 + length)]
            rest = rest[(newline + 1 + length)...]
            if line[1].isEmpty {
                guard rest.isEmpty else { return nil }
                return Publication(epoch: fields[0], version: version, owner: fields[2], message: message, views: views)
            }
            for session in line[1].split(separator: ",") { views[SessionID(String(session))] = message }
        }
        return nil
    }

    static func adminReply(room: String, token: Int, _ result: Result<JSONValue, AdminFailure>) -> [UInt8] {
        var bytes = Array("A\t\(room)\t\(token)\n".utf8)
        switch result {
        case let .success(value): bytes.append(contentsOf: JSONWriter.encode(["ok": value]))
        case let .failure(failure): bytes.append(contentsOf: JSONWriter.encode(["error": failure.json]))
        }
        return bytes
    }

    /// The owner's notice that it deleted the room: `message` is what every member there is told.
    static func deletion(owner: String, message: [UInt8]) -> [UInt8] {
        Array("deleted\t\(owner)\n".utf8) + message
    }

    /// The message of a deletion notice, or nil when `bytes` is something else.
    static func decodeDeletion(_ bytes: [UInt8]) -> ArraySlice<UInt8>? {
        guard bytes.starts(with: "deleted\t".utf8), let (fields, body) = header(bytes), fields.count == 2 else { return nil }
        return body
    }

    /// A member's (or the server API's) broadcast, published by the room's owner: every node hands `message` to its
    /// members of the room but `except`.
    /// `epoch` and `version`: the room's when it was sent (a node that has not seen that version missed a patch).
    static func broadcast(owner: String, except: SessionID?, epoch: String, version: Int, message: [UInt8]) -> [UInt8] {
        Array("broadcast\t\(owner)\t\(except?.rawValue ?? "")\t\(epoch)\t\(version)\n".utf8) + message
    }

    /// A broadcast publication: who is left out, the room's epoch and version, and the message; nil when `bytes` is
    /// something else.
    static func decodeBroadcast(_ bytes: [UInt8]) -> (except: SessionID?, epoch: String, version: Int, message: ArraySlice<UInt8>)? {
        guard bytes.starts(with: "broadcast\t".utf8), let (fields, body) = header(bytes), fields.count == 5, let version = Int(fields[4]) else { return nil }
        return (fields[2].isEmpty ? nil : SessionID(fields[2]), fields[3], version, body)
    }

    /// The owner's notice that it released the room (it is stopping).
    static func release(owner: String) -> [UInt8] {
        Array("released\t\(owner)\n".utf8)
    }

    /// The owner of a hand-back notice, or nil when `bytes` is something else.
    static func decodeRelease(_ bytes: [UInt8]) -> String? {
        guard bytes.starts(with: "released\t".utf8), let (fields, _) = header(bytes), fields.count == 2, !fields[1].isEmpty else { return nil }
        return fields[1]
    }

    /// A message on a node's inbox: nil when malformed.
    static func decodeInbox(_ bytes: [UInt8]) -> Inbox? {
        guard let (fields, body) = header(bytes), let kind = fields.first else { return nil }
        if kind == "R" || kind == "N", fields.count == 6, let token = Int(fields[3]) {
            return .reply(Reply(room: fields[1], session: SessionID(fields[2]), token: token,
                                epoch: fields[4].isEmpty ? nil : fields[4], version: Int(fields[5]), message: body, notOwner: kind == "N"))
        }
        if kind == "A", fields.count == 3, let token = Int(fields[2]), let json = try? JSONParser.parse(Array(body)) {
            if let value = json["ok"] { return .adminReply(AdminReply(room: fields[1], token: token, result: .success(value))) }
            if let failure = json["error"].flatMap(AdminFailure.init(json:)) {
                return .adminReply(AdminReply(room: fields[1], token: token, result: .failure(failure)))
            }
            return nil
        }
        guard kind == "Q", fields.count == 6, let token = Int(fields[5]),
              let json = try? JSONParser.parse(Array(body)), let request = decodeRequest(kind: fields[1], room: fields[2], json)
        else { return nil }
        return .request(Request(request: request, room: fields[2], node: fields[3], session: SessionID(fields[4]), token: token))
    }

    private static func decodeRequest(kind: String, room: String, _ body: JSONValue) -> ClusterRequest? {
        let id = body["id"].flatMap(RequestID.init(json:))
        let member = body["member"].flatMap(Membership.init(json:))
        switch kind {
        case "join":
            var since: ResumePoint? = nil
            if let s = body["since"], let epoch = s["epoch"]?.stringValue, let version = s["version"]?.intValue {
                since = ResumePoint(epoch: epoch, version: version, session: s["session"]?.stringValue)
            }
            var join = JoinRequest(id: id, room: room, name: body["name"]?.stringValue, since: since)
            join.roles = body["roles"]?.arrayValue?.compactMap(\.stringValue) ?? []
            join.user = body["user"]?.stringValue
            return .join(join)
        case "intent":
            guard let id, let control = body["control"]?.stringValue, let intent = body["intent"]?.stringValue else { return nil }
            return .intent(IntentRequest(id: id, room: room, control: control, intent: intent, args: body["args"]?.objectValue ?? JSONObject()), member)
        case "presence":
            guard let data = body["data"]?.objectValue else { return nil }
            return .presence(PresenceRequest(id: id, room: room, data: data), member)
        case "claim", "unclaim":
            guard let control = body["control"]?.stringValue, let target = body["target"]?.stringValue else { return nil }
            return .claim(ClaimRequest(id: id, room: room, control: control, target: target, release: kind == "unclaim",
                                       blur: body["reason"]?.stringValue == "blur"), member)
        case "broadcast":
            guard let event = body["event"] else { return nil }
            return .broadcast(BroadcastRequest(id: id, room: room, event: event), member)
        case "undo", "redo":
            return .undo(UndoRequest(id: id, room: room, redo: kind == "redo"), member)
        case "leave":
            guard let reason = body["reason"]?.stringValue.flatMap(HoldEndReason.init(rawValue:)) else { return nil }
            return .leave(id: id, reason: reason)
        case "snapshot":
            return .snapshot(id: id)
        case "admin":
            switch body["call"]?.stringValue {
            case "describe": return .admin(.describe)
            case "apply":
                guard let list = body["intents"]?.arrayValue else { return nil }
                let intents = list.compactMap(ServerIntent.init(json:))
                return intents.count == list.count ? .admin(.apply(intents)) : nil
            case "reset": return .admin(.reset)
            case "broadcast": return body["event"].map { .admin(.broadcast($0)) }
            case "history":
                guard let after = body["after"]?.intValue else { return nil }
                return .admin(.history(epoch: body["epoch"]?.stringValue, after: after))
            case "delete": return .admin(.delete)
            default: return nil
            }
        case "disconnect":
            guard let rooms = body["rooms"] else { return .disconnect(grantedRooms: nil) }
            guard let list = rooms.arrayValue else { return nil }
            return .disconnect(grantedRooms: list.compactMap(\.stringValue))
        default:
            return nil
        }
    }

    private static func header(_ bytes: [UInt8]) -> ([String], ArraySlice<UInt8>)? {
        guard let newline = bytes.firstIndex(of: 0x0A) else { return nil }
        let line = String(decoding: bytes[..<newline], as: UTF8.self)
        return (line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init), bytes[(newline + 1)...])
    }
}
