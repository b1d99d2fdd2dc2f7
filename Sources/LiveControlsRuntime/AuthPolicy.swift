import Foundation
import LiveControlsEngine
import LiveControlsProtocol

/// Who may join, act and create rooms. Pure policy: the server asks it on `join` and `intent`.
public struct AuthPolicy: Sendable {
    public enum Mode: String, Sendable, CaseIterable {
        /// Tokens are optional: a join without one may do everything (local use).
        case open
        /// Every join needs a valid token.
        case required
    }

    public var mode: Mode = .open
    /// Verifies tokens; nil when no secret is configured (then tokens cannot be checked).
    public var authority: TokenAuthority? = nil
    /// Browser origins allowed to open a WebSocket (`Origin` header); empty allows any.
    public var allowedOrigins: [String] = []
    /// The server API's key (`--api-key`, `LIVECONTROLS_API_KEY`): `Authorization: Bearer KEY` may do anything
    /// through `/api/v1/`. Nil: only admin tokens may (when a secret is set); with neither, the API is off.
    public var apiKey: String? = nil
    /// The least role whose `join` may create a room (`--room-creators`): `.editor` (from the default template;
    /// admins from any) or `.admin`.
    public var roomCreators: Role = .editor
    /// Wall clock in seconds since 1970, for token expiry.
    public var now: @Sendable () -> Int = { Int(Date().timeIntervalSince1970) }

    public init() {}

    /// What a session may do in one room.
    public struct Grant: Sendable, Equatable {
        public var role: Role
        /// Seconds since 1970; nil for open-mode sessions without a token.
        public var expiresAt: Int?
        public var name: String?
        /// `role`, then the token's custom roles: what the member joins a room with.
        public var roles: [String]
        /// The token's `sub`: the person behind the session (nil without a token, or a token that names none).
        public var user: String?

        public init(role: Role, expiresAt: Int?, name: String?, roles: [String]? = nil, user: String? = nil) {
            self.role = role
            self.expiresAt = expiresAt
            self.name = name
            self.roles = roles ?? [role.rawValue]
            self.user = user
        }
    }

    /// Decides a `join`: the grant, or the error to send (`unauthorized`, `token_expired`, `forbidden`).
    public func grant(token: String?, room: String) -> Result<Grant, ProtocolError> {
        guard let token else {
            if mode == .open { return .success(Grant(role: .admin, expiresAt: nil, name: nil)) }
            return .failure(ProtocolError(.unauthorized, "this server requires a token to join (join.token or ?token=)", room: room))
        }
        guard let authority else {
            return .failure(ProtocolError(.unauthorized, "this server has no token secret configured; join without a token", room: room))
        }
        do {
            let claims = try authority.verify(token, now: now())
            guard claims.allows(room: room) else {
                return .failure(ProtocolError(.forbidden, "the token does not grant room \(room)", room: room))
            }
            return .success(Grant(role: claims.role, expiresAt: claims.expiresAt, name: claims.name, roles: claims.allRoles, user: claims.subject))
        } catch {
            switch error {
            case .expired: return .failure(ProtocolError(.tokenExpired, "the token has expired; get a new one", room: room))
            case let .invalid(reason): return .failure(ProtocolError(.unauthorized, "invalid token: \(reason)", room: room))
            }
        }
    }

    /// Whether `grant` may create a room from `template` (nil: the default template).
    public func mayCreate(_ grant: Grant, template: String?, defaultTemplate: String) -> ProtocolError? {
        let other = template != nil && template != defaultTemplate
        if grant.role == .admin { return nil }
        if roomCreators == .admin {
            return ProtocolError(.forbidden, "only an admin may create rooms on this server (--room-creators admin)")
        }
        if !other && grant.role == .editor { return nil }
        return ProtocolError(.forbidden, other ? "only an admin may create rooms from template \(template!)"
                                                : "a viewer cannot create rooms")
    }

    /// Whether an intent (or a claim: `what`) is allowed now under `grant`.
    public func mayAct(_ grant: Grant, room: String, id: RequestID?, what: String = "send intents") -> ProtocolError? {
        if let expired = hasExpired(grant, room: room, id: id) { return expired }
        guard grant.role >= .editor else {
            return ProtocolError(.forbidden, "viewers cannot \(what)", id: id, room: room)
        }
        return nil
    }

    /// `token_expired` once the grant's token has expired (a member may then do nothing more in the room).
    public func hasExpired(_ grant: Grant, room: String, id: RequestID?) -> ProtocolError? {
        guard let expiry = grant.expiresAt, now() >= expiry else { return nil }
        return ProtocolError(.tokenExpired, "the token has expired; join again with a new one", id: id, room: room)
    }

    /// What a server API caller may touch: every room (the API key) or the rooms an admin token grants.
    public struct APIGrant: Sendable {
        /// Nil: every room.
        public var token: AccessToken?

        public func allows(room: String) -> Bool { token?.allows(room: room) ?? true }
    }

    /// Decides a server API request from its `Authorization` header: the grant, or the error (`forbidden` when the
    /// API is off or the token is not an admin's; `unauthorized` for a missing or wrong key or token;
    /// `token_expired`).
    public func authorizeAPI(authorization: String?) -> Result<APIGrant, ProtocolError> {
        guard apiKey != nil || authority != nil else {
            return .failure(ProtocolError(.forbidden, "the server API is off: start the server with --api-key KEY (or LIVECONTROLS_API_KEY), or with --auth-secret to accept admin tokens"))
        }
        guard let authorization, authorization.count > 7, authorization.prefix(7).lowercased() == "bearer " else {
            return .failure(ProtocolError(.unauthorized, "send Authorization: Bearer <API key or admin token>"))
        }
        let credential = String(authorization.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        if let apiKey, HMACSHA256.constantTimeEqual(Array(credential.utf8), Array(apiKey.utf8)) { return .success(APIGrant(token: nil)) }
        guard let authority, credential.split(separator: ".", omittingEmptySubsequences: false).count == 3 else {
            return .failure(ProtocolError(.unauthorized, "the API key is not valid"))
        }
        do {
            let claims = try authority.verify(credential, now: now())
            guard claims.role == .admin else {
                return .failure(ProtocolError(.forbidden, "the server API needs an admin token (this one is \(claims.role.rawValue))"))
            }
            return .success(APIGrant(token: claims))
        } catch {
            switch error {
            case .expired: return .failure(ProtocolError(.tokenExpired, "the token has expired; get a new one"))
            case let .invalid(reason): return .failure(ProtocolError(.unauthorized, "invalid token: \(reason)"))
            }
        }
    }

    public func originAllowed(_ origin: String?) -> Bool {
        guard !allowedOrigins.isEmpty, let origin, !origin.isEmpty else { return true }
        return allowedOrigins.contains(origin)
    }
}
