import Dispatch
import LiveControlsEngine
import LiveControlsProtocol
import Logging

/// Sends webhook events to the configured endpoints, signed as Standard Webhooks says.
///
/// Rooms hand it events once the change they stand for is durable (`enqueue`). Each endpoint has its own
/// `WebhookQueue` (in order per room, several rooms at once, retries with backoff) and its own timer, so a slow or
/// dead receiver holds up only its own deliveries, never a room or another endpoint. With a `WebhookStore`
/// (`--data-dir`) every delivery is in the database from the change's own transaction until it is delivered or
/// given up, so a restart (`kill -9` included) sends what was not sent: at least once, same event id. Without one,
/// pending deliveries live in memory only.
///
/// Thread rules: every `var` is touched only on `queue` (asserted); the rest is `let`.
package final class WebhookDispatcher: @unchecked Sendable {
    package let endpoints: [WebhookEndpoint]
    /// How long `room.changed` gathers a room's changes.
    package let changeIntervalMs: Int
    let queue = DispatchQueue(label: "livecontrols.webhooks")
    private let store: (any WebhookStore)?
    private let transport: any WebhookTransport
    private let scheduler: any RoomScheduler
    /// Milliseconds since 1970 (event times, `webhook-timestamp`).
    private let wallClock: @Sendable () -> Int
    private let jitter: @Sendable () -> Double
    private let logger: Logger

    private struct Endpoint {
        var deliveries: WebhookQueue
        var timer: (any RoomTimer)?
        /// Deliveries are waiting in the store that are not in memory (the queue was full): new ones go to the store
        /// only until the queue has drained and is filled again from it, oldest first.
        var spilled = false
        let metrics: WebhookEndpointMetrics
    }
    private var states: [Endpoint] = []
    /// Set by `stop`: nothing more is attempted or recorded.
    private var stopped = false
    /// Cluster mode: rooms another node owns now (`forget`). An attempt under way for one of them is not retried
    /// or recorded as failed when it fails: the new owner sends it.
    private var forgotten: Set<String> = []
    /// Deliveries the store gave up at once (`noteGivenUp`): event ids by endpoint URL, until their `enqueue`.
    private var givenUp: [String: Set<String>] = [:]
    /// Without a store: deliveries given up, newest last (at most `failedKept`).
    private var failedInMemory: [FailedWebhook] = []
    private static let failedKept = 1_000

    package init(endpoints: [WebhookEndpoint], changeIntervalMs: Int, store: (any WebhookStore)?, transport: any WebhookTransport,
                 scheduler: any RoomScheduler, metrics: ServerMetrics, logger: Logger, capacity: Int = 10_000,
                 wallClock: @escaping @Sendable () -> Int, jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
        self.endpoints = endpoints
        self.changeIntervalMs = changeIntervalMs
        self.store = store
        self.transport = transport
        self.scheduler = scheduler
        self.wallClock = wallClock
        self.jitter = jitter
        self.logger = logger
        self.states = endpoints.enumerated().map { index, endpoint in
            // In memory at most what the store may hold for it (`maxPending`): what the store gives up is never queued.
            Endpoint(deliveries: WebhookQueue(endpoint: endpoint, capacity: min(capacity, endpoint.maxPending)), metrics: metrics.webhookEndpoint(index))
        }
    }

    // MARK: Any thread

    /// Whether any endpoint wants `room.changed` (else rooms gather nothing).
    package var wantsChanges: Bool { endpoints.contains { $0.wants("room.changed") } }

    /// The URLs of the endpoints that want events of `type`.
    package func targets(for type: String) -> [String] {
        endpoints.filter { $0.wants(type) }.map(\.url)
    }

    /// A new event for `room` now, with a fresh id; nil when no endpoint wants its type.
    package func pending(_ draft: WebhookDraft, room: String) -> PendingWebhook? {
        let targets = targets(for: draft.type)
        guard !targets.isEmpty else { return nil }
        let event = WebhookEvent(id: "evt_" + RoomRegistry.randomID(length: 24), type: draft.type, room: room, timestamp: wallClock(),
                                 data: draft.data)
        return PendingWebhook(event: event, endpoints: targets)
    }

    /// At start, before any room acts: what the store kept from the last run — its rooms' unannounced changes as
    /// `room.changed` events, then every delivery still pending — is queued.
    package func start() throws {
        guard let store else { return }
        store.boundPending(Dictionary(endpoints.map { ($0.url, $0.maxPending) }, uniquingKeysWith: min))
        let dropped = try store.prepareWebhooks(endpoints: endpoints.map(\.url)) { room, changes, toVersion in
            self.pending(WebhookDraft(type: "room.changed", data: Self.changedData(room: room, changes, toVersion: toVersion)), room: room)
        }
        if dropped > 0 { logger.warning("webhook deliveries dropped: their endpoint is no longer in the config", metadata: ["count": "\(dropped)"]) }
        queue.sync {
            for index in states.indices { refill(index) }
        }
    }

    /// The data of a `room.changed` event.
    package static func changedData(room: String, _ changes: UnannouncedChanges, toVersion: Int) -> JSONObject {
        ["room": .string(room), "epoch": .string(changes.epoch), "fromVersion": .int(changes.fromVersion), "toVersion": .int(toVersion),
         "controls": .array(changes.controls.map { .string($0) }), "presence": .bool(changes.presence)]
    }

    /// Events whose change is durable (in the store, when there is one): queued for their endpoints, in order.
    package func enqueue(_ webhooks: [PendingWebhook]) {
        guard !webhooks.isEmpty else { return }
        queue.async {
            self.noteGivenUp()
            for webhook in webhooks {
                self.forgotten.remove(webhook.event.room)  // it is this node's again (a takeover)
                for url in webhook.endpoints where self.givenUp[url]?.remove(webhook.event.id) == nil {
                    guard let index = self.endpoints.firstIndex(where: { $0.url == url }) else { continue }
                    self.add(webhook.event, to: index)
                }
            }
            for index in self.states.indices { self.pump(index) }
        }
    }

    /// Deliveries the store gave up because their endpoint's outbox was full (in the failed list already): counted as
    /// failed, logged, and not queued — their event ids by endpoint URL.
    private func noteGivenUp() {
        assertOnQueue(queue)
        guard let store else { return }
        for (url, events) in store.takeGivenUp() {
            // (Kept until the event's own `enqueue`, which may come after another room's; a bound for events whose
            // enqueue never comes — their room stopped.)
            if givenUp[url, default: []].count > 100_000 { givenUp[url] = [] }
            givenUp[url, default: []].formUnion(events)
            guard let index = endpoints.firstIndex(where: { $0.url == url }) else { continue }
            states[index].metrics.failed.increment(by: Int64(events.count))
            logger.warning("webhook deliveries given up: the endpoint's outbox is full (maxPending); they are in the failed list",
                           metadata: ["endpoint": "\(index)", "count": "\(events.count)", "maxPending": "\(endpoints[index].maxPending)"])
        }
    }

    /// Each endpoint with what waits for it, what was sent and given up (from the metrics' point of view: since start).
    package func status(_ reply: @escaping @Sendable ([(endpoint: WebhookEndpoint, pending: Int, inFlight: Int, spilled: Bool)]) -> Void) {
        queue.async {
            reply(self.states.enumerated().map { index, state in
                (self.endpoints[index], state.deliveries.count, state.deliveries.inFlight.count, state.spilled)
            })
        }
    }

    /// Deliveries given up, newest first: the first `limit` of the rooms `allowed` accepts (nil: every room). Filtered
    /// before the limit, so a token's list is its rooms' newest, not what is left of everyone's newest; every failed
    /// delivery is kept under a bound (`failedKept` in memory, the store's own), which bounds that read too.
    package func failed(limit: Int, inRooms allowed: (@Sendable (String) -> Bool)? = nil,
                        _ reply: @escaping @Sendable (Result<[FailedWebhook], any Error>) -> Void) {
        queue.async {
            let read = allowed == nil ? limit : Int.max
            let all: Result<[FailedWebhook], any Error>
            if let store = self.store {
                all = Result { try store.failedWebhooks(limit: read) }
            } else {
                all = .success(Array(self.failedInMemory.reversed().prefix(read)))
            }
            reply(all.map { list in Array(list.filter { allowed?($0.event.room) ?? true }.prefix(limit)) })
        }
    }

    /// Sends the failed deliveries of event `id` again (from their first attempt), if `allowed` accepts its room;
    /// replies how many (0: none), or the room that was not allowed.
    package func retry(eventID: String, allowed: @escaping @Sendable (String) -> Bool,
                       _ reply: @escaping @Sendable (Result<(count: Int, refusedRoom: String?), any Error>) -> Void) {
        queue.async {
            var again: [(String, WebhookEvent)] = []
            if let store = self.store {
                do {
                    switch try store.retryWebhook(eventID: eventID, allowed: allowed) {
                    case let .retried(deliveries): again = deliveries
                    case let .refused(room): return reply(.success((0, room)))
                    }
                } catch {
                    return reply(.failure(error))
                }
            } else {
                again = self.failedInMemory.filter { $0.event.id == eventID }.map { ($0.endpoint, $0.event) }
                if let room = again.first?.1.room, !allowed(room) { return reply(.success((0, room))) }
                self.failedInMemory.removeAll { $0.event.id == eventID }
            }
            for (url, event) in again {
                guard let index = self.endpoints.firstIndex(where: { $0.url == url }) else { continue }
                // Even while deliveries wait in the store: a refill may not read this one back (cluster mode reads
                // only the outboxes of the rooms this node owns).
                self.add(event, to: index, evenIfSpilled: true)
                self.pump(index)
            }
            reply(.success((again.count, nil)))
        }
    }

    /// Cluster mode: this node lost `room` (another owner sends its events from now on): what waits for it here is
    /// dropped, except the attempts under way (their outcome is still recorded).
    package func forget(room: String) {
        queue.async {
            for index in self.states.indices {
                self.states[index].deliveries.drop(room: room)
                self.states[index].metrics.pending.set(to: Double(self.states[index].deliveries.count))
            }
            if self.states.contains(where: { $0.deliveries.inFlight[room] != nil }) { self.forgotten.insert(room) }
        }
    }

    /// At shutdown, after the rooms stopped: no more attempts, and the outcomes of those under way are not recorded
    /// (they are attempted again at the next start: at least once).
    package func stop() {
        queue.sync {
            stopped = true
            for index in states.indices { states[index].timer?.cancel() }
        }
        transport.stop()
    }

    // MARK: On the queue

    private func add(_ event: WebhookEvent, to index: Int, evenIfSpilled: Bool = false) {
        assertOnQueue(queue)
        guard evenIfSpilled || !states[index].spilled else { return }  // it is in the store; it comes back with the rest, in order
        if states[index].deliveries.add(event, now: scheduler.now()) {
            states[index].metrics.pending.set(to: Double(states[index].deliveries.count))
            return
        }
        if store != nil {
            states[index].spilled = true
            logger.warning("webhook queue full: deliveries wait in the store until the endpoint catches up",
                           metadata: ["endpoint": "\(index)"])
        } else {
            giveUp(WebhookQueue.Delivery(event: event, attempts: 0, dueAt: scheduler.now(), queuedAt: scheduler.now()), at: index,
                   error: "not sent: more than \(states[index].deliveries.capacity) deliveries were waiting for this endpoint")
        }
    }

    /// The queue has drained: take the oldest waiting deliveries from the store.
    private func refill(_ index: Int) {
        assertOnQueue(queue)
        guard let store, states[index].deliveries.count == 0 else { return }
        do {
            let waiting = try store.pendingWebhooks(endpoint: endpoints[index].url, limit: states[index].deliveries.capacity)
            states[index].spilled = false
            for event in waiting { _ = states[index].deliveries.add(event, now: scheduler.now()) }
            states[index].spilled = waiting.count >= states[index].deliveries.capacity
            states[index].metrics.pending.set(to: Double(states[index].deliveries.count))
        } catch {
            logger.error("webhook deliveries could not be read from the store", metadata: ["error": "\(error)"])
        }
        pump(index)
    }

    /// Starts what is due, and sets the endpoint's timer for what falls due next.
    private func pump(_ index: Int) {
        assertOnQueue(queue)
        guard !stopped else { return }
        let now = scheduler.now()
        for delivery in states[index].deliveries.start(now: now) { attempt(delivery, at: index) }
        if let due = states[index].deliveries.nextDue, due > now {
            if states[index].timer == nil {
                states[index].timer = scheduler.makeTimer(on: queue) { [weak self] in self?.pump(index) }
            }
            states[index].timer?.schedule(at: due)
        }
    }

    private func attempt(_ delivery: WebhookQueue.Delivery, at index: Int) {
        let endpoint = endpoints[index]
        let event = delivery.event
        let body = event.body
        let seconds = wallClock() / 1000
        let headers = [
            ("content-type", "application/json"), ("user-agent", "livecontrols"), ("webhook-id", event.id),
            ("webhook-timestamp", String(seconds)),
            ("webhook-signature", WebhookEvent.signature(id: event.id, timestampSeconds: seconds, body: body, key: endpoint.key)),
        ]
        states[index].metrics.attempts.increment()
        transport.post(url: endpoint.url, headers: headers, body: body, timeoutMs: endpoint.timeoutMs) { [weak self] failure in
            guard let self else { return }
            self.queue.async { self.finished(event, at: index, failure: failure) }
        }
    }

    private func finished(_ event: WebhookEvent, at index: Int, failure: String?) {
        assertOnQueue(queue)
        guard !stopped else { return }
        let now = scheduler.now()
        if failure != nil, forgotten.contains(event.room) {
            _ = states[index].deliveries.failed(room: event.room, now: now, jitter: 0)
            states[index].deliveries.drop(room: event.room)
        } else if let failure {
            switch states[index].deliveries.failed(room: event.room, now: now, jitter: jitter()) {
            case let .gaveUp(delivery)?:
                giveUp(delivery, at: index, error: failure)
            case .retry?:
                logger.debug("webhook attempt failed; retrying", metadata: ["endpoint": "\(index)", "event": "\(event.id)", "error": "\(failure)"])
            case nil:
                break
            }
        } else if let delivery = states[index].deliveries.delivered(room: event.room) {
            states[index].metrics.sent.increment()
            states[index].metrics.latency.record(.nanoseconds(Int64(now.nanoseconds &- delivery.queuedAt.nanoseconds)))
            store?.webhookDelivered(event, endpoint: endpoints[index].url)
        }
        if !forgotten.isEmpty, !states.contains(where: { $0.deliveries.inFlight[event.room] != nil }) { forgotten.remove(event.room) }
        states[index].metrics.pending.set(to: Double(states[index].deliveries.count))
        if states[index].deliveries.count == 0 && states[index].spilled { return refill(index) }
        pump(index)
    }

    private func giveUp(_ delivery: WebhookQueue.Delivery, at index: Int, error: String) {
        assertOnQueue(queue)
        let url = endpoints[index].url
        logger.warning("webhook delivery failed for good", metadata: [
            "endpoint": "\(index)", "event": "\(delivery.event.id)", "type": "\(delivery.event.type)", "attempts": "\(delivery.attempts)", "error": "\(error)"])
        states[index].metrics.failed.increment()
        let at = wallClock()
        if let store {
            store.webhookFailed(delivery.event, endpoint: url, attempts: delivery.attempts, error: error, atMilliseconds: at)
        } else {
            failedInMemory.append(FailedWebhook(endpoint: url, event: delivery.event, attempts: delivery.attempts, error: error, failedAt: at))
            if failedInMemory.count > Self.failedKept { failedInMemory.removeFirst(failedInMemory.count - Self.failedKept) }
        }
    }
}
