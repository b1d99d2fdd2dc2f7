/// Where a Redis server is: host, TCP port, database number, and the credentials to `AUTH` with (a password,
/// and an ACL user name or none for `default`). Plain value; safe to pass between threads.
public struct RedisEndpoint: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var database: Int
    /// ACL user (Redis 6+); nil authenticates as `default` with `password` alone.
    public var username: String?
    /// Sent with `AUTH` on every connection; nil sends no `AUTH`.
    public var password: String?
    /// Sentinel mode (`redis-sentinel://`): the master's name, and the sentinels to ask where it is. Every connect
    /// asks them first and checks the server it reaches is the master; `host` and `port` are then the master last
    /// found. Nil: a plain endpoint.
    public var masterName: String? = nil
    public var sentinels: [SentinelAddress] = []
    /// Sentinel mode: what the sentinels themselves authenticate with (their own `requirepass` or ACL user), apart
    /// from the master's credentials; nil password sends them no `AUTH`.
    public var sentinelUsername: String? = nil
    public var sentinelPassword: String? = nil
    /// TLS for every connection (`rediss://`, `rediss-sentinel://`); nil: plain TCP.
    public var tls: RedisTLS? = nil
    /// Given to every connection with `CLIENT SETNAME` (after `AUTH` and `SELECT`), so `CLIENT LIST` shows whose it
    /// is; not a URL part. Refused (an ACL without `client`): the connection goes on unnamed. Nil: no name.
    public var clientName: String? = nil

    public init(host: String, port: Int = 6379, database: Int = 0, username: String? = nil, password: String? = nil) {
        self.host = host
        self.port = port
        self.database = database
        self.username = username
        self.password = password
    }

    /// Reads `redis://[[user]:password@]host[:port][/db]` or `host:port`, or the sentinel form
    /// `redis-sentinel://[[user]:password@]host[:port][,host[:port]…]/master[/db]` (sentinel port default 26379; the
    /// credentials and database are the master's). `rediss://` and `rediss-sentinel://` are the same over TLS
    /// (`tls` set to the defaults: the system's trust store). An IPv6 host goes in brackets
    /// (`redis://[::1]:6380`); the user name and password are percent-decoded (`%40` for `@`). Query strings and
    /// other schemes throw `RedisError(.invalidURL, …)`, as does anything else that is not of these shapes.
    public init(url: String) throws(RedisError) {
        let lowered = url.lowercased()
        for (scheme, tls) in [("redis-sentinel://", false), ("rediss-sentinel://", true)] where lowered.hasPrefix(scheme) {
            self = try Self.sentinel(url: String(url.dropFirst(scheme.count)))
            if tls { self.tls = RedisTLS() }
            return
        }
        if lowered.hasPrefix("rediss://") {
            self = try Self(url: "redis://" + url.dropFirst("rediss://".count))
            self.tls = RedisTLS()
            return
        }
        // Errors show the URL with its credentials masked: they end up on stderr and in logs.
        let shown: String = {
            guard let at = url.lastIndex(of: "@"), let scheme = url.range(of: "://"), scheme.upperBound <= at else {
                return url.contains("@") ? "(a URL with credentials)" : url
            }
            return String(url[..<scheme.upperBound]) + "***" + String(url[at...])
        }()
        func invalid(_ why: String) -> RedisError { RedisError(.invalidURL, "\"\(shown)\": \(why)") }
        var rest = Substring(url)
        let hasScheme: Bool
        if let schemeEnd = rest.firstRange(of: "://") {
            guard rest[..<schemeEnd.lowerBound].lowercased() == "redis" else {
                throw invalid("the scheme must be redis://, rediss:// (TLS), redis-sentinel:// or rediss-sentinel://")
            }
            rest = rest[schemeEnd.upperBound...]
            hasScheme = true
        } else {
            hasScheme = false
        }
        guard !rest.contains("?"), !rest.contains("#") else { throw invalid("query strings are not supported") }
        var username: String? = nil
        var password: String? = nil
        if let at = rest.lastIndex(of: "@") {
            guard hasScheme else { throw invalid("credentials need the redis:// form") }
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = credentials.firstIndex(of: ":") {
                guard let user = Self.percentDecoded(credentials[..<colon]), let secret = Self.percentDecoded(credentials[credentials.index(after: colon)...]) else {
                    throw invalid("bad percent-encoding in the credentials")
                }
                guard !secret.isEmpty else { throw invalid("an empty password") }
                username = user.isEmpty ? nil : user
                password = secret
            } else {
                // `user@host`: an ACL user whose password comes from elsewhere (LIVECONTROLS_REDIS_PASSWORD).
                guard let user = Self.percentDecoded(credentials), !user.isEmpty else { throw invalid("bad user name") }
                username = user
            }
        }

        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            guard hasScheme else { throw invalid("a database number needs the redis:// form") }
            let db = rest[rest.index(after: slash)...]
            if !db.isEmpty {
                guard db.allSatisfy(\.isASCIIDigit), let n = Int(db) else {
                    throw invalid("the database must be a number ≥ 0")
                }
                database = n
            }
            rest = rest[..<slash]
        }

        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw invalid("unclosed [ in the host") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("unexpected text after ]") }
                portText = after.dropFirst()
            }
        } else {
            let parts = rest.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2 else { throw invalid("an IPv6 host goes in brackets") }
            host = parts[0]
            portText = parts.count == 2 ? parts[1] : nil
        }
        guard !host.isEmpty, !host.contains(where: { $0.isWhitespace }) else { throw invalid("no host") }

        var port = 6379
        if let portText {
            guard portText.allSatisfy(\.isASCIIDigit), let p = Int(portText), (1...65535).contains(p) else {
                throw invalid("the port must be a number in 1…65535")
            }
            port = p
        } else if !hasScheme {
            throw invalid("expected redis://host[:port][/db] or host:port")
        }
        self.init(host: String(host), port: port, database: database, username: username, password: password)
    }

    /// `host:port` (`[v6]:port`), without credentials: where a connection goes.
    public var address: String { hostAndPort(host, port) }

    /// `redis://host:port`, plus `/db` when the database is not 0, for logs: a password shows as `***` (a user
    /// name as it is). `url` is the whole URL, credentials included, which `RedisEndpoint(url:)` reads back.
    /// A user name without a password (`user@host`, the password to come from elsewhere) shows as `user@`.
    public var description: String { masterName == nil ? render(secret: "***") : renderSentinel(secret: "***") }

    /// The URL with the password itself (percent-encoded): never for logs.
    public var url: String {
        masterName == nil ? render(secret: password.map(Self.percentEncoded)) : renderSentinel(secret: password.map(Self.percentEncoded))
    }

    func render(secret: String?) -> String {
        let user = username.map(Self.percentEncoded) ?? ""
        let credentials = password == nil ? (user.isEmpty ? "" : "\(user)@") : "\(user):\(secret ?? "")@"
        return (tls == nil ? "redis://" : "rediss://") + "\(credentials)\(hostAndPort(host, port))" + (database == 0 ? "" : "/\(database)")
    }

    private static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var i = text.utf8.startIndex
        let utf8 = text.utf8
        while i < utf8.endIndex {
            let byte = utf8[i]
            if byte == UInt8(ascii: "%") {
                let hi = utf8.index(after: i)
                guard hi < utf8.endIndex, utf8.index(after: hi) < utf8.endIndex,
                      utf8[hi...utf8.index(after: hi)].allSatisfy({ Character(Unicode.Scalar($0)).isHexDigit }),
                      let value = UInt8(String(decoding: utf8[hi...utf8.index(after: hi)], as: UTF8.self), radix: 16) else { return nil }
                bytes.append(value)
                i = utf8.index(hi, offsetBy: 2)
            } else {
                bytes.append(byte)
                i = utf8.index(after: i)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            let c = Character(Unicode.Scalar(byte))
            if byte < 0x80, c.isLetter || c.isNumber || "-._~".contains(c) {
                out.append(c)
            } else {
                out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return out
    }
}

extension RedisEndpoint {
    /// `AUTH [user] password`, or nil when there is no password.
    var authCommand: [[UInt8]]? {
        guard let password else { return nil }
        return [Array("AUTH".utf8)] + (username.map { [Array($0.utf8)] } ?? []) + [Array(password.utf8)]
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

/// `host:port`, with an IPv6 host in brackets (`[::1]:6379`).
func hostAndPort(_ host: String, _ port: Int) -> String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }
