import Foundation

/// A shared switch; with ``confirmHoldMs`` only a press held that long switches it (the server times the hold).
@MainActor
public struct ToggleControl: ControlView {
    public static let kind = "toggle"
    public let control: LiveControl
    public init(unchecked control: LiveControl) { self.control = control }

    /// A confirming hold in progress: who holds it, what the toggle becomes, and when (server time).
    public struct Confirming: Equatable, Sendable {
        public var session: String
        public var to: Bool
        /// Server time, ms since 1970 (``LiveControlsClient/localDate(ofServerTime:)`` places it on this machine's clock).
        public var until: Int
    }

    public var isOn: Bool { json["on"]?.boolValue ?? false }
    /// How long a press must be held to switch, in ms; nil when ``set(_:)`` and ``flip()`` switch at once.
    public var confirmHoldMs: Int? { json["confirmHoldMs"]?.intValue }
    /// The running confirming hold, by anyone.
    public var confirming: Confirming? {
        guard let h = json["holding"], let session = h["session"]?.stringValue, let to = h["to"]?.boolValue,
              let until = h["until"]?.intValue else { return nil }
        return Confirming(session: session, to: to, until: until)
    }
    /// When the running confirming hold switches the toggle, on this machine's clock.
    public var confirmsAt: Date? {
        guard let until = confirming?.until, let client = control.room?.client else { return nil }
        return client.localDate(ofServerTime: until)
    }

    /// Switches to `on`; throws `hold_required` when the toggle confirms by holding.
    @discardableResult public func set(_ on: Bool) async throws -> Int { try await control.send("set", ["on": .bool(on)]) }
    /// Switches to the other state; throws `hold_required` when the toggle confirms by holding.
    @discardableResult public func flip() async throws -> Int { try await control.send("flip") }

    /// Starts a confirming hold: the server switches the toggle once it has lasted ``confirmHoldMs`` (the hold then ends
    /// with ``Hold/endReason`` `confirmed`); releasing it earlier changes nothing. Without ``confirmHoldMs`` it switches
    /// at once and the returned hold has already ended (`endReason` `confirmed`).
    public func press() async throws -> Hold {
        guard let room = control.room, let client = room.client else { throw LiveControlsError.notConnected }
        return try await client.press(in: room, control: control.id, direction: nil)
    }
}

extension Room {
    public func toggle(_ id: String) -> ToggleControl? { control(id, as: ToggleControl.self) }
}
