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
    /// Wall clock in seconds since 1970, for token expiry.
    public var now: @Sendable () -> Int = { Int(Date().timeIntervalSince1970) }

    public init() {}

    /// What a session may do in one room.
    public struct Grant: Sendable, Equatable {
        public var role: Role
        /// Seconds since 1970; nil for open-mode sessions without a token.
        public var expiresAt: Int?
        public var name: String?
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
            return .success(Grant(role: claims.role, expiresAt: claims.expiresAt, name: claims.name))
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
        if grant.role == .admin || (!other && grant.role == .editor) { return nil }
        return ProtocolError(.forbidden, other ? "only an admin may create rooms from template \(template!)"
                                                : "a viewer cannot create rooms")
    }

    /// Whether an intent is allowed now under `grant`.
    public func mayAct(_ grant: Grant, room: String, id: RequestID) -> ProtocolError? {
        if let expiry = grant.expiresAt, now() >= expiry {
            return ProtocolError(.tokenExpired, "the token has expired; join again with a new one", id: id, room: room)
        }
        guard grant.role >= .editor else {
            return ProtocolError(.forbidden, "viewers cannot send intents", id: id, room: room)
        }
        return nil
    }

    public func originAllowed(_ origin: String?) -> Bool {
        guard !allowedOrigins.isEmpty, let origin, !origin.isEmpty else { return true }
        return allowedOrigins.contains(origin)
    }
}
