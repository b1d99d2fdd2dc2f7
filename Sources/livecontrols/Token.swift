import ArgumentParser
import Foundation
import LiveControlsEngine
import LiveControlsProtocol

/// `livecontrols token`: mints a signed token for hosts to hand out.
struct Token: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a signed access token (HS256 JWT) for the server's secret.",
        discussion: """
            Example: LIVECONTROLS_AUTH_SECRET=… livecontrols token --role editor --room demo --room 'team-*' --name Ann --ttl 3600
            A custom role (--role host) is carried in the token's `roles`, beside the built-in role (editor unless another \
            --role says viewer or admin); a template's `permissions` may reserve intents for it.
            """
    )

    @Option(help: ArgumentHelp("viewer (watch only), editor (send intents), admin (also create rooms from any template), or a custom role such as host (repeatable).",
                               valueName: "role"))
    var role: [String] = []

    @Option(help: "A room the token grants: an exact name, a prefix ending in *, or * for all (repeatable).")
    var room: [String] = []

    @Option(help: "Display name shown in presence (at most 64 characters).")
    var name: String?

    @Option(help: "Subject (a user id of yours), carried as `sub`.")
    var subject: String?

    @Option(help: "Seconds until the token expires.")
    var ttl: Int = 3600

    @Option(help: "The HMAC-SHA256 secret (or set LIVECONTROLS_AUTH_SECRET).")
    var authSecret: String?

    /// The built-in role (the highest given; editor when none is) and the custom roles, in the order given.
    var roles: (builtin: Role, custom: [String]) {
        let builtins = role.compactMap(Role.init(rawValue:))
        var custom: [String] = []
        for name in role where Role(rawValue: name) == nil && !custom.contains(name) { custom.append(name) }
        return (builtins.max() ?? .editor, custom)
    }

    func validate() throws {
        guard let secret = AuthFlags.secret(flag: authSecret), secret.utf8.count >= 16 else {
            throw ValidationError("a secret of at least 16 bytes is needed: --auth-secret or LIVECONTROLS_AUTH_SECRET")
        }
        guard !room.isEmpty else { throw ValidationError("give at least one --room") }
        for name in role where !Role.isValidName(name) {
            throw ValidationError("--role \(name): a role is 1–64 characters of A–Z a–z 0–9 _ - . :")
        }
        guard roles.custom.count <= Role.maxCustomRoles else { throw ValidationError("at most \(Role.maxCustomRoles) custom roles") }
        guard ttl > 0 else { throw ValidationError("--ttl must be positive") }
        if let name, !AccessToken.isValidName(name) {
            throw ValidationError("--name: a display name is at most \(ClientMessage.maxNameLength) characters")
        }
    }

    func run() throws {
        guard let secret = AuthFlags.secret(flag: authSecret) else { return }  // (`validate` required it)
        let now = Int(Date().timeIntervalSince1970)
        let (builtin, custom) = roles
        let token = AccessToken(subject: subject, name: name, role: builtin, roles: custom, rooms: room, expiresAt: now + ttl, issuedAt: now)
        print(TokenAuthority(secret: secret).sign(token))
    }
}
