/// The durable side of webhook deliveries (SQLite with `--data-dir`; Redis in cluster mode): each event is stored
/// with the change it stands for (`StoreWrite.webhooks`), one delivery per endpoint, until it is delivered or given up.
public protocol WebhookStore: Sendable {
    /// At start: turns every room's unannounced changes into `room.changed` events (`make` builds each, for the
    /// endpoints that want it), drops deliveries for endpoints no longer configured, and returns how many were dropped.
    func prepareWebhooks(endpoints: [String], make: (_ room: String, _ changes: UnannouncedChanges, _ toVersion: Int) -> PendingWebhook?) throws -> Int
    /// How many deliveries may wait for each endpoint (by URL); past it new events are given up into the failed list at
    /// once (`takeGivenUp` tells how many). Called before `prepareWebhooks`.
    func boundPending(_ limits: [String: Int])
    /// Deliveries given up since the last call because their endpoint's outbox was full: event ids by endpoint URL
    /// (written with their change; the dispatcher does not queue them).
    func takeGivenUp() -> [String: [String]]
    /// Deliveries still to make to `endpoint`, oldest first (per room, in the order the changes happened).
    func pendingWebhooks(endpoint: String, limit: Int) throws -> [WebhookEvent]
    /// A delivery succeeded: it is forgotten.
    func webhookDelivered(_ event: WebhookEvent, endpoint: String)
    /// A delivery's last attempt failed: kept as failed (listed, retried on request).
    func webhookFailed(_ event: WebhookEvent, endpoint: String, attempts: Int, error: String, atMilliseconds: Int)
    /// Failed deliveries, newest first.
    func failedWebhooks(limit: Int) throws -> [FailedWebhook]
    /// Makes the failed deliveries of event `id` pending again, if `allowed` accepts its room; returns them (empty:
    /// no such failed event).
    func retryWebhook(eventID: String, allowed: (String) -> Bool) throws -> WebhookRetry
}

extension WebhookStore {
    /// Stores without a bound of their own (cluster mode keeps outboxes in Redis, per room).
    public func boundPending(_ limits: [String: Int]) {}
    public func takeGivenUp() -> [String: [String]] { [:] }
}

/// What `retryWebhook` did.
public enum WebhookRetry: Sendable {
    /// These deliveries are pending again (none: the event has no failed delivery).
    case retried([(endpoint: String, event: WebhookEvent)])
    /// The event is of this room, which the caller may not touch: nothing changed.
    case refused(room: String)
}

/// A delivery given up after its last attempt.
public struct FailedWebhook: Sendable, Equatable {
    public var endpoint: String
    public var event: WebhookEvent
    public var attempts: Int
    public var error: String
    /// Milliseconds since 1970.
    public var failedAt: Int

    public init(endpoint: String, event: WebhookEvent, attempts: Int, error: String, failedAt: Int) {
        self.endpoint = endpoint
        self.event = event
        self.attempts = attempts
        self.error = error
        self.failedAt = failedAt
    }
}
