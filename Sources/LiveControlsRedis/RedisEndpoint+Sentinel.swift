import Synchronization

/// One Redis Sentinel: host and port (26379 by default).
public struct SentinelAddress: Sendable, Equatable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int = 26379) {
        self.host = host
        self.port = port
    }

    public var description: String { hostAndPort(host, port) }
}

extension RedisEndpoint {
    /// A sentinel endpoint: the master of `masterName` as the sentinels name it.
    public init(sentinels: [SentinelAddress], masterName: String, database: Int = 0, username: String? = nil,
                password: String? = nil) {
        self.init(host: sentinels.first?.host ?? "", port: 6379, database: database, username: username, password: password)
        self.sentinels = sentinels
        self.masterName = masterName
    }

    /// What follows `redis-sentinel://`: `[[user]:password@]host[:port][,host[:port]…]/master[/db]`.
    static func sentinel(url: String) throws(RedisError) -> RedisEndpoint {
        func invalid(_ why: String) -> RedisError {
            RedisError(.invalidURL, "\"redis-sentinel://…\": \(why)")
        }
        var rest = Substring(url)
        var credentials: Substring = ""
        // Credentials end at the last @ before the path (a password's own @ and / are percent-encoded).
        if let at = rest[..<(rest.firstIndex(of: "/") ?? rest.endIndex)].lastIndex(of: "@") {
            credentials = rest[...at]
            rest = rest[rest.index(after: at)...]
        }
        guard let slash = rest.firstIndex(of: "/") else { throw invalid("name the master after the hosts: /mymaster") }
        let hosts = rest[..<slash]
        let path = rest[rest.index(after: slash)...].split(separator: "/", omittingEmptySubsequences: false)
        guard let name = path.first, !name.isEmpty, path.count <= 2, path.count == 1 || !path[1].isEmpty,
              !name.contains(where: { $0.isWhitespace || $0 == "?" || $0 == "#" }) else {
            throw invalid("expected /master or /master/db after the hosts")
        }
        // The master's credentials and database, read by the plain form's parser.
        var master = try RedisEndpoint(url: "redis://\(credentials)placeholder" + (path.count == 2 ? "/\(path[1])" : ""))
        var sentinels: [SentinelAddress] = []
        for host in hosts.split(separator: ",", omittingEmptySubsequences: false) {
            guard !host.isEmpty else { throw invalid("an empty host in the sentinel list") }
            let hasPort = host.hasPrefix("[") ? host.contains("]:") : host.contains(":")
            let one = try RedisEndpoint(url: "redis://\(host)")
            sentinels.append(SentinelAddress(host: one.host, port: hasPort ? one.port : 26379))
        }
        master.host = sentinels[0].host
        master.sentinels = sentinels
        master.masterName = String(name)
        return master
    }

    func renderSentinel(secret: String?) -> String {
        let user = username.map(Self.percentEncoded) ?? ""
        let credentials = password == nil ? (user.isEmpty ? "" : "\(user)@") : "\(user):\(secret ?? "")@"
        return (tls == nil ? "redis-sentinel://" : "rediss-sentinel://") + "\(credentials)" + sentinels.map(\.description).joined(separator: ",") + "/\(masterName ?? "")"
            + (database == 0 ? "" : "/\(database)")
    }

    /// Where the master is now: asks each sentinel in turn (`SENTINEL get-master-addr-by-name`), starting with the
    /// one that answered last (Redis's advice to sentinel clients: a sentinel that is down or slow then costs a
    /// failed attempt once, not on every reconnect). A plain endpoint is its own master. Throws `.connection` when no
    /// sentinel names one.
    func currentMaster(timeoutMilliseconds: Int) throws(RedisError) -> RedisEndpoint {
        guard let masterName else { return self }
        var failures: [String] = []
        let list = renderSentinel(secret: nil)
        let first = sentinelAnsweredLast.withLock { $0[list] } ?? 0
        for offset in sentinels.indices {
            let index = (first + offset) % sentinels.count
            let sentinel = sentinels[index]
            do {
                var asked = RedisEndpoint(host: sentinel.host, port: sentinel.port, username: sentinelUsername,
                                          password: sentinelPassword)
                asked.tls = tls
                let context = try HiredisContext.connect(asked, timeoutMilliseconds: timeoutMilliseconds)
                let reply = try context.command(["SENTINEL", "get-master-addr-by-name", masterName].map { Array($0.utf8) })
                if case let .array(parts) = reply, parts.count == 2, let host = parts[0].text,
                   let port = parts[1].text.flatMap({ Int($0) }) {
                    var master = self
                    master.host = host
                    master.port = port
                    if index != first { sentinelAnsweredLast.withLock { $0[list] = index } }
                    return master
                }
                failures.append("\(sentinel): " + (reply == .null ? "knows no master named \(masterName)" : "\(reply)"))
            } catch {
                failures.append(error.message)
            }
        }
        throw RedisError(.connection, "no sentinel named the master \(masterName): " + failures.joined(separator: "; "))
    }
}

/// Per sentinel list (as its URL renders without the password): the index of the sentinel that answered last.
private let sentinelAnsweredLast = Mutex<[String: Int]>([:])

extension RedisEndpoint {
    /// The server the sentinel asked first named is not the master (`ROLE`): ask the next one first from now on, so a
    /// sentinel with a stale view is not asked first on every reconnect.
    func passOverSentinel() {
        guard masterName != nil, sentinels.count > 1 else { return }
        let list = renderSentinel(secret: nil)
        sentinelAnsweredLast.withLock { $0[list] = (($0[list] ?? 0) + 1) % sentinels.count }
    }
}

extension HiredisContext {
    /// Sentinel mode: the server reached must be the master (`ROLE`); a demoted one (the old master after a
    /// failover, before the sentinels have told everyone) is refused as a `.connection` failure, so the caller
    /// asks the sentinels again.
    func checkMaster() throws(RedisError) {
        let reply = try command([Array("ROLE".utf8)])
        guard case let .array(parts) = reply, parts.first?.text == "master" else {
            let role = (reply.arrayFirstText ?? "\(reply)")
            throw RedisError(.connection, "\(endpoint) is not the master (its role: \(role)); asking the sentinels again")
        }
    }
}

extension RedisReply {
    fileprivate var arrayFirstText: String? {
        if case let .array(parts) = self { return parts.first?.text }
        return nil
    }
}
