import CLibWebSockets
import Foundation

/// What a connection's request says — its path, headers, URL arguments — and who sent it. Service thread, while lws
/// still holds the request's headers (HTTP callbacks, `FILTER_PROTOCOL_CONNECTION`, `ESTABLISHED`).
extension LiveControlsServer {
    func requestPath(_ wsi: OpaquePointer) -> String {
        header(wsi, WSI_TOKEN_GET_URI) ?? ""
    }

    func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0, length < 8192 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        let n = lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token)
        guard n > 0 else { return nil }
        return String(decoding: buffer.prefix(Int(n)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The peer's IP address as text (`127.0.0.1`, `::1`).
    func peerAddress(_ wsi: OpaquePointer) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        guard lws_get_peer_simple(wsi, &buffer, buffer.count) != nil else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A query argument of the request URL (`?token=…`), percent-decoded by lws: the first one named so that has a
    /// value (`name=`).
    func urlArgument(_ wsi: OpaquePointer, _ name: String) -> String? {
        urlArguments(wsi).first { $0.name == name && $0.value != nil }?.value ?? nil
    }

    /// The request URL's query arguments (`?a=1&b=2`; lws also splits at `;`) in order, each percent-decoded by lws
    /// (an unencoded `+` becomes a space); the value is nil for an argument without `=`. lws bounds how many there are.
    func urlArguments(_ wsi: OpaquePointer) -> [(name: String, value: String?)] {
        var arguments: [(name: String, value: String?)] = []
        var index: Int32 = 0
        while true {
            // Sized from the fragment itself: `lws_hdr_copy_fragment` fails alike for a fragment too long and for none.
            var buffer = [CChar](repeating: 0, count: Int(lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, index)) + 1)
            let length = lws_hdr_copy_fragment(wsi, &buffer, Int32(buffer.count), WSI_TOKEN_HTTP_URI_ARGS, index)
            guard length >= 0 else { break }
            let text = String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            arguments.append((name: String(parts[0]), value: parts.count > 1 ? String(parts[1]) : nil))
            index += 1
        }
        return arguments
    }
}
