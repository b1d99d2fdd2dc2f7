import CHiredis
import Synchronization

/// TLS for every connection to Redis (`rediss://`, `rediss-sentinel://`): the server's certificate is always
/// verified — against `caCertificateFile` (PEM) or, without it, the system's trust store — and must name the host
/// connected to (its DNS name or IP address), or `serverName` when that is set (also sent as SNI). `certificateFile`
/// and `keyFile` (PEM, both or neither) are a client certificate for servers that ask for one
/// (`tls-auth-clients yes`). In sentinel mode the sentinels and the master are all reached over TLS with these
/// settings. Plain value; safe to pass between threads.
public struct RedisTLS: Sendable, Hashable {
    public var caCertificateFile: String?
    public var certificateFile: String?
    public var keyFile: String?
    /// The name the server's certificate must carry, instead of the host connected to.
    public var serverName: String?

    public init(caCertificateFile: String? = nil, certificateFile: String? = nil, keyFile: String? = nil,
                serverName: String? = nil) {
        self.caCertificateFile = caCertificateFile
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.serverName = serverName
    }

    /// Reads the certificates and key now (they are read once per process and kept): a missing file, a
    /// certificate that does not parse or a key that does not match throws `.connection` with the reason.
    public func check() throws(RedisError) { _ = try TLSClientContext.shared(for: self) }
}

/// An OpenSSL client context, made once per `RedisTLS` and shared by every connection (OpenSSL allows
/// `SSL_new` on one context from several threads); never freed (it lives as long as the process).
final class TLSClientContext: @unchecked Sendable {
    let pointer: OpaquePointer

    private init(pointer: OpaquePointer) { self.pointer = pointer }

    private static let contexts = Mutex<[RedisTLS: TLSClientContext]>([:])

    static func shared(for tls: RedisTLS) throws(RedisError) -> TLSClientContext {
        let result: Result<TLSClientContext, RedisError> = contexts.withLock { contexts in
            if let made = contexts[tls] { return .success(made) }
            var error = [CChar](repeating: 0, count: 512)
            let made = lc_redis_tls_context_create(tls.caCertificateFile, tls.certificateFile, tls.keyFile, &error, error.count)
            guard let made else {
                return .failure(RedisError(.connection, "TLS: " + text(error)))
            }
            let context = TLSClientContext(pointer: made)
            contexts[tls] = context
            return .success(context)
        }
        return try result.get()
    }
}

extension HiredisContext {
    /// Starts TLS on this connected, blocking context: the handshake, bounded by the socket's timeouts; the
    /// certificate must name `tls.serverName ?? endpoint.host`.
    func startTLS(_ tls: RedisTLS) throws(RedisError) {
        let context = try TLSClientContext.shared(for: tls)
        let name = tls.serverName ?? endpoint.host
        var error = [CChar](repeating: 0, count: 512)
        guard lc_redis_tls_start(pointer, context.pointer, name, &error, error.count) == 0 else {
            throw RedisError(.connection, "\(endpoint): " + text(error))
        }
    }
}

/// A NUL-terminated C message buffer as text.
private func text(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map(UInt8.init(bitPattern:)), as: UTF8.self)
}
