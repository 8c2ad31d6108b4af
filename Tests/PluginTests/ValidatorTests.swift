import FlowKit
import Foundation
import Glibc
import PluginHost
import PluginTestSupport
import Testing

/// Today in local time, as the plugins compute it.
func localToday() -> (year: Int, month: Int, day: Int, epochDay: Int) {
    var now = time(nil)
    var parts = tm()
    localtime_r(&now, &parts)
    var utc = parts
    utc.tm_isdst = 0
    let epochDay = Int(timegm(&utc)) / 86_400
    return (Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday), epochDay)
}

/// `YYYY-MM-DD` of the day `offset` days from today (local time).
func isoDay(_ offset: Int) -> String {
    var seconds = time_t((localToday().epochDay + offset) * 86_400 + 43_200)
    var parts = tm()
    gmtime_r(&seconds, &parts)
    return String(format: "%04d-%02d-%02d", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday))
}

@Suite("flowd.hostname")
struct HostnameTests {
    @Test("accepts RFC 1123 host names", arguments: [
        "printer-2", "printer-2.example.org", "a", "1host", "x.y.z", "UPPER.example.COM",
        String(repeating: "a", count: 63) + ".example.org",
        Array(repeating: String(repeating: "a", count: 61), count: 4).joined(separator: "."),
    ])
    func valid(name: String) async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        #expect(await caller.validateField("flowd.hostname", value: .text(name), field: Samples.field(),
            context: Samples.context()) == .success(.accepted))
    }

    @Test("refuses what is not one, with a message saying why", arguments: [
        ("-printer", "hyphens"), ("printer-", "hyphens"), ("pr_inter", "hyphens"), ("a..b", "hyphens"),
        ("host.", "hyphens"), ("", "hyphens"), ("hôte", "hyphens"), ("a b", "hyphens"),
        (String(repeating: "a", count: 64), "63"), ("192.168.0.1", "only digits"),
        (Array(repeating: String(repeating: "a", count: 62), count: 5).joined(separator: "."), "253"),
    ])
    func invalid(name: String, hint: String) async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let result = await caller.validateField("flowd.hostname", value: .text(name), field: Samples.field(),
            context: Samples.context())
        let message = try #require(result.value?.rejection, "\(name) was accepted")
        #expect(message.contains(hint), "\(name): \(message)")
    }

    @Test("requireDomain wants a dot; messages come in the session's language")
    func options() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let strict = Samples.context(locale: "de", options: ["requireDomain": true])
        let message = await caller.validateField("flowd.hostname", value: .text("printer"), field: Samples.field(),
            context: strict)
        #expect(message.value?.rejection?.hasPrefix("Geben Sie einen vollständigen Hostnamen") == true)
        #expect(await caller.validateField("flowd.hostname", value: .text("printer.example.org"),
            field: Samples.field(), context: strict) == .success(.accepted))
        let bad = await caller.validateField("flowd.hostname", value: .text("printer"), field: Samples.field(),
            context: Samples.context(options: ["requireDomian": true]))
        #expect(bad.failureDetail?.contains("unknown option") == true)
        let notText = await caller.validateField("flowd.hostname", value: .integer(3), field: Samples.field(),
            context: Samples.context())
        #expect(notText.failureMessage == .some(nil))
    }
}

@Suite("flowd.username-available")
struct UsernameTests {
    @Test("a user name that exists on this system is taken")
    func taken() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        for name in ["root", "nobody", "daemon"] {
            let result = await caller.validateField("flowd.username-available", value: .text(name),
                field: Samples.field(), context: Samples.context())
            #expect(result.value == .rejected("The user name “\(name)” is already taken."), "\(name)")
        }
    }

    @Test("a group name that exists is taken too, unless checkGroups is off")
    func groups() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        // A group with no user of the same name: look one up in /etc/group.
        let groups = (try? String(contentsOfFile: "/etc/group", encoding: .utf8)) ?? ""
        let names = groups.split(separator: "\n").compactMap { $0.split(separator: ":").first.map(String.init) }
        let groupOnly = try #require(names.first { getpwnam($0) == nil && !$0.contains(where: \.isUppercase) })
        let checked = await caller.validateField("flowd.username-available", value: .text(groupOnly),
            field: Samples.field(), context: Samples.context())
        #expect(checked.value?.rejection?.contains("already taken") == true)
        let unchecked = await caller.validateField("flowd.username-available", value: .text(groupOnly),
            field: Samples.field(), context: Samples.context(options: ["checkGroups": false]))
        #expect(unchecked == .success(.accepted))
    }

    @Test("a free, well-formed name is accepted")
    func free() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let name = "flowd-test-\(UInt32.random(in: 0...UInt32.max))"
        #expect(getpwnam(name) == nil)
        #expect(await caller.validateField("flowd.username-available", value: .text(name), field: Samples.field(),
            context: Samples.context()) == .success(.accepted))
    }

    @Test("malformed names are refused before any lookup", arguments: [
        "Root", "1abc", "-abc", "a b", "ab:c", "ab/c", String(repeating: "a", count: 33), "", "äb", "ab$x",
    ])
    func malformed(name: String) async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let result = await caller.validateField("flowd.username-available", value: .text(name),
            field: Samples.field(), context: Samples.context(locale: "fr"))
        #expect(result.value?.rejection?.hasPrefix("Utilisez jusqu’à 32 lettres minuscules") == true, "\(name)")
    }
}

@Suite("flowd.date-window")
struct DateWindowTests {
    func check(_ caller: PluginCaller, _ value: String, _ options: [String: JSONValue] = [:], locale: String = "en")
        async -> PluginCallResult<FieldAssessment>
    {
        await caller.validateField("flowd.date-window", value: .text(value), field: Samples.field(type: "date"),
            context: Samples.context(locale: locale, options: options))
    }

    @Test("the default window is today up to 30 days ahead")
    func defaultWindow() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let before = localToday().epochDay
        let results = [await check(caller, isoDay(0)), await check(caller, isoDay(30)),
            await check(caller, isoDay(-1)), await check(caller, isoDay(31))]
        // Skip the check in the rare run that straddles midnight.
        guard localToday().epochDay == before else { return }
        #expect(results[0] == .success(.accepted))
        #expect(results[1] == .success(.accepted))
        #expect(results[2].value == .rejected("Choose a date from \(isoDay(0)) to \(isoDay(30))."))
        #expect(results[3].value == .rejected("Choose a date from \(isoDay(0)) to \(isoDay(30))."))
    }

    @Test("minDays and maxDays move the window")
    func customWindow() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let before = localToday().epochDay
        let window: [String: JSONValue] = ["minDays": 1, "maxDays": 14]
        let results = [await check(caller, isoDay(0), window), await check(caller, isoDay(1), window),
            await check(caller, isoDay(14), window), await check(caller, isoDay(15), window, locale: "es")]
        guard localToday().epochDay == before else { return }
        #expect(results[0].value == .rejected("Choose a date from \(isoDay(1)) to \(isoDay(14))."))
        #expect(results[1] == .success(.accepted))
        #expect(results[2] == .success(.accepted))
        #expect(results[3].value == .rejected("Elija una fecha del \(isoDay(1)) al \(isoDay(14))."))
    }

    @Test("malformed dates get the format message; bad options fail", arguments: [
        "2024-02-30", "2023-02-29", "24-01-01", "2024-1-01", "2024-13-01", "2024-01-00", "tomorrow", "2024/01/01",
    ])
    func malformed(value: String) async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        #expect(await check(caller, value).value == .rejected("Enter a date as YYYY-MM-DD."))
    }

    @Test("bad options are refused")
    func badOptions() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        for options: [String: JSONValue] in [["minDays": 5, "maxDays": 1], ["maxDays": 1.5], ["max": 3]] {
            #expect(await check(caller, isoDay(0), options).failureMessage == .some(nil), "\(options)")
        }
    }
}

/// What the shipped validators say of their rules before the person types
/// (`describeRule`), through the real loaded plugin, in every language the
/// engine has strings for.
@Suite("describeRule of the shipped validators")
struct RuleDescriptionTests {
    static let locales = ["en", "es", "fr", "de", "it", "pt-BR", "ja", "ko", "zh-Hans", "zh-Hant"]

    func describe(_ caller: PluginCaller, _ name: String, _ options: [String: JSONValue] = [:], locale: String = "en")
        async -> PluginCallResult<String?>
    {
        await caller.describeFieldRule(name, field: Samples.field(), context: Samples.context(locale: locale, options: options))
    }

    @Test("the date window in words, relative to today")
    func dateWindow() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        let cases: [([String: JSONValue], String?)] = [
            ([:], "Within the next 30 days"), (["maxDays": 7], "Within the next 7 days"),
            (["maxDays": 0], "Today"), (["minDays": 1, "maxDays": 1], "Tomorrow"), (["maxDays": 1], "Today or tomorrow"),
            (["minDays": 1, "maxDays": 14], "Between 1 and 14 days from today"),
            (["minDays": 5, "maxDays": 5], "Exactly 5 days from today"),
            (["minDays": -1, "maxDays": -1], "Yesterday"), (["minDays": -1, "maxDays": 0], "Yesterday or today"),
            (["minDays": -30, "maxDays": 0], "Within the past 30 days"), (["minDays": -3, "maxDays": -3], "Exactly 3 days ago"),
            (["minDays": -14, "maxDays": -7], "Between 7 and 14 days ago"),
            (["minDays": -3, "maxDays": 3], nil),
        ]
        for (options, expected) in cases {
            #expect(await describe(caller, "flowd.date-window", options) == .success(expected), "\(options)")
        }
        #expect(await describe(caller, "flowd.date-window", locale: "de") == .success("Innerhalb der nächsten 30 Tage"))
        #expect(await describe(caller, "flowd.date-window", ["minDays": 1, "maxDays": 14], locale: "ja")
            == .success("今日から 1〜14 日後"))
        // Options it cannot use fail, as they do for a check.
        #expect(await describe(caller, "flowd.date-window", ["minDays": 5, "maxDays": 1]).failureMessage == .some(nil))
        #expect(await describe(caller, "flowd.date-window", ["maxDyas": 5]).failureDetail?.contains("unknown option") == true)
    }

    @Test("host names and user names")
    func hostAndUser() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        #expect(await describe(caller, "flowd.hostname") == .success("A host name, such as printer-2.example.org"))
        #expect(await describe(caller, "flowd.hostname", ["requireDomain": true], locale: "fr")
            == .success("Un nom d’hôte complet avec son domaine, par exemple imprimante-2.example.org"))
        #expect(await describe(caller, "flowd.hostname", ["requireDomian": true]).failureDetail?.contains("unknown option") == true)
        #expect(await describe(caller, "flowd.username-available", locale: "de")
            == .success("Bis zu 32 Kleinbuchstaben, Ziffern, „-“ und „_“, noch nicht vergeben"))
        #expect(await describe(caller, "flowd.username-available", ["checkGroups": "no"]).failureMessage == .some(nil))
    }

    @Test("every description in each of the ten languages, each its own", arguments: locales)
    func everyLanguage(locale: String) async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        var texts: [String] = []
        for (name, options) in [("flowd.date-window", [:]), ("flowd.date-window", ["minDays": 2, "maxDays": 9]),
                                ("flowd.hostname", [:]), ("flowd.hostname", ["requireDomain": true]),
                                ("flowd.username-available", [:])] as [(String, [String: JSONValue])] {
            let text = try #require(await describe(caller, name, options, locale: locale).value ?? nil, "\(name) \(locale)")
            #expect(!text.contains("{") && !text.isEmpty, "\(name) \(locale): \(text)")
            texts.append(text)
        }
        if locale != "en" {
            let english = try #require(await describe(caller, "flowd.hostname").value ?? nil)
            #expect(texts[2] != english, "\(locale) falls back to English")
        }
        // The messages come in the language too: a malformed host name.
        let message = await caller.validateField("flowd.hostname", value: .text("-x"), field: Samples.field(),
            context: Samples.context(locale: locale))
        #expect(locale == "en" || message.value?.rejection?.hasPrefix("Use letters") == false, "\(locale)")
    }

    @Test("regions and scripts find their language: zh-TW is Traditional, pt-PT Brazilian, sv English")
    func fallbacks() async throws {
        let temp = try TemporaryDirectory()
        let (_, caller) = try Shipped.load(in: temp)
        #expect(await describe(caller, "flowd.date-window", locale: "zh-TW") == .success("今天起 30 天內"))
        #expect(await describe(caller, "flowd.date-window", locale: "zh") == .success("今天起 30 天内"))
        #expect(await describe(caller, "flowd.date-window", locale: "pt-PT") == .success("Nos próximos 30 dias"))
        #expect(await describe(caller, "flowd.date-window", locale: "de_AT.UTF-8") == .success("Innerhalb der nächsten 30 Tage"))
        #expect(await describe(caller, "flowd.date-window", locale: "sv") == .success("Within the next 30 days"))
    }
}
