import ArgumentParser
import Foundation
import LiveControlsEngine

extension Role: ExpressibleByArgument {}

/// `livecontrols token`: mints a signed token for hosts to hand out.
struct Token: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a signed access token (HS256 JWT) for the server's secret.",
        discussion: "Example: LIVECONTROLS_AUTH_SECRET=… livecontrols token --role editor --room demo --room 'team-*' --name Ann --ttl 3600"
    )

    @Option(help: "viewer (watch only), editor (send intents) or admin (also create rooms from any template).")
    var role: Role = .editor

    @Option(help: "A room the token grants: an exact name, a prefix ending in *, or * for all (repeatable).")
    var room: [String] = []

    @Option(help: "Display name shown in presence.")
    var name: String?

    @Option(help: "Subject (a user id of yours), carried as `sub`.")
    var subject: String?

    @Option(help: "Seconds until the token expires.")
    var ttl: Int = 3600

    @Option(help: "The HMAC-SHA256 secret (or set LIVECONTROLS_AUTH_SECRET).")
    var authSecret: String?

    func validate() throws {
        guard !room.isEmpty else { throw ValidationError("give at least one --room") }
        guard ttl > 0 else { throw ValidationError("--ttl must be positive") }
    }

    func run() throws {
        guard let secret = AuthFlags.secret(flag: authSecret), secret.utf8.count >= 16 else {
            throw ValidationError("a secret of at least 16 bytes is needed: --auth-secret or LIVECONTROLS_AUTH_SECRET")
        }
        let now = Int(Date().timeIntervalSince1970)
        let token = AccessToken(subject: subject, name: name, role: role, rooms: room, expiresAt: now + ttl, issuedAt: now)
        print(TokenAuthority(secret: secret).sign(token))
    }
}
