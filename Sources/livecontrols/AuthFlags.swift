import ArgumentParser
import Foundation
import LiveControlsEngine
import LiveControlsRuntime
import LiveControlsTransport

extension AuthPolicy.Mode: ExpressibleByArgument {}

/// `--metrics-access`.
enum MetricsAccess: String, ExpressibleByArgument, CaseIterable {
    case `public`, key
}

/// `--room-creators`: the least role whose join may create a room.
enum RoomCreators: String, ExpressibleByArgument, CaseIterable {
    case editor, admin
}

/// `--auth`, `--auth-secret`, `--api-key`, `--allowed-origin`, `--tls-cert`, `--tls-key`.
struct AuthFlags: ParsableArguments {
    @Option(help: "open: tokens optional (local use); required: every join needs a valid token.")
    var auth: AuthPolicy.Mode = .open

    @Option(help: "HMAC-SHA256 secret for tokens (or set LIVECONTROLS_AUTH_SECRET). Never logged.")
    var authSecret: String?

    @Option(help: "Key for the server API under /api/v1/ (or set LIVECONTROLS_API_KEY), sent as Authorization: Bearer KEY; at least 16 bytes. Never logged.")
    var apiKey: String?

    @Option(help: "Who may read GET /metrics: public (anyone who reaches the port) or key (Authorization: Bearer with the API key or an admin token).")
    var metricsAccess: MetricsAccess = .public

    @Option(help: "Who may create a room by joining one that does not exist: editor (editors from the default template, admins from any) or admin (admins only). Tokenless joins in open mode count as admin; the server API creates rooms whatever this says.")
    var roomCreators: RoomCreators = .editor

    @Option(help: "A browser origin allowed to open WebSockets, e.g. https://app.example.com (repeatable; default: any).")
    var allowedOrigin: [String] = []

    @Option(help: "PEM certificate: serve https and wss on the same port (with --tls-key).")
    var tlsCert: String?

    @Option(help: "PEM private key for --tls-cert.")
    var tlsKey: String?

    var secret: String? { Self.secret(flag: authSecret) }

    /// The API key from the flag, else from `LIVECONTROLS_API_KEY`.
    var key: String? {
        apiKey ?? ProcessInfo.processInfo.environment["LIVECONTROLS_API_KEY"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The secret from the flag, else from `LIVECONTROLS_AUTH_SECRET`.
    static func secret(flag: String?) -> String? {
        flag ?? ProcessInfo.processInfo.environment["LIVECONTROLS_AUTH_SECRET"].flatMap { $0.isEmpty ? nil : $0 }
    }

    func validate() throws {
        if auth == .required && secret == nil {
            throw ValidationError("--auth required needs a secret: --auth-secret or LIVECONTROLS_AUTH_SECRET")
        }
        if let secret, secret.utf8.count < 16 { throw ValidationError("the auth secret must be at least 16 bytes") }
        if metricsAccess == .key && key == nil && secret == nil {
            throw ValidationError("--metrics-access key needs --api-key (or LIVECONTROLS_API_KEY) or --auth-secret")
        }
        if let key, key.utf8.count < 16 { throw ValidationError("the API key must be at least 16 bytes (openssl rand -hex 32 makes one)") }
        if (tlsCert == nil) != (tlsKey == nil) { throw ValidationError("--tls-cert and --tls-key go together") }
    }

    var policy: AuthPolicy {
        var policy = AuthPolicy()
        policy.mode = auth
        policy.authority = secret.map(TokenAuthority.init(secret:))
        policy.allowedOrigins = allowedOrigin
        policy.apiKey = key
        policy.roomCreators = roomCreators == .admin ? .admin : .editor
        return policy
    }

    var tls: (certificate: String, privateKey: String)? {
        guard let tlsCert, let tlsKey else { return nil }
        return (tlsCert, tlsKey)
    }
}
