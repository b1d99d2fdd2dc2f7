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
        var response = APIResponse(status: error.status, body: ["error": AdminFailure(error.error, index: error.index).json])
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
