/// A calendar date without a time zone: the value of a `date` answer, a date
/// rule's bound, an options provider's day.
///
/// Always valid: a day of the proleptic Gregorian calendar in the years 1 to
/// 9999 (the years `YYYY-MM-DD` can write). Every initializer refuses
/// anything else, and arithmetic that would leave that range returns nil.
///
/// ```swift
/// let d = CivilDate(iso: "2024-02-28")          // 2024-02-28
/// d?.adding(days: 1)?.description                // "2024-02-29"
/// CivilDate(year: 2023, month: 2, day: 29)       // nil
/// ```
///
/// Today's date is not FlowKit's business: it depends on the host's clock and
/// time zone. The daemon injects it into the engine; a plugin that needs it
/// reads its own clock.
public struct CivilDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// 1 to 9999.
    public let year: Int
    /// 1 to 12.
    public let month: Int
    /// 1 to the month's length.
    public let day: Int

    /// The first date there is, 0001-01-01.
    public static let earliest = CivilDate(checkedYear: 1, month: 1, day: 1)
    /// The last date there is, 9999-12-31.
    public static let latest = CivilDate(checkedYear: 9999, month: 12, day: 31)

    /// ``earliest`` to ``latest`` as days since the epoch.
    private static let validDays = earliest.daysSinceEpoch...latest.daysSinceEpoch

    /// A valid date in the years 1–9999, or nil.
    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month),
            (1...Self.daysIn(month: month, year: year)).contains(day)
        else { return nil }
        self.init(checkedYear: year, month: month, day: day)
    }

    /// Parses exactly `YYYY-MM-DD` naming a real day; nil otherwise.
    public init?(iso text: String) {
        let u = Array(text.utf8)
        guard u.count == 10, u[4] == UInt8(ascii: "-"), u[7] == UInt8(ascii: "-"),
            let y = decimal(u[0..<4]), let m = decimal(u[5..<7]), let d = decimal(u[8..<10])
        else { return nil }
        self.init(year: y, month: m, day: d)
    }

    /// The day `days` after 1970-01-01 (before it when negative), or nil
    /// outside the years 1–9999.
    public init?(daysSinceEpoch days: Int) {
        guard Self.validDays.contains(days) else { return nil }
        // Howard Hinnant's civil_from_days: whole 400-year eras, then the day
        // of the era, in a year that starts on 1 March (so February is last).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        self.init(checkedYear: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month: month, day: day)
    }

    /// For values already known to be valid.
    private init(checkedYear year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// Days since 1970-01-01, negative before it (Hinnant's days_from_civil).
    public var daysSinceEpoch: Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let shiftedMonth = month > 2 ? month - 3 : month + 9
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The ISO weekday: 1 is Monday, 7 is Sunday.
    public var isoWeekday: Int {
        // 1970-01-01 was a Thursday (4).
        ((daysSinceEpoch % 7 + 7) % 7 + 3) % 7 + 1
    }

    /// The date `days` later (earlier when negative), or nil outside the
    /// years 1–9999.
    public func adding(days: Int) -> CivilDate? {
        let (sum, overflow) = daysSinceEpoch.addingReportingOverflow(days)
        return overflow ? nil : CivilDate(daysSinceEpoch: sum)
    }

    /// The number of days from `other` to this date: positive when this date
    /// is later.
    public func days(since other: CivilDate) -> Int {
        daysSinceEpoch - other.daysSinceEpoch
    }

    /// `YYYY-MM-DD`.
    public var description: String {
        zeroPadded(year, 4) + "-" + zeroPadded(month, 2) + "-" + zeroPadded(day, 2)
    }

    /// Calendar order.
    public static func < (a: CivilDate, b: CivilDate) -> Bool {
        (a.year, a.month, a.day) < (b.year, b.month, b.day)
    }

    /// True for a leap year of the Gregorian calendar.
    public static func isLeapYear(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    /// The length of `month` (1–12) in `year`; 0 for a month that does not exist.
    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        case 1, 3, 5, 7, 8, 10, 12: return 31
        default: return 0
        }
    }
}

/// Encodes as the string `YYYY-MM-DD`; decoding refuses anything that is not
/// a valid date.
extension CivilDate: Codable {
    public init(from decoder: any Decoder) throws {
        self = try decodeISO(decoder, CivilDate.init(iso:), expected: "a date as YYYY-MM-DD")
    }

    public func encode(to encoder: any Encoder) throws { try description.encode(to: encoder) }
}

/// A time of day to the minute, without a time zone: the value of a `time`
/// answer (`HH:MM`, 24-hour). Always valid: 00:00 to 23:59.
public struct CivilTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// 0 to 23.
    public let hour: Int
    /// 0 to 59.
    public let minute: Int

    /// A valid time of day, or nil.
    public init?(hour: Int, minute: Int) {
        guard (0..<24).contains(hour), (0..<60).contains(minute) else { return nil }
        self.hour = hour
        self.minute = minute
    }

    /// Parses exactly `HH:MM`, 00:00 to 23:59; nil otherwise.
    public init?(iso text: String) {
        let u = Array(text.utf8)
        guard u.count == 5, u[2] == UInt8(ascii: ":"), let h = decimal(u[0..<2]), let m = decimal(u[3..<5])
        else { return nil }
        self.init(hour: h, minute: m)
    }

    /// The time `minutes` after midnight (0 to 1439), or nil.
    public init?(minutesSinceMidnight minutes: Int) {
        guard (0..<1440).contains(minutes) else { return nil }
        self.init(hour: minutes / 60, minute: minutes % 60)
    }

    /// Minutes after midnight, 0 to 1439.
    public var minutesSinceMidnight: Int { hour * 60 + minute }

    /// `HH:MM`.
    public var description: String { zeroPadded(hour, 2) + ":" + zeroPadded(minute, 2) }

    /// Order within a day.
    public static func < (a: CivilTime, b: CivilTime) -> Bool { (a.hour, a.minute) < (b.hour, b.minute) }
}

/// Encodes as the string `HH:MM`; decoding refuses anything that is not a
/// valid time.
extension CivilTime: Codable {
    public init(from decoder: any Decoder) throws {
        self = try decodeISO(decoder, CivilTime.init(iso:), expected: "a time as HH:MM")
    }

    public func encode(to encoder: any Encoder) throws { try description.encode(to: encoder) }
}

/// A value decoded from one string that `parse` accepts; a decoding error
/// saying what was `expected` otherwise.
private func decodeISO<T>(_ decoder: any Decoder, _ parse: (String) -> T?, expected: String) throws -> T {
    let c = try decoder.singleValueContainer()
    guard let value = parse(try c.decode(String.self)) else {
        throw DecodingError.dataCorruptedError(in: c, debugDescription: "expected \(expected)")
    }
    return value
}

/// The value of ASCII decimal digits; nil for any other byte.
private func decimal(_ bytes: ArraySlice<UInt8>) -> Int? {
    var v = 0
    for b in bytes {
        guard b >= UInt8(ascii: "0"), b <= UInt8(ascii: "9") else { return nil }
        v = v * 10 + Int(b - UInt8(ascii: "0"))
    }
    return v
}

private func zeroPadded(_ v: Int, _ width: Int) -> String {
    let s = String(v)
    return String(repeating: "0", count: max(0, width - s.count)) + s
}
