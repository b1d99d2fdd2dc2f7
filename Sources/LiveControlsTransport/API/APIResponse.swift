import LiveControlsEngine
import LiveControlsProtocol
import LiveControlsRuntime

/// One HTTP response of the server API: a status and a JSON body.
struct APIResponse {
    var status: Int
    var body: JSONValue
    var headers: [(String, String)] = []

    static func ok(_ body: JSONObject, status: Int = 200) -> APIResponse { APIResponse(status: status, body: .object(body)) }

    /// `{"error": {"code", "message", "room"?, "index"?}}`, with `Allow` for 405, `WWW-Authenticate` for 401 and
    /// `Retry-After` for 503.
    static func failure(_ error: APIError) -> APIResponse {
        var object: JSONObject = ["code": .string(error.error.code.rawValue), "message": .string(error.error.message)]
        if let room = error.error.room { object["room"] = .string(room) }
        if let index = error.index { object["index"] = .int(index) }
        var response = APIResponse(status: error.status, body: ["error": .object(object)])
        if !error.allow.isEmpty { response.headers.append(("allow", error.allow.joined(separator: ", "))) }
        if error.status == 401 { response.headers.append(("www-authenticate", "Bearer realm=\"livecontrols\"")) }
        if error.status == 503 { response.headers.append(("retry-after", "1")) }
        return response
    }

    var bytes: [UInt8] {
        var bytes = JSONWriter.encode(body)
        bytes.append(0x0A)
        return bytes
    }
}

extension RoomSummary {
    var json: JSONValue {
        ["room": .string(name), "template": .string(template), "epoch": .string(epoch), "version": .int(version),
         "loaded": .bool(loaded), "members": .int(members)]
    }
}

extension MemberInfo {
    var json: JSONValue {
        ["session": .string(session.rawValue), "name": name.map { .string($0) } ?? .null,
         "holding": .array(holding.map { .string($0.rawValue) })]
    }
}

extension RoomDetails {
    var json: JSONObject {
        ["room": .string(name), "template": .string(template), "epoch": .string(epoch), "version": .int(version),
         "state": state, "members": .array(members.map(\.json))]
    }
}

extension RoomVersion {
    var json: JSONObject { ["room": .string(name), "epoch": .string(epoch), "version": .int(version)] }
}

extension RoomHistory {
    var json: JSONObject {
        ["room": .string(name), "epoch": .string(epoch), "version": .int(version),
         "patches": .array(patches.map { ["version": .int($0.version), "ops": .array($0.ops.map(\.json)), "cause": $0.cause] })]
    }
}
