import LiveControlsProtocol

/// Numbers on a decimal grid, exactly: a range's `min`, `max`, `step` and values are whole counts of 10^−`places`
/// (`units`), so 0.1 + 0.2 is 0.3 and every value a client sees prints as the decimal it is.
struct DecimalGrid: Sendable, Equatable {
    /// Decimal places of the grid's unit: the most any of the configured numbers has (at most `maxPlaces`).
    let places: Int
    static let maxPlaces = 9
    /// The largest magnitude in units: 2^53 − 1, so every unit count converts to and from a double exactly.
    static let maxUnits = 9_007_199_254_740_991

    /// The decimal places of `number` as JSON shows it (its shortest form: `0.1` has 1, `2.50` is `2.5`, `1e-05` has 5);
    /// nil when it has more than `maxPlaces` or is not finite.
    static func places(of number: JSONValue) -> Int? {
        switch number {
        case .int: return 0
        case .double(let d):
            guard d.isFinite else { return nil }
            let text = "\(d)".lowercased()  // Swift prints the shortest text that reads back as `d`
            let parts = text.split(separator: "e", maxSplits: 1)
            let mantissa = parts[0], exponent = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            var fraction = mantissa.split(separator: ".", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
            while fraction.hasSuffix("0") { fraction.removeLast() }
            let places = max(0, fraction.count - exponent)
            return places <= maxPlaces ? places : nil
        default: return nil
        }
    }

    var scale: Double {
        var s = 1.0
        for _ in 0..<places { s *= 10 }
        return s
    }

    /// `number` in units, rounded to the nearest; nil past ±`maxUnits`.
    func units(_ number: Double) -> Int? {
        let scaled = (number * scale).rounded()
        guard scaled.isFinite, abs(scaled) <= Double(Self.maxUnits) else { return nil }
        return Int(scaled)
    }

    /// `units` as a JSON number: an integer on a grid of whole numbers, else the double nearest the decimal (which
    /// prints as that decimal).
    func json(_ units: Int) -> JSONValue {
        places == 0 ? .int(units) : .double(Double(units) / scale)
    }
}
