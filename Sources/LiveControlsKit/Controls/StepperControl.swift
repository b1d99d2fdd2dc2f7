/// An integer in `min…max` (the hold-to-increment stepper).
@MainActor
public struct StepperControl: SequentialControl {
    public static let kind = "stepper"
    public let control: LiveControl
    public init(unchecked control: LiveControl) { self.control = control }

    public var value: Int { json["value"]?.intValue ?? 0 }
    public var min: Int { json["min"]?.intValue ?? 0 }
    public var max: Int { json["max"]?.intValue ?? 0 }
    public var step: Int { json["step"]?.intValue ?? 1 }
    /// Stepping past a bound lands on the other bound.
    public var wrap: Bool { json["wrap"]?.boolValue ?? false }

    /// Sets the value; throws `out_of_range` outside `min…max`.
    @discardableResult public func set(_ value: Int) async throws -> Int {
        try await control.send("set", ["value": .int(value)])
    }
}
