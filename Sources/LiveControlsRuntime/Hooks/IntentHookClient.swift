import Foundation
import LiveControlsEngine
import LiveControlsProtocol
import Prometheus

/// Asks the app's backend about hooked intents (a template's `hooks.intent`): one signed POST per intent, the answer
/// read into a `HookVerdict`. Safe from any thread; `done` is called once, on the transport's thread.
///
/// Calls go through a transport of their own (`CurlWebhookTransport.forHooks`: one thread, at most 32 connections per
/// host and 128 in all), never the webhooks', and are bounded by the hook's `timeoutMs`. A room has at most
/// `RoomRuntime.hookCallsPerRoom` calls under way, so a few slow rooms cannot take every connection to a backend.
package final class IntentHookClient: Sendable {
    /// What became of one call.
    package enum Outcome: Sendable, Equatable {
        case answered(HookVerdict)
        /// No answer that is one: why (the hook's `onError` decides).
        case failed(String)
    }

    private let transport: any HookTransport
    private let wallClock: @Sendable () -> Int
    private let metrics: [String: HookMetrics]

    /// `templates`: the config's templates (those with a hook get their metrics).
    package init(templates: [String: RoomTemplate], transport: any HookTransport, metrics: ServerMetrics,
                 wallClock: @escaping @Sendable () -> Int = { Int((Date().timeIntervalSince1970 * 1000).rounded(.down)) }) {
        self.transport = transport
        self.wallClock = wallClock
        var byTemplate: [String: HookMetrics] = [:]
        for (name, template) in templates where template.intentHook != nil { byTemplate[name] = metrics.intentHook(template: name) }
        self.metrics = byTemplate
    }

    /// A client for `config` when one of its templates has a hook (else nil: nothing is spent on hooks).
    package static func make(for config: ServerConfig, transport: (any HookTransport)?, metrics: ServerMetrics) -> IntentHookClient? {
        guard config.templates.values.contains(where: { $0.intentHook != nil }) else { return nil }
        return IntentHookClient(templates: config.templates, transport: transport ?? CurlWebhookTransport.forHooks(), metrics: metrics)
    }

    /// POSTs `body` to `hook`'s URL, signed (Standard Webhooks: `webhook-id` `hook_…`, `webhook-timestamp`,
    /// `webhook-signature`), and tells what the backend said.
    /// `timeoutMs`: at most the hook's (less in cluster mode, when the member's node would stop waiting sooner).
    package func call(_ hook: IntentHook, timeoutMs: Int, template: String, body: JSONObject, done: @escaping @Sendable (Outcome) -> Void) {
        let bytes = JSONWriter.encode(.object(body))
        let id = "hook_" + RoomRegistry.randomID(length: 20)
        let seconds = wallClock() / 1000
        let headers = [
            ("content-type", "application/json"), ("user-agent", "livecontrols"), ("webhook-id", id), ("webhook-timestamp", String(seconds)),
            ("webhook-signature", WebhookEvent.signature(id: id, timestampSeconds: seconds, body: bytes, key: hook.key)),
        ]
        let metrics = self.metrics[template]
        let started = ContinuousClock.now
        transport.exchange(url: hook.url, headers: headers, body: bytes, timeoutMs: timeoutMs, maxAnswerBytes: IntentHook.maxAnswerBytes) { result in
            let outcome: Outcome
            switch result {
            case let .success(answer):
                do throws(HookAnswerError) { outcome = .answered(try IntentHook.verdict(from: answer)) } catch { outcome = .failed(error.description) }
            case let .failure(failure):
                outcome = .failed(failure.description)
            }
            metrics?.record(outcome, after: ContinuousClock.now - started)
            done(outcome)
        }
    }

    package func stop() { transport.stop() }
}

/// One hooked template's metrics (`template` label).
package struct HookMetrics: Sendable {
    let latency: DurationHistogram
    let allowed: Counter
    let denied: Counter
    let failed: Counter

    init(latency: DurationHistogram, allowed: Counter, denied: Counter, failed: Counter) {
        self.latency = latency
        self.allowed = allowed
        self.denied = denied
        self.failed = failed
    }

    func record(_ outcome: IntentHookClient.Outcome, after duration: Duration) {
        latency.record(duration)
        switch outcome {
        case .answered(.allow): allowed.increment()
        case .answered(.deny): denied.increment()
        case .failed: failed.increment()
        }
    }
}
