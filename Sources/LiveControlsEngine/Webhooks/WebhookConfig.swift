import LiveControlsProtocol

/// One receiver of webhooks (config `webhooks: [{url, events, secret, …}]`).
public struct WebhookEndpoint: Sendable, Equatable {
    /// `http://` or `https://`; also the endpoint's identity in the store (a delivery for a URL no longer in the
    /// config is dropped at start).
    public var url: String
    /// Event types it gets: exact names, `"room.*"`-style prefixes, or `"*"`.
    public var events: [String]
    /// The signing key: the bytes of the `whsec_…` secret (Standard Webhooks).
    public var key: [UInt8]
    /// How long one attempt may take.
    public var timeoutMs: Int
    /// Attempts before a delivery is kept as failed.
    public var maxAttempts: Int
    /// The wait before the first retry; each later one doubles (at most `maxRetryMs`), with jitter.
    public var retryMs: Int
    public var maxRetryMs: Int
    /// Deliveries that may wait for this endpoint in the store (`--data-dir`); past it new events are given up at once
    /// into the failed list (the outbox on disk stays bounded while a receiver never answers).
    public var maxPending: Int

    public static let defaultTimeoutMs = 10_000
    public static let defaultMaxPending = 100_000
    public static let defaultMaxAttempts = 8
    public static let defaultRetryMs = 1_000
    public static let defaultMaxRetryMs = 300_000

    public init(url: String, events: [String], key: [UInt8], timeoutMs: Int = Self.defaultTimeoutMs, maxAttempts: Int = Self.defaultMaxAttempts,
                retryMs: Int = Self.defaultRetryMs, maxRetryMs: Int = Self.defaultMaxRetryMs, maxPending: Int = Self.defaultMaxPending) {
        self.url = url
        self.events = events
        self.key = key
        self.timeoutMs = timeoutMs
        self.maxAttempts = maxAttempts
        self.retryMs = retryMs
        self.maxRetryMs = maxRetryMs
        self.maxPending = maxPending
    }

    /// Whether this endpoint gets events of `type`.
    public func wants(_ type: String) -> Bool {
        events.contains { pattern in
            pattern == "*" || pattern == type || (pattern.hasSuffix(".*") && type.hasPrefix(pattern.dropLast()))
        }
    }
}

/// The webhook events the server sends (docs/PROTOCOL.md, *Webhooks*).
public enum WebhookEventType {
    public static let all = [
        "room.created", "room.unloaded", "room.deleted", "member.joined", "member.left", "user.joined", "user.left", "form.completed",
        "wizard.completed", "wizard.exited", "hold.ended", "timer.finished", "poll.closed", "poll.revealed", "room.changed",
    ]

    /// Whether `pattern` (an `events` entry) names at least one event type.
    static func isKnown(_ pattern: String) -> Bool {
        pattern == "*" || all.contains(pattern) || (pattern.hasSuffix(".*") && all.contains { $0.hasPrefix(pattern.dropLast()) })
    }
}

extension WebhookEndpoint {
    /// Reads one `webhooks` entry.
    static func parse(_ node: ConfigNode) throws(ConfigError) -> WebhookEndpoint {
        _ = try node.object(allowed: ["url", "events", "secret", "timeoutMs", "maxAttempts", "retryMs", "maxRetryMs", "maxPending"])
        let url = try node.receiverURL("url")
        guard let eventsNode = node["events"] else { throw node.error(at: "events", "required array is missing") }
        var events: [String] = []
        for item in try eventsNode.array() {
            guard let name = item.value.stringValue, WebhookEventType.isKnown(name) else {
                throw item.error("must be an event type (\(WebhookEventType.all.joined(separator: ", "))), a prefix such as \"room.*\", or \"*\"")
            }
            events.append(name)
        }
        guard !events.isEmpty else { throw eventsNode.error("name at least one event type (or \"*\")") }
        let key = try node.signingKey("secret")
        func bounded(_ key: String, _ value: Int, _ range: ClosedRange<Int>) throws(ConfigError) -> Int {
            try node.bounded(key, value, range)
        }
        let retryMs = try bounded("retryMs", try node.int("retryMs", default: defaultRetryMs), 1...3_600_000)
        return WebhookEndpoint(
            url: url, events: events, key: key,
            timeoutMs: try bounded("timeoutMs", try node.int("timeoutMs", default: defaultTimeoutMs), 100...120_000),
            maxAttempts: try bounded("maxAttempts", try node.int("maxAttempts", default: defaultMaxAttempts), 1...50),
            retryMs: retryMs,
            maxRetryMs: try bounded("maxRetryMs", try node.int("maxRetryMs", default: max(defaultMaxRetryMs, retryMs)), retryMs...86_400_000),
            maxPending: try bounded("maxPending", try node.int("maxPending", default: defaultMaxPending), 1...10_000_000))
    }
}

extension ConfigNode {
    /// An `http://` or `https://` URL the server POSTs to (a webhook endpoint, an intent hook).
    func receiverURL(_ key: String) throws(ConfigError) -> String {
        let url = try string(key)
        guard url.hasPrefix("http://") || url.hasPrefix("https://"), url.count > 8, !url.contains(where: \.isWhitespace) else {
            throw error(at: key, "must be an http:// or https:// URL")
        }
        return url
    }

    /// A Standard Webhooks secret (`whsec_` and 16 to 64 bytes in base64): its key bytes.
    func signingKey(_ key: String) throws(ConfigError) -> [UInt8] {
        let secret = try string(key)
        guard secret.hasPrefix("whsec_"), let bytes = Base64.decode(String(secret.dropFirst(6))), bytes.count >= 16, bytes.count <= 64 else {
            throw error(at: key, "must be whsec_ followed by 16 to 64 random bytes in base64 (for example: whsec_$(openssl rand -base64 32))")
        }
        return bytes
    }

    /// `value` (read from `key`) if it is within `range`.
    func bounded(_ key: String, _ value: Int, _ range: ClosedRange<Int>) throws(ConfigError) -> Int {
        guard range.contains(value) else { throw error(at: key, "must be within \(range.lowerBound)…\(range.upperBound)") }
        return value
    }
}

extension WebhookEndpoint {
    /// `url` as answers and logs may show it: without its userinfo (`user:password@`), query and fragment, which may
    /// carry credentials (`?token=…`); scheme, host, port and path only.
    public static func redacted(_ url: String) -> String {
        let chars = Array(url.utf8)
        guard let colon = chars.indices.first(where: { chars[$0...].starts(with: Array("://".utf8)) }) else { return "(not a URL)" }
        let afterScheme = url.utf8.index(url.utf8.startIndex, offsetBy: colon + 3)
        var rest = url[afterScheme...]
        if let cut = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<cut] }
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        return String(url[..<afterScheme]) + authority + rest[authorityEnd...]
    }

    public var redactedURL: String { Self.redacted(url) }
}
