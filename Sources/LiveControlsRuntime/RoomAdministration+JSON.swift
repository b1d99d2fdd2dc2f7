import LiveControlsEngine
import LiveControlsProtocol

/// The server API's values as JSON: the bodies the transport answers with (docs/openapi.yaml), and what cluster
/// nodes send each other for a request one of them runs for another (`ClusterEnvelope`). Decoding is only for
/// the latter: nil for anything malformed.
extension RoomSummary {
    package var json: JSONValue {
        var object: JSONObject = ["room": .string(name), "template": .string(template), "epoch": .string(epoch), "version": .int(version),
                                  "loaded": .bool(loaded), "members": .int(members)]
        if inCluster { object["node"] = node.map { .string($0) } ?? .null }
        return .object(object)
    }
}

extension NodeSummary {
    package var json: JSONValue {
        ["node": .string(id), "self": .bool(isSelf), "rooms": .int(rooms)]
    }
}

extension MemberInfo {
    package var json: JSONValue {
        ["session": .string(session.rawValue), "name": name.map { .string($0) } ?? .null, "user": user.map { .string($0) } ?? .null,
         "roles": .array(roles.map { .string($0) }),
         "holding": .array(holding.map { .string($0.rawValue) }), "editing": .array(editing), "data": .object(data)]
    }

    init?(json: JSONValue) {
        guard let session = json["session"]?.stringValue, let holding = json["holding"]?.arrayValue else { return nil }
        self.init(session: SessionID(session), name: json["name"]?.stringValue, user: json["user"]?.stringValue, roles: json["roles"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                  holding: holding.compactMap { $0.stringValue.map(ControlID.init) }, editing: json["editing"]?.arrayValue ?? [],
                  data: json["data"]?.objectValue ?? JSONObject())
    }
}

extension RoomDetails {
    package var json: JSONObject {
        ["room": .string(name), "template": .string(template), "epoch": .string(epoch), "version": .int(version),
         "state": state, "members": .array(members.map(\.json))]
    }

    init?(json: JSONValue) {
        guard let name = json["room"]?.stringValue, let template = json["template"]?.stringValue, let epoch = json["epoch"]?.stringValue,
              let version = json["version"]?.intValue, let state = json["state"], let members = json["members"]?.arrayValue
        else { return nil }
        self.init(name: name, template: template, epoch: epoch, version: version, state: state, members: members.compactMap(MemberInfo.init(json:)))
    }
}

extension RoomVersion {
    package var json: JSONObject { ["room": .string(name), "epoch": .string(epoch), "version": .int(version)] }

    init?(json: JSONValue) {
        guard let name = json["room"]?.stringValue, let epoch = json["epoch"]?.stringValue, let version = json["version"]?.intValue else { return nil }
        self.init(name: name, epoch: epoch, version: version)
    }
}

extension RoomHistory {
    package var json: JSONObject {
        ["room": .string(name), "epoch": .string(epoch), "version": .int(version),
         "patches": .array(patches.map { ["version": .int($0.version), "ops": .array($0.ops(for: .everything).map(\.json)), "cause": $0.cause] })]
    }

    init?(json: JSONValue) {
        guard let name = json["room"]?.stringValue, let epoch = json["epoch"]?.stringValue, let version = json["version"]?.intValue,
              let entries = json["patches"]?.arrayValue
        else { return nil }
        var patches: [Patch] = []
        for entry in entries {
            guard let patchVersion = entry["version"]?.intValue, let ops = entry["ops"]?.arrayValue,
                  let decoded = try? ops.map({ op throws(PatchError) in try PatchOp(json: op) })
            else { return nil }
            patches.append(Patch(version: patchVersion, ops: decoded, cause: entry["cause"] ?? .null))
        }
        self.init(name: name, epoch: epoch, version: version, patches: patches)
    }
}

extension AdminFailure {
    /// `{"code", "message", "room"?, "index"?}`: the `error` object of an API error body.
    package var json: JSONValue {
        var object: JSONObject = ["code": .string(error.code.rawValue), "message": .string(error.message)]
        if let room = error.room { object["room"] = .string(room) }
        if let index { object["index"] = .int(index) }
        return .object(object)
    }

    init?(json: JSONValue) {
        guard let code = json["code"]?.stringValue.flatMap(ErrorCode.init(rawValue:)), let message = json["message"]?.stringValue else { return nil }
        self.init(ProtocolError(code, message, room: json["room"]?.stringValue), index: json["index"]?.intValue)
    }
}

extension ServerIntent {
    var json: JSONValue { ["control": .string(control.rawValue), "intent": .string(intent), "args": .object(args)] }

    init?(json: JSONValue) {
        guard let control = json["control"]?.stringValue, let intent = json["intent"]?.stringValue else { return nil }
        self.init(control: ControlID(control), intent: intent, args: json["args"]?.objectValue ?? JSONObject())
    }
}

extension DisconnectOutcome {
    var json: JSONValue {
        switch self {
        case .disconnected: return ["outcome": "disconnected"]
        case .notFound: return ["outcome": "notFound"]
        case .unknownRoom: return ["outcome": "unknownRoom"]
        case let .forbidden(otherRoom): return ["outcome": "forbidden", "room": .string(otherRoom)]
        case let .unavailable(message): return ["outcome": "unavailable", "message": .string(message)]
        }
    }

    init?(json: JSONValue) {
        switch json["outcome"]?.stringValue {
        case "disconnected": self = .disconnected
        case "notFound": self = .notFound
        case "unknownRoom": self = .unknownRoom
        case "forbidden": guard let room = json["room"]?.stringValue else { return nil }; self = .forbidden(otherRoom: room)
        case "unavailable": self = .unavailable(json["message"]?.stringValue ?? "")
        default: return nil
        }
    }
}
