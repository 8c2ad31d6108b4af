import FlowKit
import Testing

@Suite struct CivilDateInvariants {
    @Test("invalid dates cannot be constructed", arguments: [
        (2023, 2, 29), (1900, 2, 29), (2024, 2, 30), (2024, 4, 31), (2024, 6, 31), (2024, 9, 31), (2024, 11, 31),
        (2024, 13, 1), (2024, 0, 1), (2024, 1, 0), (2024, 1, 32), (0, 1, 1), (10000, 1, 1), (-1, 6, 1),
    ])
    func invalidComponents(year: Int, month: Int, day: Int) {
        #expect(CivilDate(year: year, month: month, day: day) == nil)
    }

    @Test("ISO text is parsed only when it is exactly YYYY-MM-DD naming a real day", arguments: [
        "2023-02-29", "2024-02-30", "0000-01-01", "2024-1-01", "2024-01-1", "24-01-01", "2024/01/01", "2024-01-01 ",
        " 2024-01-01", "2024-01-01T00:00", "２０２４-01-01", "2024-0a-01", "+024-01-01", "", "today",
    ])
    func invalidText(text: String) {
        #expect(CivilDate(iso: text) == nil)
    }

    @Test func validDatesKeepTheirParts() throws {
        let d = try #require(CivilDate(year: 2024, month: 2, day: 29))
        #expect((d.year, d.month, d.day) == (2024, 2, 29))
        #expect(d.description == "2024-02-29")
        #expect(CivilDate(iso: "2024-02-29") == d)
        #expect(try #require(CivilDate(year: 7, month: 3, day: 5)).description == "0007-03-05")
        #expect(CivilDate(iso: "0001-01-01") == .earliest)
        #expect(CivilDate(iso: "9999-12-31") == .latest)
    }

    @Test("leap years: every fourth, except centuries, except every fourth century")
    func leapYears() {
        #expect(CivilDate.isLeapYear(2024))
        #expect(CivilDate.isLeapYear(2000))
        #expect(CivilDate.isLeapYear(1600))
        #expect(!CivilDate.isLeapYear(2023))
        #expect(!CivilDate.isLeapYear(1900))
        #expect(!CivilDate.isLeapYear(2100))
        #expect(CivilDate(year: 2000, month: 2, day: 29) != nil)
        #expect(CivilDate(year: 2100, month: 2, day: 29) == nil)
        #expect(CivilDate.daysIn(month: 2, year: 2024) == 29)
        #expect(CivilDate.daysIn(month: 2, year: 2023) == 28)
        #expect(CivilDate.daysIn(month: 13, year: 2023) == 0)
        // A leap year has 366 days, others 365.
        #expect(date("2025-01-01").days(since: date("2024-01-01")) == 366)
        #expect(date("2101-01-01").days(since: date("2100-01-01")) == 365)
    }

    @Test func daysSinceEpochAtKnownDays() {
        #expect(date("1970-01-01").daysSinceEpoch == 0)
        #expect(date("1970-01-02").daysSinceEpoch == 1)
        #expect(date("1969-12-31").daysSinceEpoch == -1)
        #expect(date("2000-03-01").daysSinceEpoch == 11_017)
        #expect(date("2024-06-15").daysSinceEpoch == 19_889)
        #expect(CivilDate.earliest.daysSinceEpoch == -719_162)
        #expect(CivilDate.latest.daysSinceEpoch == 2_932_896)
    }

    @Test("days since the epoch and back give the same date, over the whole calendar")
    func daysRoundTrip() throws {
        var day = CivilDate.earliest.daysSinceEpoch
        var previous: CivilDate?
        while day <= CivilDate.latest.daysSinceEpoch {
            let d = try #require(CivilDate(daysSinceEpoch: day))
            #expect(d.daysSinceEpoch == day)
            #expect(CivilDate(year: d.year, month: d.month, day: d.day) == d)
            if let previous { #expect(previous < d) }
            previous = d
            day += 997  // a prime stride visits every month and weekday
        }
        #expect(CivilDate(daysSinceEpoch: CivilDate.earliest.daysSinceEpoch - 1) == nil)
        #expect(CivilDate(daysSinceEpoch: CivilDate.latest.daysSinceEpoch + 1) == nil)
        #expect(CivilDate(daysSinceEpoch: .min) == nil)
        #expect(CivilDate(daysSinceEpoch: .max) == nil)
    }

    @Test("adding days crosses month and year ends, leap days included")
    func arithmetic() {
        #expect(date("2024-01-31").adding(days: 1) == date("2024-02-01"))
        #expect(date("2024-02-28").adding(days: 1) == date("2024-02-29"))
        #expect(date("2024-02-29").adding(days: 1) == date("2024-03-01"))
        #expect(date("2023-02-28").adding(days: 1) == date("2023-03-01"))
        #expect(date("2024-12-31").adding(days: 1) == date("2025-01-01"))
        #expect(date("2025-01-01").adding(days: -1) == date("2024-12-31"))
        #expect(date("2024-03-01").adding(days: -1) == date("2024-02-29"))
        #expect(date("2024-06-15").adding(days: 0) == date("2024-06-15"))
        #expect(date("2024-06-15").adding(days: 365) == date("2025-06-15"))
        #expect(date("2000-01-01").adding(days: 36_525) == date("2100-01-01"))
        #expect(date("2024-06-15").days(since: date("2024-05-15")) == 31)
        #expect(date("2024-05-15").days(since: date("2024-06-15")) == -31)
    }

    @Test("arithmetic never leaves the calendar: past its ends it is nil")
    func arithmeticAtTheEnds() {
        #expect(CivilDate.latest.adding(days: 1) == nil)
        #expect(CivilDate.earliest.adding(days: -1) == nil)
        #expect(CivilDate.earliest.adding(days: .min) == nil)
        #expect(CivilDate.latest.adding(days: .max) == nil)
        #expect(CivilDate.latest.adding(days: -1) == date("9999-12-30"))
    }

    @Test("ISO weekdays of known dates", arguments: [
        ("1970-01-01", 4), ("2000-01-01", 6), ("2024-02-29", 4), ("2024-06-15", 6), ("2024-06-16", 7),
        ("2024-06-17", 1), ("1969-12-31", 3), ("0001-01-01", 1), ("9999-12-31", 5),
    ])
    func weekdays(text: String, weekday: Int) {
        #expect(date(text).isoWeekday == weekday)
    }

    @Test func calendarOrder() {
        #expect(date("2024-01-31") < date("2024-02-01"))
        #expect(date("2023-12-31") < date("2024-01-01"))
        #expect(!(date("2024-01-01") < date("2024-01-01")))
        #expect([date("2024-03-01"), date("2023-03-01"), date("2024-02-29")].sorted().map(\.description)
            == ["2023-03-01", "2024-02-29", "2024-03-01"])
    }
}

@Suite struct CivilTimeInvariants {
    @Test("invalid times cannot be constructed")
    func invalid() {
        for (h, m) in [(24, 0), (-1, 0), (0, 60), (0, -1), (23, 60)] {
            #expect(CivilTime(hour: h, minute: m) == nil)
        }
        for text in ["24:00", "9:00", "09:0", "09-00", "0900", "09:00 ", "２3:00", "ab:cd", ""] {
            #expect(CivilTime(iso: text) == nil, "\(text)")
        }
        #expect(CivilTime(minutesSinceMidnight: 1440) == nil)
        #expect(CivilTime(minutesSinceMidnight: -1) == nil)
    }

    @Test func validTimes() throws {
        let t = try #require(CivilTime(iso: "09:05"))
        #expect((t.hour, t.minute) == (9, 5))
        #expect(t.description == "09:05")
        #expect(t.minutesSinceMidnight == 545)
        #expect(CivilTime(minutesSinceMidnight: 545) == t)
        #expect(CivilTime(iso: "00:00")?.minutesSinceMidnight == 0)
        #expect(CivilTime(iso: "23:59")?.minutesSinceMidnight == 1439)
        #expect(try #require(CivilTime(iso: "09:59")) < #require(CivilTime(iso: "10:00")))
    }
}

/// A date the test knows is valid.
func date(_ text: String) -> CivilDate {
    guard let d = CivilDate(iso: text) else {
        Issue.record("\(text) is not a valid date")
        return .earliest
    }
    return d
}
