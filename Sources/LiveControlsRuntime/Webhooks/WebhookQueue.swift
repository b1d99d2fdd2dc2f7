import LiveControlsEngine

/// The deliveries waiting for one endpoint, as a value: in order per room (a room's next event is attempted only
/// after the one before it was delivered or given up), several rooms at once, each retry later than the last
/// (doubling, with jitter). It reads no clock: `now` comes in, and what to do comes out.
struct WebhookQueue {
    struct Delivery: Equatable {
        var event: WebhookEvent
        /// Attempts made so far.
        var attempts = 0
        /// When it may be attempted (again).
        var dueAt: Instant
        /// When it was queued (for the delivery latency).
        var queuedAt: Instant
    }

    enum Outcome: Equatable {
        /// Try again at this instant.
        case retry(at: Instant)
        /// The last attempt failed: keep it as failed.
        case gaveUp(Delivery)
    }

    let endpoint: WebhookEndpoint
    /// Attempts running at once (each in another room).
    let maxInFlight: Int
    /// Deliveries kept in memory at most.
    let capacity: Int

    private var rooms: [String: [Delivery]] = [:]
    /// Rooms with a delivery waiting, in the order their first one arrived (fair turns).
    private var order: [String] = []
    private(set) var inFlight: [String: Delivery] = [:]
    private(set) var count = 0
    /// The events queued (a refill from the store may read one that is also on its way from its room: kept once).
    private var ids: Set<String> = []

    init(endpoint: WebhookEndpoint, maxInFlight: Int = 8, capacity: Int = 10_000) {
        self.endpoint = endpoint
        self.maxInFlight = maxInFlight
        self.capacity = capacity
    }

    /// Queues `event` behind the room's earlier ones (once: an event already queued is not queued again); false
    /// when the queue is full (nothing queued).
    mutating func add(_ event: WebhookEvent, now: Instant) -> Bool {
        guard !ids.contains(event.id) else { return true }
        guard count < capacity else { return false }
        ids.insert(event.id)
        if rooms[event.room] == nil { order.append(event.room) }
        rooms[event.room, default: []].append(Delivery(event: event, dueAt: now, queuedAt: now))
        count += 1
        return true
    }

    /// The deliveries to attempt now: each room's first, when it is due and the room has none in flight, up to
    /// `maxInFlight` in all. They count as in flight until `finished`.
    mutating func start(now: Instant) -> [Delivery] {
        var started: [Delivery] = []
        for room in order where inFlight.count < maxInFlight && inFlight[room] == nil {
            guard var head = rooms[room]?.first, head.dueAt <= now else { continue }
            head.attempts += 1
            rooms[room]![0] = head
            inFlight[room] = head
            started.append(head)
        }
        return started
    }

    /// The attempt of `room`'s first delivery succeeded: it leaves the queue.
    mutating func delivered(room: String) -> Delivery? {
        guard inFlight.removeValue(forKey: room) != nil else { return nil }
        return removeHead(room)
    }

    /// The attempt of `room`'s first delivery failed. `jitter` in 0..<1 spreads the retries of many deliveries.
    mutating func failed(room: String, now: Instant, jitter: Double) -> Outcome? {
        guard inFlight.removeValue(forKey: room) != nil, var head = rooms[room]?.first else { return nil }
        guard head.attempts < endpoint.maxAttempts else {
            _ = removeHead(room)
            return .gaveUp(head)
        }
        head.dueAt = now.adding(milliseconds: Self.backoff(attempt: head.attempts, endpoint: endpoint, jitter: jitter))
        rooms[room]![0] = head
        return .retry(at: head.dueAt)
    }

    /// The wait after failed attempt number `attempt` (1-based): `retryMs` doubling each time, at most `maxRetryMs`,
    /// then scaled into its upper half by `jitter` (so never less than half of it).
    static func backoff(attempt: Int, endpoint: WebhookEndpoint, jitter: Double) -> Int {
        let doubled = Double(endpoint.retryMs) * Double(1 << min(max(attempt - 1, 0), 30))
        let capped = min(doubled, Double(endpoint.maxRetryMs))
        return Int(capped * (0.5 + 0.5 * min(max(jitter, 0), 1)))
    }

    /// Drops `room`'s waiting deliveries, except one in flight (its outcome still comes).
    mutating func drop(room: String) {
        guard let list = rooms[room] else { return }
        let kept = inFlight[room] != nil ? Array(list.prefix(1)) : []
        for delivery in list.dropFirst(kept.count) { ids.remove(delivery.event.id) }
        count -= list.count - kept.count
        if kept.isEmpty {
            rooms[room] = nil
            order.removeAll { $0 == room }
        } else {
            rooms[room] = kept
        }
    }

    /// When the earliest waiting delivery that could start falls due (nil: nothing waits, or all rooms are busy).
    var nextDue: Instant? {
        guard inFlight.count < maxInFlight else { return nil }
        return order.compactMap { room in inFlight[room] == nil ? rooms[room]?.first?.dueAt : nil }.min()
    }

    /// Every delivery still queued, in per-room order (for listing).
    var waiting: [Delivery] { order.flatMap { rooms[$0] ?? [] } }

    private mutating func removeHead(_ room: String) -> Delivery? {
        guard var list = rooms[room], !list.isEmpty else { return nil }
        let head = list.removeFirst()
        count -= 1
        ids.remove(head.event.id)
        if list.isEmpty {
            rooms[room] = nil
            order.removeAll { $0 == room }
        } else {
            rooms[room] = list
        }
        return head
    }
}
