/// Where a Redis server is: host, TCP port and database number. Plain value; safe to pass between threads.
public struct RedisEndpoint: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var database: Int

    public init(host: String, port: Int = 6379, database: Int = 0) {
        self.host = host
        self.port = port
        self.database = database
    }

    /// Reads `redis://host[:port][/db]` or `host:port`. An IPv6 host goes in brackets (`redis://[::1]:6380`).
    /// Passwords, user names, query strings and other schemes (`rediss://`) are not supported and throw
    /// `RedisError(.invalidURL, …)`, as does anything else that is not of these shapes.
    public init(url: String) throws(RedisError) {
        func invalid(_ why: String) -> RedisError { RedisError(.invalidURL, "\"\(url)\": \(why)") }
        var rest = Substring(url)
        let hasScheme: Bool
        if let schemeEnd = rest.firstRange(of: "://") {
            guard rest[..<schemeEnd.lowerBound].lowercased() == "redis" else {
                throw invalid("the scheme must be redis://")
            }
            rest = rest[schemeEnd.upperBound...]
            hasScheme = true
        } else {
            hasScheme = false
        }
        guard !rest.contains("@") else { throw invalid("user names and passwords are not supported") }
        guard !rest.contains("?"), !rest.contains("#") else { throw invalid("query strings are not supported") }

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
        self.init(host: String(host), port: port, database: database)
    }

    /// `redis://host:port`, plus `/db` when the database is not 0; `RedisEndpoint(url:)` reads it back.
    public var description: String {
        let h = host.contains(":") ? "[\(host)]" : host
        return "redis://\(h):\(port)" + (database == 0 ? "" : "/\(database)")
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
