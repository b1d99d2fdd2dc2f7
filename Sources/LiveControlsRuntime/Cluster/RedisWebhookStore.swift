import Dispatch
import LiveControlsEngine
import LiveControlsProtocol
import LiveControlsRedis

/// Cluster mode's webhook outbox, in Redis (keys `wh:<room>` and `whfailed`, see `ClusterKeys`).
///
/// A room's events are stored by its owner in the fenced script of the change they stand for
/// (`RedisRoomStore`), so Redis holds every event of every written change until each endpoint has it. Only the
/// room's owner sends them; a node that takes a room over first queues what the room's outbox still holds
/// (`ClusterDirectory.takeOver`), so what the lost owner had not sent goes out, with the same event ids. Outcomes
/// are recorded by whichever node made the attempt. The failed list is shared: any node lists and retries it.
///
/// Thread rules: reads run on the link queue (`link.queue.sync`, from the dispatcher's queue, which the link
/// queue never waits for); outcomes are pipelined.
final class RedisWebhookStore: WebhookStore, @unchecked Sendable {
    private let link: RedisLink
    private let keys: ClusterKeys
    /// The rooms this node owns now (a refill reads their outboxes); set once, before the directory starts.
    var ownedRooms: @Sendable () -> [String] = { [] }

    init(link: RedisLink, keys: ClusterKeys) {
        self.link = link
        self.keys = keys
    }

    /// Nothing at a node's start: a room's events are queued by the node that takes the room over.
    func prepareWebhooks(endpoints: [String], make: (String, UnannouncedChanges, Int) -> PendingWebhook?) throws -> Int { 0 }

    func pendingWebhooks(endpoint: String, limit: Int) throws -> [WebhookEvent] {
        let rooms = ownedRooms()
        return try link.queue.sync { () throws(RedisError) -> [WebhookEvent] in
            link.flushPipeline()  // the outcomes recorded so far first: nothing delivered is read back as pending
            var events: [WebhookEvent] = []
            for room in rooms where events.count < limit {
                for pending in try outbox(of: room) where pending.endpoints.contains(endpoint) {
                    events.append(pending.event)
                }
            }
            return Array(events.prefix(limit))
        }
    }

    /// Link queue: the events `room`'s outbox holds, oldest first.
    func outbox(of room: String) throws(RedisError) -> [PendingWebhook] {
        let reply = try link.run { c throws(RedisError) in try c.command(["HGETALL", keys.webhooks(room)]) }
        guard case let .array(pairs) = reply else { return [] }
        var numbered: [(Int, PendingWebhook)] = []
        var index = 0
        while index + 1 < pairs.count {
            defer { index += 2 }
            guard pairs[index].text != "#", let bytes = pairs[index + 1].bytes, let entry = Self.decode(bytes) else { continue }
            numbered.append(entry)
        }
        return numbered.sorted { $0.0 < $1.0 }.map(\.1)
    }

    func webhookDelivered(_ event: WebhookEvent, endpoint: String) {
        link.eval(ClusterScripts.webhookDone, keys: [keys.webhooks(event.room), keys.failedWebhooks],
                  args: [Array(event.id.utf8), Array(endpoint.utf8), [], []]) { _ in }
    }

    func webhookFailed(_ event: WebhookEvent, endpoint: String, attempts: Int, error: String, atMilliseconds: Int) {
        let record: JSONValue = ["endpoint": .string(endpoint), "attempts": .int(attempts), "error": .string(error),
                                 "failedAt": .int(atMilliseconds), "event": Self.json(event)]
        link.eval(ClusterScripts.webhookDone, keys: [keys.webhooks(event.room), keys.failedWebhooks],
                  args: [Array(event.id.utf8), Array(endpoint.utf8), Array((event.id + "\t" + endpoint).utf8), JSONWriter.encode(record)]) { _ in }
    }

    func failedWebhooks(limit: Int) throws -> [FailedWebhook] {
        try allFailed().map(\.failed).sorted { ($0.failedAt, $0.event.id) > ($1.failedAt, $1.event.id) }.prefix(limit).map { $0 }
    }

    func retryWebhook(eventID: String, allowed: (String) -> Bool) throws -> WebhookRetry {
        let failed = try allFailed().filter { $0.failed.event.id == eventID }
        guard let event = failed.first?.failed.event else { return .retried([]) }
        guard allowed(event.room) else { return .refused(room: event.room) }
        let endpoints = failed.map(\.failed.endpoint)
        let record = Self.record(PendingWebhook(event: event, endpoints: endpoints))
        let moved = try link.queue.sync { () throws(RedisError) -> Bool in
            try link.run { c throws(RedisError) in
                try c.eval(ClusterScripts.retryWebhook, keys: [keys.webhooks(event.room), keys.failedWebhooks],
                           args: [Array(eventID.utf8), Array(String(failed.count).utf8)] + failed.map { Array($0.field.utf8) } + [record])
            }.integer == 1
        }
        return .retried(moved ? endpoints.map { ($0, event) } : [])
    }

    private func allFailed() throws -> [(field: String, failed: FailedWebhook)] {
        let reply = try link.queue.sync { () throws(RedisError) -> RedisReply in
            try link.run { c throws(RedisError) in try c.command(["HGETALL", keys.failedWebhooks]) }
        }
        guard case let .array(pairs) = reply else { return [] }
        var failed: [(String, FailedWebhook)] = []
        var index = 0
        while index + 1 < pairs.count {
            defer { index += 2 }
            guard let field = pairs[index].text, let bytes = pairs[index + 1].bytes, let json = try? JSONParser.parse(bytes),
                  let endpoint = json["endpoint"]?.stringValue, let event = json["event"].flatMap(Self.event(json:))
            else { continue }
            failed.append((field, FailedWebhook(endpoint: endpoint, event: event, attempts: json["attempts"]?.intValue ?? 0,
                                                error: json["error"]?.stringValue ?? "", failedAt: json["failedAt"]?.intValue ?? 0)))
        }
        return failed
    }

    // MARK: Records

    /// What the outbox hash holds for one event, after its number: `<endpoint URLs, tab-separated>\n<event JSON>`.
    static func record(_ webhook: PendingWebhook) -> [UInt8] {
        Array((webhook.endpoints.joined(separator: "\t") + "\n").utf8) + JSONWriter.encode(json(webhook.event))
    }

    /// `<seq>\n<endpoints>\n<event JSON>`: nil when malformed.
    static func decode(_ bytes: [UInt8]) -> (Int, PendingWebhook)? {
        let parts = bytes.split(separator: 0x0A, maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let seq = Int(String(decoding: parts[0], as: UTF8.self)),
              let json = try? JSONParser.parse(Array(parts[2])), let event = event(json: json)
        else { return nil }
        let endpoints = String(decoding: parts[1], as: UTF8.self).split(separator: "\t").map(String.init)
        return (seq, PendingWebhook(event: event, endpoints: endpoints))
    }

    static func json(_ event: WebhookEvent) -> JSONValue {
        ["id": .string(event.id), "type": .string(event.type), "room": .string(event.room), "timestamp": .int(event.timestamp),
         "data": .object(event.data)]
    }

    static func event(json: JSONValue) -> WebhookEvent? {
        guard let id = json["id"]?.stringValue, let type = json["type"]?.stringValue, let room = json["room"]?.stringValue,
              let timestamp = json["timestamp"]?.intValue, let data = json["data"]?.objectValue
        else { return nil }
        return WebhookEvent(id: id, type: type, room: room, timestamp: timestamp, data: data)
    }
}

/// A room's unannounced changes as the owner keeps them in its state hash (field `u`).
extension UnannouncedChanges {
    var json: JSONValue {
        ["epoch": .string(epoch), "fromVersion": .int(fromVersion), "controls": .array(controls.map { .string($0) }), "presence": .bool(presence)]
    }

    init?(json: JSONValue) {
        guard let epoch = json["epoch"]?.stringValue, let from = json["fromVersion"]?.intValue else { return nil }
        self.init(epoch: epoch, fromVersion: from, controls: json["controls"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                  presence: json["presence"] == .bool(true))
    }
}
