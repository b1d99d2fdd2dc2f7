/// A date of the proleptic Gregorian calendar (no time zone: the pager's `day` and `month` domains).
public struct CivilDate: Sendable, Equatable, Hashable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int

    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// `YYYY-MM-DD`.
    public var description: String { Gregorian.format(year: year, month: month, day: day) }

    /// The UTC date `seconds` after 1970-01-01T00:00:00Z (before it when negative). The engine reads no clock:
    /// whoever parses a config passes the current time, e.g. `CivilDate.today(fromUnixSeconds: Int(time(nil)))`.
    public static func today(fromUnixSeconds seconds: Int) -> CivilDate {
        let days = seconds >= 0 ? seconds / 86_400 : -((-seconds + 86_399) / 86_400)
        return Gregorian.date(days: days)
    }
}

/// Pure Gregorian arithmetic: leap years, month lengths, and days counted from 1970-01-01.
///
/// No Foundation `Calendar`: the conversions are Howard Hinnant's `days_from_civil` and
/// `civil_from_days`, exact for every year of the proleptic Gregorian calendar.
public enum Gregorian {
    /// Divisible by 4, except centuries not divisible by 400 (1900 is not, 2000 is).
    public static func isLeapYear(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    /// 28–31.
    public static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 (day 0) to the given date; negative before it.
    public static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    public static func days(_ date: CivilDate) -> Int { days(year: date.year, month: date.month, day: date.day) }

    /// The date `days` days after 1970-01-01.
    public static func date(days: Int) -> CivilDate {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return CivilDate(year: yoe + era * 400 + (month <= 2 ? 1 : 0), month: month, day: day)
    }

    /// 0 = Sunday … 6 = Saturday.
    public static func weekday(days: Int) -> Int {
        let w = (days + 4) % 7  // 1970-01-01 was a Thursday
        return w < 0 ? w + 7 : w
    }

    /// `YYYY-MM-DD`, or `YYYY-MM` when `day` is nil (years 1–9999, zero-padded).
    public static func format(year: Int, month: Int, day: Int? = nil) -> String {
        var s = pad(year, 4) + "-" + pad(month, 2)
        if let day { s += "-" + pad(day, 2) }
        return s
    }

    private static func pad(_ n: Int, _ width: Int) -> String {
        let digits = String(n)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    /// Parses `YYYY-MM` (`withDay: false`) or `YYYY-MM-DD`, checking month and day ranges
    /// (so `2023-02-29` is refused, `2024-02-29` accepted). Years 0001–9999.
    public static func parse(_ text: String, withDay: Bool) throws(CalendarFormatError) -> CivilDate {
        let shape = withDay ? "YYYY-MM-DD" : "YYYY-MM"
        let chars = Array(text.utf8)
        guard chars.count == shape.utf8.count else { throw CalendarFormatError(message: "\"\(text)\" is not \(shape)") }
        var fields: [Int] = []
        var current = 0
        for (c, expected) in zip(chars, shape.utf8) {
            if expected == UInt8(ascii: "-") {
                guard c == UInt8(ascii: "-") else { throw CalendarFormatError(message: "\"\(text)\" is not \(shape)") }
                fields.append(current)
                current = 0
            } else {
                guard c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") else { throw CalendarFormatError(message: "\"\(text)\" is not \(shape)") }
                current = current * 10 + Int(c - UInt8(ascii: "0"))
            }
        }
        fields.append(current)
        let (year, month) = (fields[0], fields[1])
        guard year >= 1 else { throw CalendarFormatError(message: "\"\(text)\": year must be 0001–9999") }
        guard (1...12).contains(month) else { throw CalendarFormatError(message: "\"\(text)\": month must be 01–12") }
        let day = withDay ? fields[2] : 1
        let last = daysInMonth(year: year, month: month)
        guard (1...last).contains(day) else {
            throw CalendarFormatError(message: "\"\(text)\": day must be 01–\(last) in \(format(year: year, month: month))")
        }
        return CivilDate(year: year, month: month, day: day)
    }
}

/// A date string that is not in the expected shape or not a real date.
public struct CalendarFormatError: Error, Sendable, Equatable {
    public var message: String
}
