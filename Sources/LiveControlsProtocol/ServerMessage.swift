/// The subprotocol name clients may offer; the server speaks it whether offered or not.
public let protocolName = "livecontrols.v1"

/// Every message the server sends. Each encodes to one JSON text frame.
public enum ServerMessage: Sendable, Equatable {
    /// First message on every connection.
    /// `serverTime`: the server's time, ms since 1970, as it sends the message.
    case welcome(session: String, serverTime: Int)
    /// The whole room document at `version`. `resumed: false` when a `join` asked to resume and could not.
    case snapshot(room: String, epoch: String, version: Int, state: JSONValue, id: RequestID?, resumed: Bool?)
    /// A resumed `join`: the patches after `from` follow, up to the current `version`.
    case resumed(room: String, epoch: String, from: Int, version: Int, id: RequestID?)
    /// One change: `ops` turn the state at `version - 1` into the state at `version`.
    case patch(room: String, epoch: String, version: Int, ops: [PatchOp], cause: JSONValue?)
    /// The request with this id was applied (or needed no change) and the room is at `version`.
    case ack(id: RequestID, room: String, version: Int)
    /// A `leave` was done.
    case left(room: String, id: RequestID?)
    /// A request was refused.
    case error(ProtocolError)
    /// Another member's (or the server API's: `from` "server") `broadcast`: its `event` as sent; `name` the sender's.
    case broadcast(room: String, from: String, name: String?, event: JSONValue)
    /// How many changes the session's user can undo and redo in the room, when that changes (and at a join, when not 0).
    case undoable(room: String, undo: Int, redo: Int)

    public var json: JSONValue {
        var o = JSONObject()
        switch self {
        case let .welcome(session, serverTime):
            o["type"] = "welcome"
            o["session"] = .string(session)
            o["protocol"] = .string(protocolName)
            o["serverTime"] = .int(serverTime)
        case let .snapshot(room, epoch, version, state, id, resumed):
            o["type"] = "snapshot"
            if let id { o["id"] = id.json }
            o["room"] = .string(room)
            o["epoch"] = .string(epoch)
            o["version"] = .int(version)
            if let resumed { o["resumed"] = .bool(resumed) }
            o["state"] = state
        case let .resumed(room, epoch, from, version, id):
            o["type"] = "resumed"
            if let id { o["id"] = id.json }
            o["room"] = .string(room)
            o["epoch"] = .string(epoch)
            o["from"] = .int(from)
            o["version"] = .int(version)
        case let .patch(room, epoch, version, ops, cause):
            o["type"] = "patch"
            o["room"] = .string(room)
            o["epoch"] = .string(epoch)
            o["version"] = .int(version)
            o["ops"] = .array(ops.map(\.json))
            if let cause { o["cause"] = cause }
        case let .ack(id, room, version):
            o["type"] = "ack"
            o["id"] = id.json
            o["room"] = .string(room)
            o["version"] = .int(version)
        case let .left(room, id):
            o["type"] = "left"
            if let id { o["id"] = id.json }
            o["room"] = .string(room)
        case let .broadcast(room, from, name, event):
            o["type"] = "broadcast"
            o["room"] = .string(room)
            o["from"] = .string(from)
            if let name { o["name"] = .string(name) }
            o["event"] = event
        case let .undoable(room, undo, redo):
            o["type"] = "undoable"
            o["room"] = .string(room)
            o["undo"] = .int(undo)
            o["redo"] = .int(redo)
        case let .error(e):
            o["type"] = "error"
            if let id = e.id { o["id"] = id.json }
            if let room = e.room { o["room"] = .string(room) }
            o["code"] = .string(e.code.rawValue)
            o["message"] = .string(e.message)
            if let reason = e.reason { o["reason"] = .string(reason) }
            if let by = e.by { o["by"] = .object(by) }
        }
        return .object(o)
    }

    /// The message as compact JSON: the bytes of `JSONWriter.encode(json)`. The messages of every intent
    /// (`ack`, `patch`) are written straight into bytes, without building the outer `JSONValue` object.
    public func encoded() -> [UInt8] {
        switch self {
        case let .ack(id, room, version):
            var w = JSONWriter(reservingCapacity: 64 + room.utf8.count)
            w.writeRaw(#"{"type":"ack","id":"#)
            w.write(id)
            w.writeRaw(#","room":"#)
            w.writeString(room)
            w.writeRaw(#","version":"#)
            w.writeInt(version)
            w.writeRaw("}")
            return w.bytes
        case let .patch(room, epoch, version, ops, cause):
            var w = JSONWriter(reservingCapacity: 256)
            w.writeRaw(#"{"type":"patch","room":"#)
            w.writeString(room)
            w.writeRaw(#","epoch":"#)
            w.writeString(epoch)
            w.writeRaw(#","version":"#)
            w.writeInt(version)
            w.writeRaw(#","ops":["#)
            for (i, op) in ops.enumerated() {
                if i > 0 { w.writeRaw(",") }
                w.write(op)
            }
            w.writeRaw("]")
            if let cause {
                w.writeRaw(#","cause":"#)
                w.write(cause)
            }
            w.writeRaw("}")
            return w.bytes
        case let .broadcast(room, from, name, event):
            return Self.encodedBroadcast(room: room, from: from, name: name, encodedEvent: JSONWriter.encode(event))
        case let .snapshot(room, epoch, version, state, id, resumed):
            return Self.encodedSnapshot(room: room, epoch: epoch, version: version, encodedState: JSONWriter.encode(state),
                                        id: id, resumed: resumed)
        default:
            return JSONWriter.encode(json)
        }
    }

    /// A `broadcast` whose event is already encoded (the room encodes it once: to check its size, and to send it).
    public static func encodedBroadcast(room: String, from: String, name: String?, encodedEvent: [UInt8]) -> [UInt8] {
        var w = JSONWriter(reservingCapacity: 64 + room.utf8.count + from.utf8.count + (name?.utf8.count ?? 0) + encodedEvent.count)
        w.writeRaw(#"{"type":"broadcast","room":"#)
        w.writeString(room)
        w.writeRaw(#","from":"#)
        w.writeString(from)
        if let name {
            w.writeRaw(#","name":"#)
            w.writeString(name)
        }
        w.writeRaw(#","event":"#)
        w.writeRaw(encodedEvent)
        w.writeRaw("}")
        return w.bytes
    }

    /// A `snapshot` whose state is already encoded (`JSONWriter.encode` of it): the bytes `encoded()` gives the
    /// message, so a room can encode its state once per version for every joiner.
    public static func encodedSnapshot(room: String, epoch: String, version: Int, encodedState: [UInt8], id: RequestID?,
                                       resumed: Bool?) -> [UInt8] {
        var w = JSONWriter(reservingCapacity: 96 + room.utf8.count + epoch.utf8.count + encodedState.count)
        w.writeRaw(#"{"type":"snapshot""#)
        if let id {
            w.writeRaw(#","id":"#)
            w.write(id)
        }
        w.writeRaw(#","room":"#)
        w.writeString(room)
        w.writeRaw(#","epoch":"#)
        w.writeString(epoch)
        w.writeRaw(#","version":"#)
        w.writeInt(version)
        if let resumed { w.writeRaw(resumed ? #","resumed":true"# : #","resumed":false"#) }
        w.writeRaw(#","state":"#)
        w.writeRaw(encodedState)
        w.writeRaw("}")
        return w.bytes
    }
}
