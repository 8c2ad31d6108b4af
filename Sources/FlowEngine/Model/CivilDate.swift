/// A calendar date without a time zone, as answers and date rules use it.
public struct CivilDate: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// 1 to 9999.
    public let year: Int
    /// 1 to 12.
    public let month: Int
    /// 1 to the month's length.
    public let day: Int

    /// A valid proleptic Gregorian date in years 1–9999, or nil.
    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month),
            (1...Self.daysIn(month: month, year: year)).contains(day)
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses exactly `YYYY-MM-DD`.
    public init?(iso text: String) {
        let u = Array(text.utf8)
        guard u.count == 10, u[4] == UInt8(ascii: "-"), u[7] == UInt8(ascii: "-"),
            let y = digits(u[0..<4]), let m = digits(u[5..<7]), let d = digits(u[8..<10])
        else { return nil }
        self.init(year: y, month: m, day: d)
    }

    /// `YYYY-MM-DD`.
    public var description: String {
        pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
    }

    /// The day after this one; nil after 9999-12-31.
    package var nextDay: CivilDate? {
        if day < Self.daysIn(month: month, year: year) { return CivilDate(year: year, month: month, day: day + 1) }
        if month < 12 { return CivilDate(year: year, month: month + 1, day: 1) }
        return CivilDate(year: year + 1, month: 1, day: 1)
    }

    /// Calendar order.
    public static func < (a: CivilDate, b: CivilDate) -> Bool {
        (a.year, a.month, a.day) < (b.year, b.month, b.day)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        let s = try c.decode(String.self)
        guard let d = CivilDate(iso: s) else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "expected a date as YYYY-MM-DD")
        }
        self = d
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

/// A time of day, `HH:MM` in 24-hour form.
public struct CivilTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// 0 to 23.
    public let hour: Int
    /// 0 to 59.
    public let minute: Int

    /// Parses exactly `HH:MM`, 00:00 to 23:59.
    public init?(iso text: String) {
        let u = Array(text.utf8)
        guard u.count == 5, u[2] == UInt8(ascii: ":"), let h = digits(u[0..<2]), let m = digits(u[3..<5]),
            h < 24, m < 60
        else { return nil }
        hour = h
        minute = m
    }

    /// A time from its parts; nil outside 00:00 to 23:59.
    package init?(hour: Int, minute: Int) {
        guard (0..<24).contains(hour), (0..<60).contains(minute) else { return nil }
        self.hour = hour
        self.minute = minute
    }

    /// `HH:MM`.
    public var description: String { pad(hour, 2) + ":" + pad(minute, 2) }

    /// Order within a day.
    public static func < (a: CivilTime, b: CivilTime) -> Bool { (a.hour, a.minute) < (b.hour, b.minute) }
}

private func digits(_ bytes: ArraySlice<UInt8>) -> Int? {
    var v = 0
    for b in bytes {
        guard b >= UInt8(ascii: "0"), b <= UInt8(ascii: "9") else { return nil }
        v = v * 10 + Int(b - UInt8(ascii: "0"))
    }
    return v
}

private func pad(_ v: Int, _ width: Int) -> String {
    let s = String(v)
    return String(repeating: "0", count: max(0, width - s.count)) + s
}

/// The engine's only source of time, injected by the daemon (and by tests).
///
/// The engine never reads the system clock or the time zone: `today` is the
/// local calendar date as the daemon computes it.
public protocol EngineClock: Sendable {
    /// Microseconds since the Unix epoch.
    var now: Int64 { get }
    /// Today's date in the daemon's local time zone, for `"today"` in date rules.
    var today: CivilDate { get }
}

/// A clock that always says the same thing: for tests and for replaying.
public struct FixedClock: EngineClock {
    /// Microseconds since the Unix epoch.
    public var now: Int64
    /// The local calendar date.
    public var today: CivilDate

    /// A clock stopped at `now` on `today`.
    public init(now: Int64, today: CivilDate) {
        self.now = now
        self.today = today
    }
}
