import LiveControlsEngine
import LiveControlsProtocol
import LiveControlsRedis

extension ClusterDirectory {
    /// Link queue: the rooms that have a key made by `key` (`keys.state`, `keys.webhooks`), found with `SCAN`.
    func roomNames(withKey key: (String) -> String) throws(RedisError) -> Set<String> {
        let head = key("")
        var pattern = ""
        for character in head {
            if "*?[]\\".contains(character) { pattern.append("\\") }  // the prefix is taken literally
            pattern.append(character)
        }
        var names = Set<String>()
        var cursor = "0"
        repeat {
            let reply = try link.run { c throws(RedisError) in try c.command(["SCAN", cursor, "MATCH", pattern + "*", "COUNT", "1000"]) }
            guard case let .array(parts) = reply, parts.count == 2, let next = parts[0].text, case let .array(found) = parts[1] else {
                throw RedisError(.protocolError, "unexpected SCAN reply")
            }
            cursor = next
            for key in found.compactMap(\.text) where key.hasPrefix(head) { names.insert(String(key.dropFirst(head.count))) }
        } while cursor != "0"
        return names
    }

    /// Link queue: the room as `RedisRoomStore` wrote it (state hash and recent patches); nil when none.
    func loadRoom(_ room: String) throws(RedisError) -> ClusterStoredRoom? {
        let replies = try link.run { c throws(RedisError) in
            try c.pipeline([
                [Array("HGETALL".utf8), Array(keys.state(room).utf8)],
                [Array("LRANGE".utf8), Array(keys.history(room).utf8), Array("0".utf8), Array("-1".utf8)],
            ])
        }
        guard replies.count == 2, case let .array(pairs) = replies[0], !pairs.isEmpty else { return nil }
        var fields: [String: [UInt8]] = [:]
        var index = 0
        while index + 1 < pairs.count {
            if let field = pairs[index].text, let value = pairs[index + 1].bytes { fields[field] = value }
            index += 2
        }
        func text(_ field: String) -> String? { fields[field].map { String(decoding: $0, as: UTF8.self) } }
        guard let template = text("template"), let epoch = text("epoch"), let version = text("version").flatMap(Int.init) else {
            throw RedisError(.protocolError, "room \(room): its state in Redis lacks template, epoch or version")
        }
        var controls: [ControlID: String] = [:]
        var deltas: [(id: ControlID, seq: Int, ops: String)] = []
        var members: [(seq: Int, member: StoredMember)] = []
        var data: [SessionID: JSONObject] = [:]
        var nodes: [SessionID: String] = [:]
        var unannounced: UnannouncedChanges?
        for (field, value) in fields {
            if field.hasPrefix("c:") {
                let content = String(decoding: value, as: UTF8.self)
                guard let newline = content.firstIndex(of: "\n") else { continue }
                controls[ControlID(String(field.dropFirst(2)))] = String(content[content.index(after: newline)...])
            } else if field.hasPrefix("x:"), let colon = field.lastIndex(of: ":"), let seq = Int(field[field.index(after: colon)...]) {
                deltas.append((ControlID(String(field[field.index(field.startIndex, offsetBy: 2)..<colon])), seq, String(decoding: value, as: UTF8.self)))
            } else if field == "u" {
                unannounced = (try? JSONParser.parse(value)).flatMap(UnannouncedChanges.init(json:))
            } else if field.hasPrefix("m:"), let record = (try? JSONParser.parse(value))?.arrayValue, record.count >= 3 {
                // [seq, name, node, roles, user]: roles since presence data and permissions, user (the token's sub) since
                // intent hooks (absent: written before them).
                let session = SessionID(String(field.dropFirst(2)))
                let roles = record.count > 3 ? record[3].arrayValue?.compactMap(\.stringValue) ?? [] : []
                let user = record.count > 4 ? record[4].stringValue : nil
                members.append((record[0].intValue ?? 0, StoredMember(session: session, name: record[1].stringValue, roles: roles, user: user)))
                if let node = record[2].stringValue { nodes[session] = node }
            } else if field.hasPrefix("d:"), let object = (try? JSONParser.parse(value))?.objectValue {
                data[SessionID(String(field.dropFirst(2)))] = object
            }
        }
        StoredRoom.replay(deltas, onto: &controls)  // (a control it cannot rebuild is left out: a new epoch)
        members.sort { ($0.seq, $0.member.session) < ($1.seq, $1.member.session) }
        for i in members.indices { members[i].member.data = data[members[i].member.session] ?? JSONObject() }
        var history: [Patch] = []
        if case let .array(entries) = replies[1] {
            for entry in entries {
                guard let bytes = entry.bytes, let message = try? JSONParser.parse(bytes), let patchVersion = message["version"]?.intValue,
                      let patch = Patch(version: patchVersion, storedOps: message["ops"] ?? .null, cause: message["cause"] ?? .null)
                else { continue }
                history.append(patch)
            }
        }
        var stored = StoredRoom(name: room, template: template, epoch: epoch, version: version, controls: controls,
                                members: members.map(\.member), history: history)
        stored.unannounced = unannounced
        return ClusterStoredRoom(room: stored, nodes: nodes)
    }
}
