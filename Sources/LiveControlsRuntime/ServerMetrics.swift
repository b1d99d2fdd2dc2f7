import Prometheus
import Synchronization

/// Counters, gauges and the hold-tick lateness histogram behind `GET /metrics`. Safe from any thread.
///
/// Each instance has its own `PrometheusCollectorRegistry` (one per directory, so one per server): never the
/// process-wide `MetricsSystem.bootstrap`, which can run once per process while tests start several servers
/// in one. swift-prometheus renders the text (`PrometheusCollectorRegistry.emit(into:)`).
///
/// Cost on the hot paths (swift-prometheus 2.4.1): `Counter.increment()` is one relaxed
/// `wrappingIncrement` on the counter's own `ManagedAtomic<Int64>` — no lock, nothing shared between
/// counters — so `intent(refused:)` and `patch()` never wait for each other or for a scrape. The histogram
/// takes its own lock (`NIOLockedValueBox`) per `record`, which only `tick(lateNanoseconds:)` calls: a few
/// ticks per second per held control. Gauges are set at scrape time only.
package final class ServerMetrics: Sendable {
    /// The `Content-Type` of `exposition`: Prometheus' text format 0.0.4, which `emit(into:)` writes.
    package static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// Upper bounds of `livecontrols_hold_tick_lateness_seconds`' buckets: fine from 50 µs to 1 ms, where an
    /// idle server's timers land (docs/benchmarks/HISTORY.md: p50 ≈ 140 µs, p99 ≈ 0.3–0.6 ms), coarse up to 1 s
    /// for a starved machine; anything later counts in `+Inf` only.
    static let latenessBuckets: [Duration] = [
        .microseconds(50), .microseconds(100), .microseconds(150), .microseconds(200), .microseconds(300),
        .microseconds(500), .microseconds(750), .milliseconds(1), .microseconds(2_500), .milliseconds(5),
        .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
        .milliseconds(500), .seconds(1),
    ]

    private let registry = PrometheusCollectorRegistry()
    private let intents: Counter
    private let refusedIntents: Counter
    private let overloadedIntents: Counter
    private let pauses: Counter
    private let pausedMilliseconds: Counter
    private let patches: Counter
    private let deliveries: Counter
    private let ticks: Counter
    private let roomsUnloaded: Counter
    private let roomsLoaded: Counter
    private let acceptRefusals: Counter
    /// How long after its deadline each hold tick ran, since start.
    private let lateness: DurationHistogram
    /// Set by `exposition` from what the server knows at scrape time.
    private let connections: Gauge
    private let rooms: Gauge
    private let uptime: Gauge

    init() {
        connections = registry.gauge("livecontrols_connections", "Open WebSocket connections.")
        rooms = registry.gauge("livecontrols_rooms", "Live rooms.")
        roomsUnloaded = registry.counter("livecontrols_rooms_unloaded_total",
                                         "Rooms unloaded after nobody was in them for the idle time.")
        roomsLoaded = registry.counter("livecontrols_rooms_loaded_total",
                                       "Stored rooms loaded from the store (the config's at start, others by a join).")
        intents = registry.counter("livecontrols_intents_total", "Intents received.")
        refusedIntents = registry.counter("livecontrols_intents_refused_total", "Intents refused with an error.")
        overloadedIntents = registry.counter("livecontrols_intents_overloaded_total",
                                             "Intents refused with `overloaded`: their room had --room-queue intents waiting.")
        pauses = registry.counter("livecontrols_room_pauses_total",
                                  "Times a room of more than 128 subscribers paused while the server caught up on writing.")
        pausedMilliseconds = registry.counter("livecontrols_room_paused_milliseconds_total", "Milliseconds those pauses lasted.")
        patches = registry.counter("livecontrols_patches_total", "Patches (room versions) produced.")
        deliveries = registry.counter("livecontrols_patch_deliveries_total",
                                      "Patch messages handed to this node's members (each patch once per member it reached).")
        ticks = registry.counter("livecontrols_hold_ticks_total", "Hold-to-repeat ticks applied.")
        lateness = registry.makeDurationHistogram(
            descriptor: MetricNameDescriptor(metricName: "livecontrols_hold_tick_lateness_seconds", unitName: "",
                                             helpText: "How long after its deadline each hold tick ran, since start."),
            buckets: Self.latenessBuckets)
        uptime = registry.gauge("livecontrols_uptime_seconds", "Seconds since start.")
        acceptRefusals = registry.counter("livecontrols_connections_refused_at_accept_total",
                                          "Sockets closed at accept: past the open-file budget, --max-http-connections or one address's share.")
    }

    func intent(refused: Bool) {
        intents.increment()
        if refused { refusedIntents.increment() }
    }

    func patch() { patches.increment() }

    /// A patch was handed to `members` of this node's connections (the fan-out).
    func delivered(toMembers members: Int) {
        if members > 0 { deliveries.increment(by: Int64(members)) }
    }

    /// An intent was refused because its room's queue was full (also counted as received and refused).
    func intentOverloaded() {
        intent(refused: true)
        overloadedIntents.increment()
    }

    /// A large room paused its queue for `milliseconds` while the transport caught up.
    func paced(milliseconds: Int) {
        pauses.increment()
        pausedMilliseconds.increment(by: Int64(milliseconds))
    }

    /// An idle room left memory.
    func roomUnloaded() { roomsUnloaded.increment() }

    /// Service thread's sweep: sockets the socket budget refused since the last one.
    package func refusedAtAccept(_ count: Int) { acceptRefusals.increment(by: Int64(count)) }

    /// A stored room was loaded from the store.
    func roomLoaded() { roomsLoaded.increment() }

    /// A hold tick ran `nanoseconds` after its deadline.
    func tick(lateNanoseconds nanoseconds: UInt64) {
        ticks.increment()
        lateness.record(.nanoseconds(nanoseconds))
    }

    /// The webhook delivery latency (queued → delivered), one histogram for every endpoint.
    private let webhookLatency = Mutex<DurationHistogram?>(nil)

    /// The metrics of webhook endpoint number `index` (its place in the config's `webhooks`).
    func webhookEndpoint(_ index: Int) -> WebhookEndpointMetrics {
        let label = [("endpoint", String(index))]
        let latency = webhookLatency.withLock { histogram -> DurationHistogram in
            if let histogram { return histogram }
            let made = registry.makeDurationHistogram(
                descriptor: MetricNameDescriptor(metricName: "livecontrols_webhook_delivery_seconds", unitName: "",
                                                 helpText: "From an event's being queued for its endpoint to its delivery, every endpoint."),
                buckets: [.milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
                          .milliseconds(500), .seconds(1), .seconds(5), .seconds(30), .seconds(120), .seconds(600), .seconds(3600)])
            histogram = made
            return made
        }
        return WebhookEndpointMetrics(
            pending: registry.gauge("livecontrols_webhook_pending", labels: label,
                                    "Deliveries waiting in memory for the endpoint (more may wait in --data-dir)."),
            sent: registry.counter("livecontrols_webhook_sent_total", labels: label, "Deliveries the endpoint acknowledged (2xx)."),
            failed: registry.counter("livecontrols_webhook_failed_total", labels: label,
                                     "Deliveries given up after their last attempt (listed by GET /api/v1/webhooks/failed)."),
            attempts: registry.counter("livecontrols_webhook_attempts_total", labels: label, "Delivery attempts, successful or not."),
            latency: latency)
    }

    /// The metrics of the intent hook of template `template`.
    func intentHook(template: String) -> HookMetrics {
        let label = [("template", template)]
        func outcome(_ name: String, _ help: String) -> Counter {
            registry.counter("livecontrols_intent_hook_calls_total", labels: label + [("outcome", name)], help)
        }
        return HookMetrics(
            latency: registry.makeDurationHistogram(
                descriptor: MetricNameDescriptor(metricName: "livecontrols_intent_hook_seconds", unitName: "",
                                                 helpText: "How long the app's backend took to answer an intent hook call (or to fail), by template."),
                labels: label,
                buckets: [.milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
                          .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(5), .seconds(10), .seconds(30)]),
            allowed: outcome("allowed", "Intent hook calls, by template and outcome: allowed, denied, or failed (no answer that is one)."),
            denied: outcome("denied", "Intent hook calls, by template and outcome: allowed, denied, or failed (no answer that is one)."),
            failed: outcome("failed", "Intent hook calls, by template and outcome: allowed, denied, or failed (no answer that is one)."))
    }

    /// Prometheus text exposition (version 0.0.4, `contentType`), with the scrape-time gauges set first.
    ///
    /// Families come in the registry's order, which is not fixed. Two calls at once (the server makes one at a
    /// time, on its service thread) may each show the gauges the other set.
    package func exposition(connections: Int, rooms: Int, uptimeSeconds: Int) -> String {
        self.connections.set(to: Double(connections))
        self.rooms.set(to: Double(rooms))
        uptime.set(to: Double(uptimeSeconds))
        var text: [UInt8] = []
        registry.emit(into: &text)
        return String(decoding: text, as: UTF8.self)
    }
}

extension PrometheusCollectorRegistry {
    /// The counter `name` (complete, `_total` included) with `labels` and `# HELP` `help`.
    func counter(_ name: String, labels: [(String, String)] = [], _ help: String) -> Counter {
        makeCounter(descriptor: MetricNameDescriptor(metricName: name, unitName: "", helpText: help), labels: labels)
    }

    /// The gauge `name` with `labels` and `# HELP` `help`.
    func gauge(_ name: String, labels: [(String, String)] = [], _ help: String) -> Gauge {
        makeGauge(descriptor: MetricNameDescriptor(metricName: name, unitName: "", helpText: help), labels: labels)
    }
}

/// One webhook endpoint's counters (`endpoint` label: its index in the config).
package struct WebhookEndpointMetrics: Sendable {
    let pending: Gauge
    let sent: Counter
    let failed: Counter
    let attempts: Counter
    let latency: DurationHistogram
}
