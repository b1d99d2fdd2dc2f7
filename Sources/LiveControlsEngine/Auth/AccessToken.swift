import LiveControlsProtocol

/// What a token lets its holder do.
public enum Role: String, Sendable, CaseIterable, Comparable {
    /// Receives state; every intent is refused with `forbidden`.
    case viewer
    /// Sends intents.
    case editor
    /// Also creates rooms from any template.
    case admin

    public static func < (a: Role, b: Role) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    /// A role name (built-in or custom, like `host`): 1…64 of `A-Z a-z 0-9 _ - . :`.
    public static func isValidName(_ name: String) -> Bool { ClientMessage.isValidName(name) }

    /// How many custom roles one token may carry.
    public static let maxCustomRoles = 16
}

/// The claims of a LiveControls token: an HS256-signed JWT.
///
/// `{"sub": "…", "name": "Ann", "role": "editor", "roles": ["host"], "rooms": ["demo", "team-*"], "exp": 1767225600, "iat": …}`.
/// `role` is what the holder may do at all; `roles` (optional) names custom roles a template's `permissions` may ask for.
/// A room pattern is an exact name, a prefix ending in `*`, or `*` for every room.
public struct AccessToken: Sendable, Equatable {
    public var subject: String?
    public var name: String?
    /// Whether `name` may be a token's display name: the same bound as a join's `name`.
    public static func isValidName(_ name: String) -> Bool { name.count <= ClientMessage.maxNameLength }
    public var role: Role
    /// Custom roles (`host`, `reviewer`…), beside `role`.
    public var roles: [String]
    public var rooms: [String]
    /// Seconds since 1970 (UTC) after which the token is refused.
    public var expiresAt: Int
    public var issuedAt: Int?

    public init(subject: String? = nil, name: String? = nil, role: Role, roles: [String] = [], rooms: [String], expiresAt: Int, issuedAt: Int? = nil) {
        self.subject = subject
        self.name = name
        self.role = role
        self.roles = roles
        self.rooms = rooms
        self.expiresAt = expiresAt
        self.issuedAt = issuedAt
    }

    public func allows(room: String) -> Bool { Self.patterns(rooms, allow: room) }

    /// Every role the holder has, as a room's members list them: `role`, then the custom `roles`.
    public var allRoles: [String] { [role.rawValue] + roles.filter { $0 != role.rawValue } }

    /// Whether one of `patterns` (a room name, `prefix*`, or `*`) names `room`.
    public static func patterns(_ patterns: [String], allow room: String) -> Bool {
        patterns.contains { pattern in
            if pattern == "*" { return true }
            if pattern.hasSuffix("*") { return room.hasPrefix(pattern.dropLast()) }
            return pattern == room
        }
    }

    var claims: JSONValue {
        var o = JSONObject()
        if let subject { o["sub"] = .string(subject) }
        if let name { o["name"] = .string(name) }
        o["role"] = .string(role.rawValue)
        if !roles.isEmpty { o["roles"] = .array(roles.map { .string($0) }) }
        o["rooms"] = .array(rooms.map { .string($0) })
        if let issuedAt { o["iat"] = .int(issuedAt) }
        o["exp"] = .int(expiresAt)
        return .object(o)
    }
}

/// Why a token was refused.
public enum TokenError: Error, Equatable, Sendable {
    /// Not a well-formed HS256 JWT, a bad signature, or claims of the wrong shape (`unauthorized`).
    case invalid(String)
    /// Correctly signed, but past its `exp` (`token_expired`).
    case expired
}

/// Signs and verifies tokens with one shared secret (HMAC-SHA256). The secret is never printed.
public struct TokenAuthority: Sendable {
    private let secret: [UInt8]

    public init(secret: String) {
        self.secret = Array(secret.utf8)
    }

    public func sign(_ token: AccessToken) -> String {
        let header = Base64URL.encode(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let payload = Base64URL.encode(JSONWriter.encode(token.claims))
        let signingInput = header + "." + payload
        return signingInput + "." + Base64URL.encode(HMACSHA256.authenticate(Array(signingInput.utf8), key: secret))
    }

    /// A JWT NumericDate (RFC 7519 §2): seconds since 1970, which may have a fraction (cut to the second before).
    static func numericDate(_ value: JSONValue) -> Int? {
        switch value {
        case let .int(seconds): return seconds
        case let .double(seconds) where seconds.isFinite && abs(seconds) < 1e15: return Int(seconds.rounded(.down))
        default: return nil
        }
    }

    /// Checks the signature first, then the claims, then the expiry against `now` (seconds since 1970).
    public func verify(_ text: String, now: Int) throws(TokenError) -> AccessToken {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let payloadBytes = Base64URL.decode(parts[1]),
              let signature = Base64URL.decode(parts[2])
        else { throw .invalid("not a JWT (three base64url parts)") }
        let expected = HMACSHA256.authenticate(Array(text.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count)), key: secret)
        guard HMACSHA256.constantTimeEqual(signature, expected) else { throw .invalid("bad signature") }
        guard let header = try? JSONParser.parse(headerBytes), header["alg"]?.stringValue == "HS256" else {
            throw .invalid("only alg HS256 is accepted")
        }
        guard let claims = try? JSONParser.parse(payloadBytes), claims.objectValue != nil else { throw .invalid("claims are not a JSON object") }
        guard let roleName = claims["role"]?.stringValue, let role = Role(rawValue: roleName) else {
            throw .invalid("role must be viewer, editor or admin")
        }
        var roles: [String] = []
        if let rolesValue = claims["roles"] {
            guard let list = rolesValue.arrayValue, list.count <= Role.maxCustomRoles,
                  case let names = list.compactMap(\.stringValue), names.count == list.count, names.allSatisfy(Role.isValidName)
            else { throw .invalid("roles must be an array of at most \(Role.maxCustomRoles) role names (1–64 characters of A–Z a–z 0–9 _ - . :)") }
            // Custom roles give no access of their own: a built-in name there would pass as that role.
            if let builtin = names.first(where: { Role(rawValue: $0) != nil }) {
                throw .invalid("roles lists custom roles only; \(builtin) belongs in role")
            }
            roles = names
        }
        guard let roomValues = claims["rooms"]?.arrayValue else { throw .invalid("rooms must be an array of room names or prefixes") }
        let rooms = roomValues.compactMap(\.stringValue)
        guard rooms.count == roomValues.count else { throw .invalid("rooms must be strings") }
        guard let expValue = claims["exp"] else { throw .invalid("exp (expiry, seconds since 1970) is required") }
        guard let exp = Self.numericDate(expValue) else { throw .invalid("exp must be a number of seconds since 1970") }
        var name: String? = nil
        if let nameValue = claims["name"], nameValue != .null {
            guard let s = nameValue.stringValue, AccessToken.isValidName(s) else {
                throw .invalid("name must be a string of at most \(ClientMessage.maxNameLength) characters")
            }
            name = s
        }
        let token = AccessToken(subject: claims["sub"]?.stringValue, name: name, role: role, roles: roles, rooms: rooms,
                                expiresAt: exp, issuedAt: claims["iat"].flatMap(Self.numericDate))
        guard now < exp else { throw .expired }
        return token
    }
}

/// Base64url without padding (RFC 4648 §5), as JWTs use it.
public enum Base64URL {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    public static func encode(_ bytes: [UInt8]) -> String { RFC4648.encode(bytes, alphabet: alphabet, padded: false) }

    /// Canonical spellings only (see `RFC4648.decode`); `=` is not accepted.
    public static func decode<S: StringProtocol>(_ text: S) -> [UInt8]? { RFC4648.decode(text, alphabet: alphabet, padding: false) }
}

/// Standard base64 (RFC 4648 §4), padded, as Standard Webhooks secrets and signatures use it.
public enum Base64 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    public static func encode(_ bytes: [UInt8]) -> String { RFC4648.encode(bytes, alphabet: alphabet, padded: true) }

    /// With or without trailing `=`; canonical spellings only.
    public static func decode<S: StringProtocol>(_ text: S) -> [UInt8]? { RFC4648.decode(text, alphabet: alphabet, padding: true) }
}

/// The base64 of RFC 4648 in either alphabet.
enum RFC4648 {
    static func encode(_ bytes: [UInt8], alphabet: [UInt8], padded: Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let rest = min(3, bytes.count - i)
            var n = UInt32(bytes[i]) << 16
            if rest > 1 { n |= UInt32(bytes[i + 1]) << 8 }
            if rest > 2 { n |= UInt32(bytes[i + 2]) }
            for j in 0...rest { out.append(alphabet[Int(n >> (18 - 6 * UInt32(j)) & 63)]) }
            if padded { out.append(contentsOf: repeatElement(UInt8(ascii: "="), count: 3 - rest)) }
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes, or nil for a character outside the alphabet (or `=` anywhere but at the end, when allowed), a
    /// length no encoding has, or a non-canonical spelling: the bits of a last partial group beyond its bytes must
    /// be zero, so one value has one spelling (a token's string then names it exactly, as revocation lists need).
    static func decode<S: StringProtocol>(_ text: S, alphabet: [UInt8], padding: Bool) -> [UInt8]? {
        var utf8 = Array(text.utf8)
        if padding { while utf8.last == UInt8(ascii: "=") { utf8.removeLast() } }
        var values: [UInt8] = []
        values.reserveCapacity(utf8.count)
        for c in utf8 {
            guard let v = alphabet.firstIndex(of: c) else { return nil }
            values.append(UInt8(v))
        }
        guard values.count % 4 != 1 else { return nil }
        if values.count % 4 == 2, values[values.count - 1] & 0x0F != 0 { return nil }
        if values.count % 4 == 3, values[values.count - 1] & 0x03 != 0 { return nil }
        var out: [UInt8] = []
        var i = 0
        while i < values.count {
            let chunk = values[i..<min(i + 4, values.count)]
            var n: UInt32 = 0
            for (j, v) in chunk.enumerated() { n |= UInt32(v) << (18 - 6 * UInt32(j)) }
            out.append(UInt8(n >> 16 & 0xFF))
            if chunk.count > 2 { out.append(UInt8(n >> 8 & 0xFF)) }
            if chunk.count > 3 { out.append(UInt8(n & 0xFF)) }
            i += 4
        }
        return out
    }
}
