import LiveControlsProtocol

/// What a pager pages through (the seed's `ChangeIndex`).
public enum PagerDomain: String, Sendable, CaseIterable {
    /// Integers, shown as JSON integers.
    case integer
    /// Calendar months, shown as `"YYYY-MM"`.
    case month
    /// Calendar days, shown as `"YYYY-MM-DD"`.
    case day
}

/// Pager positions as ordinals: every domain maps onto `Int`, so stepping is plain addition.
///
/// `integer` positions are themselves; a month is `year * 12 + (month - 1)`; a day counts days from
/// 1970-01-01. The JSON form (`json(_:)`, `parse(_:)`) is what clients see and send.
public enum PagerPosition {
    /// Largest integer position: 2^53 − 1, exact in every JSON client.
    public static let maxSafeInteger = 9_007_199_254_740_991

    /// Every position a domain can show (years 0001–9999 for the calendar domains).
    public static func naturalBounds(_ domain: PagerDomain) -> ClosedRange<Int> {
        switch domain {
        case .integer: return -maxSafeInteger...maxSafeInteger
        case .month: return month(year: 1, month: 1)...month(year: 9999, month: 12)
        case .day: return Gregorian.days(year: 1, month: 1, day: 1)...Gregorian.days(year: 9999, month: 12, day: 31)
        }
    }

    public static func month(year: Int, month: Int) -> Int { year * 12 + (month - 1) }

    /// The ordinal of `date` in a calendar domain (its month, or its day).
    public static func ordinal(of date: CivilDate, in domain: PagerDomain) -> Int {
        switch domain {
        case .integer: return 0
        case .month: return month(year: date.year, month: date.month)
        case .day: return Gregorian.days(date)
        }
    }

    /// The position as clients see it: an integer, `"YYYY-MM"` or `"YYYY-MM-DD"`.
    public static func json(_ ordinal: Int, in domain: PagerDomain) -> JSONValue {
        switch domain {
        case .integer:
            return .int(ordinal)
        case .month:
            let year = ordinal >= 0 ? ordinal / 12 : -((-ordinal + 11) / 12)
            return .string(Gregorian.format(year: year, month: ordinal - year * 12 + 1))
        case .day:
            let d = Gregorian.date(days: ordinal)
            return .string(Gregorian.format(year: d.year, month: d.month, day: d.day))
        }
    }

    /// Reads a position in a domain's JSON form, or says what is wrong with it.
    public static func parse(_ value: JSONValue, in domain: PagerDomain) throws(CalendarFormatError) -> Int {
        switch domain {
        case .integer:
            guard case .int(let i) = value else { throw CalendarFormatError(message: "expected an integer position, got \(value.typeName)") }
            guard naturalBounds(.integer).contains(i) else {
                throw CalendarFormatError(message: "\(i) is beyond ±\(maxSafeInteger)")
            }
            return i
        case .month, .day:
            guard let text = value.stringValue else {
                throw CalendarFormatError(message: "expected a \(domain == .month ? "\"YYYY-MM\"" : "\"YYYY-MM-DD\"") string, got \(value.typeName)")
            }
            return ordinal(of: try Gregorian.parse(text, withDay: domain == .day), in: domain)
        }
    }
}
