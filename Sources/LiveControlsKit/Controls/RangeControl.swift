/// A fader or slider (kind `range`): a number in `min…max` on a grid of `step`, exact. While someone drags it the room
/// sends its patches at most every ``minIntervalMs`` (the last value always arrives); the dragging session holds it.
@MainActor
public struct RangeControl: ControlView {
    public static let kind = "range"
    public let control: LiveControl
    public init(unchecked control: LiveControl) { self.control = control }

    /// The value as the room last sent it (an integer on a whole-number grid, else the decimal as a `Double`).
    public var value: Double { json["value"]?.doubleValue ?? 0 }
    public var min: Double { json["min"]?.doubleValue ?? 0 }
    public var max: Double { json["max"]?.doubleValue ?? 0 }
    public var step: Double { json["step"]?.doubleValue ?? 1 }
    public var minIntervalMs: Int { json["minIntervalMs"]?.intValue ?? 0 }
    /// The session moving it, if anyone.
    public var holder: String? { json["holding"]?["session"]?.stringValue }

    /// Moves it to `value` (the nearest grid point); throws `out_of_range` outside `min…max`. Call it on every frame of a
    /// drag, then ``release()``.
    @discardableResult public func set(_ value: Double) async throws -> Int {
        try await control.send("set", ["value": Self.number(value)])
    }
    /// Moves it by `delta` (negative: down), stopping at a bound; throws `at_bound` when already there.
    @discardableResult public func nudge(by delta: Double) async throws -> Int {
        try await control.send("nudge", ["by": Self.number(delta)])
    }
    /// Ends this session's drag (what is pending goes out with it); throws `not_holder` when it holds none.
    @discardableResult public func release() async throws -> Int { try await control.send("release") }

    /// A whole number as a JSON integer, else a double.
    static func number(_ value: Double) -> JSONValue {
        value.rounded() == value && abs(value) < 9e15 ? .int(Int(value)) : .double(value)
    }
}

extension Room {
    public func range(_ id: String) -> RangeControl? { control(id, as: RangeControl.self) }
}
