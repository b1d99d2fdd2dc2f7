import Foundation

/// A countdown or a stopwatch the whole room sees run (kind `timer`). The server sends no patch per second: a running
/// timer carries its deadline (`endsAt`) or start (`startedAt`) in server time, and this view reckons the time from the
/// server's clock (``LiveControlsClient/serverClockOffset``) — ask ``remaining(at:)`` or ``elapsed(at:)`` on each frame.
@MainActor
public struct TimerControl: ControlView {
    public static let kind = "timer"
    public let control: LiveControl
    public init(unchecked control: LiveControl) { self.control = control }

    public enum Mode: String, Sendable { case countdown, stopwatch }
    public enum Status: String, Sendable { case ready, running, paused, finished }

    public var mode: Mode { json["mode"]?.stringValue.flatMap(Mode.init(rawValue:)) ?? .countdown }
    public var status: Status { json["status"]?.stringValue.flatMap(Status.init(rawValue:)) ?? .ready }
    /// A countdown's configured duration; nil for a stopwatch.
    public var duration: Duration? { json["durationMs"]?.intValue.map { .milliseconds($0) } }
    /// When a running countdown ends, on this machine's clock.
    public var endsAt: Date? { json["endsAt"]?.intValue.flatMap(localDate) }
    /// When a running stopwatch's time was zero, on this machine's clock.
    public var startedAt: Date? { json["startedAt"]?.intValue.flatMap(localDate) }

    /// A countdown's time left at `date` (now by default): counted to ``endsAt`` while it runs, as the server left it
    /// otherwise. Zero once finished; nil for a stopwatch.
    public func remaining(at date: Date = Date()) -> Duration? {
        guard mode == .countdown else { return nil }
        if let endsAt { return .milliseconds(max(0, Int((endsAt.timeIntervalSince(date) * 1000).rounded(.up)))) }
        return .milliseconds(json["remainingMs"]?.intValue ?? 0)
    }

    /// A stopwatch's time run at `date` (now by default); nil for a countdown.
    public func elapsed(at date: Date = Date()) -> Duration? {
        guard mode == .stopwatch else { return nil }
        if let startedAt { return .milliseconds(max(0, Int((date.timeIntervalSince(startedAt) * 1000).rounded(.down)))) }
        return .milliseconds(json["elapsedMs"]?.intValue ?? 0)
    }

    /// Runs it — from ready, from what it is set to; paused or finished, from the beginning (its full duration, or
    /// zero); nothing when it runs already.
    @discardableResult public func start() async throws -> Int { try await control.send("start") }
    /// Stops it where it is.
    @discardableResult public func pause() async throws -> Int { try await control.send("pause") }
    /// Runs it on from where it was paused; throws `finished` once a countdown has finished.
    @discardableResult public func resume() async throws -> Int { try await control.send("resume") }
    /// Back to its full duration (or zero), stopped.
    @discardableResult public func reset() async throws -> Int { try await control.send("reset") }
    /// More time left on a countdown (less, when negative), or more run on a stopwatch; throws `out_of_range` when a
    /// countdown would be left with nothing.
    @discardableResult public func add(_ duration: Duration) async throws -> Int {
        let (seconds, attoseconds) = duration.components
        return try await control.send("add", ["ms": .int(Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))])
    }

    private func localDate(_ serverTime: Int) -> Date? {
        control.room?.client?.localDate(ofServerTime: serverTime)
    }
}

extension Room {
    public func timer(_ id: String) -> TimerControl? { control(id, as: TimerControl.self) }
}
