import FlowKit
import Foundation
import Glibc
import PluginHost
import PluginTestSupport
import Testing

@Suite("flowd.weekdays")
struct WeekdaysTests {
    @Test("the next N weekdays from tomorrow, ids as dates, labels in the session's language")
    func weekdays() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let before = localToday().epochDay
        let result = await caller.options("flowd.weekdays", field: Samples.field(type: "choice"),
            context: Samples.context(options: ["count": 7]))
        guard localToday().epochDay == before else { return }
        let options = try #require(result.value)
        // Compute the expected days independently: epoch day 0 was a Thursday.
        var expected: [String] = []
        var offset = 1
        while expected.count < 7 {
            let weekday = ((before + offset) % 7 + 3) % 7  // 0 = Monday
            if weekday < 5 { expected.append(isoDay(offset)) }
            offset += 1
        }
        #expect(options.map(\.id) == expected)
        let english = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
        for option in options {
            #expect(english.contains { option.label.hasPrefix($0) }, "\(option.label)")
        }
    }

    @Test("labels in German, French and Spanish name the weekday", arguments: [
        ("de", ["Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag"]),
        ("fr", ["lundi", "mardi", "mercredi", "jeudi", "vendredi"]),
        ("es", ["lunes", "martes", "miércoles", "jueves", "viernes"]),
    ])
    func languages(locale: String, names: [String]) async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let options = try #require(await caller.options("flowd.weekdays", field: Samples.field(),
            context: Samples.context(locale: locale, options: ["count": 5])).value)
        #expect(options.count == 5)
        // Five consecutive weekdays: each name exactly once.
        for name in names {
            #expect(options.filter { $0.label.contains(name) }.count == 1, "\(name) in \(options.map(\.label))")
        }
    }

    @Test("a language ICU does not know falls back to ISO dates")
    func unknownLanguage() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let options = try #require(await caller.options("flowd.weekdays", field: Samples.field(),
            context: Samples.context(locale: "qq", options: ["count": 2])).value)
        #expect(options.map(\.label) == options.map(\.id))
    }

    @Test("count defaults to 5 and is bounded")
    func count() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        #expect(await caller.options("flowd.weekdays", field: Samples.field(), context: Samples.context())
            .value?.count == 5)
        for bad: JSONValue in [0, 61, 2.5, "5"] {
            #expect(await caller.options("flowd.weekdays", field: Samples.field(),
                context: Samples.context(options: ["count": bad])).failureMessage == .some(nil), "\(bad)")
        }
    }
}

@Suite("flowd.time-slots")
struct TimeSlotsTests {
    @Test("slots from start while they end by end, ids HH:MM")
    func slots() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let day = try #require(await caller.options("flowd.time-slots", field: Samples.field(type: "choice"),
            context: Samples.context(locale: "de")).value)
        #expect(day.count == 16)
        #expect(day.first?.id == "09:00")
        #expect(day.last?.id == "16:30")
        #expect(day.first?.label == "09:00")

        let custom = try #require(await caller.options("flowd.time-slots", field: Samples.field(),
            context: Samples.context(options: ["start": "08:15", "end": "10:00", "minutes": 45])).value)
        #expect(custom.map(\.id) == ["08:15", "09:00"])

        let english = try #require(await caller.options("flowd.time-slots", field: Samples.field(),
            context: Samples.context(locale: "en", options: ["start": "13:00", "end": "14:00", "minutes": 60])).value)
        #expect(english.map(\.id) == ["13:00"])
        #expect(english.first?.label.contains("1:00") == true)
        #expect(english.first?.label.contains("PM") == true)
    }

    @Test("bad options are refused", arguments: [
        ["start": "9:00"] as [String: JSONValue], ["end": "25:00"], ["minutes": 2], ["start": "12:00", "end": "12:10"],
        ["start": "aa:bb"], ["length": 30],
    ])
    func bad(options: [String: JSONValue]) async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        #expect(await caller.options("flowd.time-slots", field: Samples.field(),
            context: Samples.context(options: options)).failureMessage == .some(nil))
    }
}

@Suite("flowd.real-name")
struct RealNameTests {
    /// The first GECOS field of `uid`, looked up here independently.
    func gecosName(_ uid: uid_t) -> String? {
        guard let entry = getpwuid(uid), let gecos = entry.pointee.pw_gecos else { return nil }
        let first = String(cString: gecos).split(separator: ",", omittingEmptySubsequences: false).first ?? ""
        let trimmed = first.trimmingCharacters(in: .whitespaces)
        return trimmed.isEmpty ? nil : trimmed
    }

    @Test("the caller's real name from the account database")
    func realName() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        // Every account in /etc/passwd, with or without a name.
        let passwd = (try? String(contentsOfFile: "/etc/passwd", encoding: .utf8)) ?? ""
        let uids = passwd.split(separator: "\n").compactMap { UInt32($0.split(separator: ":", omittingEmptySubsequences: false).dropFirst(2).first ?? "") }
        #expect(!uids.isEmpty)
        for uid in uids.prefix(20) {
            let result = await caller.prefill("flowd.real-name", field: Samples.field(),
                context: Samples.context(uid: uid))
            #expect(result == .success(gecosName(uid_t(uid)).map { .text($0) }), "uid \(uid)")
        }
    }

    @Test("an unknown uid gives no value")
    func unknown() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        var uid: UInt32 = 3_999_999
        while getpwuid(uid) != nil { uid += 1 }
        #expect(await caller.prefill("flowd.real-name", field: Samples.field(), context: Samples.context(uid: uid))
            == .success(nil))
    }
}
