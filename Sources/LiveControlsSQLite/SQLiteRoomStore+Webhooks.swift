import LiveControlsEngine
import LiveControlsProtocol
import Synchronization

/// The outbox's bounds (issue 38: a receiver that never answers grew the store ~190 KB/s without end): deliveries
/// pending per endpoint (`WebhookEndpoint.maxPending`; past it a new event is stored as failed at once, with its
/// reason) and failed deliveries in all (`maxFailed`; the oldest are forgotten past it). Counted in memory from the
/// database at start (and again after a rolled-back write). Writer queue, but `givenUp` (any thread).
final class WebhookOutboxBounds: @unchecked Sendable {
    static let maxFailed = 10_000
    var limits: [String: Int] = [:]
    private(set) var pending: [String: Int] = [:]
    private(set) var failed = 0
    /// Given up by writes not yet committed (writer queue), then by committed ones, until taken (any thread).
    private var staged: [String: [String]] = [:]
    private let givenUp = Mutex<[String: [String]]>([:])

    func reload(_ db: SQLiteDatabase) throws {
        pending = [:]
        let counts = try db.prepare("SELECT endpoint, count(*) FROM webhook_delivery WHERE state = 'pending' GROUP BY endpoint")
            .rows([]) { row in (row.text(0)!, row.int(1)) }
        for (endpoint, count) in counts { pending[endpoint] = count }
        failed = try db.prepare("SELECT count(*) FROM webhook_delivery WHERE state = 'failed'").rows { $0.int(0) }.first ?? 0
    }

    /// Whether a new delivery of `eventID` for `endpoint` may wait (counted), or is given up (counted as failed).
    func admit(_ endpoint: String, eventID: String) -> Bool {
        if pending[endpoint, default: 0] < limits[endpoint, default: WebhookEndpoint.defaultMaxPending] {
            pending[endpoint, default: 0] += 1
            return true
        }
        failed += 1
        staged[endpoint, default: []].append(eventID)
        return false
    }

    /// The write committed: what it gave up is told (`takeGivenUp`).
    func committed() {
        guard !staged.isEmpty else { return }
        let batch = staged
        staged.removeAll()
        givenUp.withLock { for (endpoint, ids) in batch { $0[endpoint, default: []] += ids } }
    }

    /// The write was rolled back: nothing it gave up happened.
    func rolledBack() { staged.removeAll() }

    func left(pending endpoint: String) { pending[endpoint] = max(0, pending[endpoint, default: 0] - 1) }
    func becameFailed(_ endpoint: String) { left(pending: endpoint); failed += 1 }
    func leftFailed() { failed = max(0, failed - 1) }
    func takeGivenUp() -> [String: [String]] { givenUp.withLock { g in defer { g.removeAll() }; return g } }
}

/// The webhook outbox in the same database as the rooms: an event is inserted in the transaction of the change it
/// stands for, with one delivery row per endpoint, and forgotten once delivered everywhere.
///
/// Tables: `webhook_event` (in the order events happened: `seq`), `webhook_delivery` (`pending` or `failed`, per
/// endpoint), `webhook_unannounced` (a room's changes since its last `room.changed` event).
struct WebhookStatements {
    let insertEvent, insertDelivery, insertGivenUp, deleteDelivery, deleteOrphanEvent, failDelivery, setUnannounced, clearUnannounced,
        selectUnannounced, pruneFailed, pruneEvents: SQLiteStatement
    let bounds = WebhookOutboxBounds()

    init(_ db: SQLiteDatabase) throws {
        try db.execute("""
            CREATE TABLE IF NOT EXISTS webhook_event(seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, room TEXT NOT NULL,
              type TEXT NOT NULL, timestamp INTEGER NOT NULL, data TEXT NOT NULL) STRICT;
            CREATE TABLE IF NOT EXISTS webhook_delivery(endpoint TEXT NOT NULL, event_seq INTEGER NOT NULL, state TEXT NOT NULL,
              attempts INTEGER NOT NULL DEFAULT 0, error TEXT, failed_at INTEGER, PRIMARY KEY (endpoint, event_seq)) STRICT, WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS webhook_unannounced(room TEXT PRIMARY KEY, epoch TEXT NOT NULL, from_version INTEGER NOT NULL,
              controls TEXT NOT NULL, presence INTEGER NOT NULL) STRICT;
            """)
        insertEvent = try db.prepare("INSERT INTO webhook_event(id, room, type, timestamp, data) VALUES (?1, ?2, ?3, ?4, ?5)")
        insertDelivery = try db.prepare("""
            INSERT OR IGNORE INTO webhook_delivery(endpoint, event_seq, state) SELECT ?2, seq, 'pending' FROM webhook_event WHERE id = ?1
            """)
        insertGivenUp = try db.prepare("""
            INSERT OR IGNORE INTO webhook_delivery(endpoint, event_seq, state, attempts, error, failed_at)
            SELECT ?2, seq, 'failed', 0, ?3, ?4 FROM webhook_event WHERE id = ?1
            """)
        deleteDelivery = try db.prepare("""
            DELETE FROM webhook_delivery WHERE endpoint = ?2 AND event_seq = (SELECT seq FROM webhook_event WHERE id = ?1) RETURNING state
            """)
        pruneFailed = try db.prepare("""
            DELETE FROM webhook_delivery WHERE (endpoint, event_seq) IN
              (SELECT endpoint, event_seq FROM webhook_delivery WHERE state = 'failed' ORDER BY failed_at, event_seq LIMIT ?1)
            """)
        pruneEvents = try db.prepare("DELETE FROM webhook_event WHERE NOT EXISTS (SELECT 1 FROM webhook_delivery WHERE event_seq = webhook_event.seq)")
        deleteOrphanEvent = try db.prepare("""
            DELETE FROM webhook_event WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM webhook_delivery WHERE event_seq = webhook_event.seq)
            """)
        failDelivery = try db.prepare("""
            UPDATE webhook_delivery SET state = 'failed', attempts = ?3, error = ?4, failed_at = ?5
            WHERE endpoint = ?2 AND event_seq = (SELECT seq FROM webhook_event WHERE id = ?1) AND state = 'pending' RETURNING 1
            """)
        setUnannounced = try db.prepare("""
            INSERT INTO webhook_unannounced(room, epoch, from_version, controls, presence) VALUES (?1, ?2, ?3, ?4, ?5)
            ON CONFLICT(room) DO UPDATE SET epoch = ?2, from_version = ?3, controls = ?4, presence = ?5
            """)
        clearUnannounced = try db.prepare("DELETE FROM webhook_unannounced WHERE room = ?1")
        selectUnannounced = try db.prepare("SELECT epoch, from_version, controls, presence FROM webhook_unannounced WHERE room = ?1")
    }

    func insert(_ webhooks: [PendingWebhook]) throws {
        for webhook in webhooks where !webhook.endpoints.isEmpty {
            let e = webhook.event
            try insertEvent.run([.text(e.id), .text(e.room), .text(e.type), .int(e.timestamp), .text(JSONWriter.string(.object(e.data)))])
            for endpoint in webhook.endpoints {
                if bounds.admit(endpoint, eventID: e.id) {
                    try insertDelivery.run([.text(e.id), .text(endpoint)])
                } else {
                    let limit = bounds.limits[endpoint, default: WebhookEndpoint.defaultMaxPending]
                    try insertGivenUp.run([.text(e.id), .text(endpoint),
                                           .text("given up at once: \(limit) deliveries already wait for this endpoint (maxPending)"),
                                           .int(e.timestamp)])
                }
            }
        }
        try pruneFailedIfNeeded()
    }

    /// Past `maxFailed` failed deliveries (and 1 % more, so that pruning is rare), the oldest go.
    func pruneFailedIfNeeded() throws {
        let limit = WebhookOutboxBounds.maxFailed
        guard bounds.failed > limit + limit / 100 else { return }
        try pruneFailed.run([.int(bounds.failed - limit)])
        try pruneEvents.run()
        for _ in 0..<(bounds.failed - limit) { bounds.leftFailed() }
    }

    /// The room's unannounced changes, if any (writer queue).
    func unannounced(room: String) throws -> UnannouncedChanges? {
        try selectUnannounced.rows([.text(room)]) { row in
            UnannouncedChanges(epoch: row.text(0)!, fromVersion: row.int(1),
                               controls: (try? JSONParser.parse(row.text(2)!))?.arrayValue?.compactMap(\.stringValue) ?? [],
                               presence: row.int(3) != 0)
        }.first
    }

    func setUnannounced(room: String, _ changes: UnannouncedChanges) throws {
        let controls = JSONWriter.string(.array(changes.controls.map { .string($0) }))
        try setUnannounced.run([.text(room), .text(changes.epoch), .int(changes.fromVersion), .text(controls), .int(changes.presence ? 1 : 0)])
    }

    func record(eventID: String, endpoint: String, failure: (attempts: Int, error: String, at: Int)?) throws {
        if let failure {
            let changed = try failDelivery.rows([.text(eventID), .text(endpoint), .int(failure.attempts), .text(failure.error), .int(failure.at)]) { $0.int(0) }
            if !changed.isEmpty { bounds.becameFailed(endpoint) }
            try pruneFailedIfNeeded()
        } else {
            let states = try deleteDelivery.rows([.text(eventID), .text(endpoint)]) { $0.text(0) ?? "" }
            for state in states { if state == "pending" { bounds.left(pending: endpoint) } else { bounds.leftFailed() } }
            try deleteOrphanEvent.run([.text(eventID)])
        }
    }
}

extension SQLiteRoomStore: WebhookStore {
    public func boundPending(_ limits: [String: Int]) {
        writer.sync { hooks.bounds.limits = limits }
    }

    public func takeGivenUp() -> [String: [String]] { hooks.bounds.takeGivenUp() }

    public func prepareWebhooks(endpoints: [String], make: (_ room: String, _ changes: UnannouncedChanges, _ toVersion: Int) -> PendingWebhook?) throws -> Int {
        try writer.sync {
            flush()
            try db.execute("BEGIN IMMEDIATE")
            do {
                let unannounced = try db.prepare("""
                    SELECT u.room, u.epoch, u.from_version, u.controls, u.presence, r.version FROM webhook_unannounced u
                    JOIN room r ON r.name = u.room AND r.epoch = u.epoch
                    """).rows { row in
                    (row.text(0)!, UnannouncedChanges(epoch: row.text(1)!, fromVersion: row.int(2),
                                                      controls: (try? JSONParser.parse(row.text(3)!))?.arrayValue?.compactMap(\.stringValue) ?? [],
                                                      presence: row.int(4) != 0), row.int(5))
                }
                for (room, changes, version) in unannounced where version >= changes.fromVersion {
                    if let webhook = make(room, changes, version) { try hooks.insert([webhook]) }
                }
                try db.execute("DELETE FROM webhook_unannounced")
                // The configured URLs as one bound JSON array: no URL is ever spliced into the SQL.
                let known: [SQLiteValue] = [.text(JSONWriter.string(.array(endpoints.map { .string($0) })))]
                let unknown = "FROM webhook_delivery WHERE endpoint NOT IN (SELECT value FROM json_each(?1))"
                let dropped = try db.prepare("SELECT count(*) \(unknown)").rows(known) { $0.int(0) }.first ?? 0
                try db.prepare("DELETE \(unknown)").run(known)
                try db.execute("DELETE FROM webhook_event WHERE NOT EXISTS (SELECT 1 FROM webhook_delivery WHERE event_seq = webhook_event.seq)")
                try hooks.bounds.reload(db)
                try hooks.pruneFailedIfNeeded()
                try db.execute("COMMIT")
                return dropped
            } catch {
                try? db.execute("ROLLBACK")
                throw error
            }
        }
    }

    public func pendingWebhooks(endpoint: String, limit: Int) throws -> [WebhookEvent] {
        try writer.sync {
            flush()
            return try db.prepare("""
                SELECT e.id, e.type, e.room, e.timestamp, e.data FROM webhook_delivery d JOIN webhook_event e ON e.seq = d.event_seq
                WHERE d.endpoint = ?1 AND d.state = 'pending' ORDER BY e.seq LIMIT ?2
                """).rows([.text(endpoint), .int(limit)]) { row in try Self.event(row, from: 0) }
        }
    }

    public func webhookDelivered(_ event: WebhookEvent, endpoint: String) {
        enqueue(.delivery(eventID: event.id, endpoint: endpoint, failure: nil)) { _ in }
    }

    public func webhookFailed(_ event: WebhookEvent, endpoint: String, attempts: Int, error: String, atMilliseconds: Int) {
        enqueue(.delivery(eventID: event.id, endpoint: endpoint, failure: (attempts, error, atMilliseconds))) { _ in }
    }

    public func failedWebhooks(limit: Int) throws -> [FailedWebhook] {
        try writer.sync {
            flush()
            return try db.prepare("""
                SELECT e.id, e.type, e.room, e.timestamp, e.data, d.endpoint, d.attempts, d.error, d.failed_at
                FROM webhook_delivery d JOIN webhook_event e ON e.seq = d.event_seq
                WHERE d.state = 'failed' ORDER BY d.failed_at DESC, e.seq DESC LIMIT ?1
                """).rows([.int(limit)]) { row in
                FailedWebhook(endpoint: row.text(5)!, event: try Self.event(row, from: 0), attempts: row.int(6), error: row.text(7) ?? "",
                              failedAt: row.int(8))
            }
        }
    }

    public func retryWebhook(eventID: String, allowed: (String) -> Bool) throws -> WebhookRetry {
        try writer.sync {
            flush()
            let failed = try db.prepare("""
                SELECT e.id, e.type, e.room, e.timestamp, e.data, d.endpoint FROM webhook_delivery d JOIN webhook_event e ON e.seq = d.event_seq
                WHERE e.id = ?1 AND d.state = 'failed'
                """).rows([.text(eventID)]) { row in (endpoint: row.text(5)!, event: try Self.event(row, from: 0)) }
            if let room = failed.first?.event.room, !allowed(room) { return .refused(room: room) }
            try db.prepare("""
                UPDATE webhook_delivery SET state = 'pending', attempts = 0, error = NULL, failed_at = NULL
                WHERE state = 'failed' AND event_seq = (SELECT seq FROM webhook_event WHERE id = ?1)
                """).run([.text(eventID)])
            try hooks.bounds.reload(db)  // (a retry asked for may take an endpoint past its bound: it is the operator's call)
            return .retried(failed)
        }
    }

    private static func event(_ row: SQLiteStatement, from column: Int32) throws -> WebhookEvent {
        WebhookEvent(id: row.text(column)!, type: row.text(column + 1)!, room: row.text(column + 2)!, timestamp: row.int(column + 3),
                     data: try JSONParser.parse(row.text(column + 4)!).objectValue ?? [:])
    }
}
