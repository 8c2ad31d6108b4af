import FlowEngine
import Testing

@testable import FlowDesktop

@Suite("app strings")
struct AppStringsTests {
    @Test("every locale file parses and has every key, with the English placeholders")
    func complete() {
        #expect(AppStrings.catalog.loadProblems.isEmpty, "\(AppStrings.catalog.loadProblems)")
        let english = AppStrings.catalog.tables["en"] ?? [:]
        for locale in AppStrings.locales {
            let table = AppStrings.catalog.tables[locale] ?? [:]
            for key in AppString.allCases {
                guard let text = table[key.rawValue] else {
                    Issue.record("\(locale).json has no \(key.rawValue)")
                    continue
                }
                #expect(!text.isEmpty, "\(locale).json: \(key.rawValue) is empty")
                #expect(
                    Strings.placeholders(in: text).sorted() == Strings.placeholders(in: english[key.rawValue] ?? "").sorted(),
                    "\(locale).json: \(key.rawValue) has other placeholders than English")
            }
            let unknown = Set(table.keys).subtracting(AppString.allCases.map(\.rawValue))
            #expect(unknown.isEmpty, "\(locale).json has keys no code uses: \(unknown.sorted())")
        }
    }

    @Test("a locale is served by its translation, a relative, or English")
    func fallback() {
        #expect(AppStrings(locale: "de")(.resume) == "Fortsetzen")
        #expect(AppStrings(locale: "de_AT.UTF-8")(.resume) == "Fortsetzen")
        #expect(AppStrings(locale: "pt-PT").catalogLocale == "pt-BR")
        #expect(AppStrings(locale: "zh_TW").catalogLocale == "zh-Hant")
        #expect(AppStrings(locale: "sv")(.resume) == "Resume")
        #expect(AppStrings(locale: "ja")(.resumeSession, ["title": "予約"]) == "予約を再開")
    }
}

@Suite("locale choice")
struct LocaleChoiceTests {
    @Test("--locale, then LC_ALL, LC_MESSAGES and LANG, then English")
    func precedence() {
        let env: [String: String] = ["LC_ALL": "", "LC_MESSAGES": "fr_FR.UTF-8", "LANG": "de_DE.UTF-8"]
        #expect(LocaleChoice.resolve(option: "ja", environment: { env[$0] }) == "ja")
        #expect(LocaleChoice.resolve(option: nil, environment: { env[$0] }) == "fr-FR")
        #expect(LocaleChoice.resolve(option: nil, environment: { ["LC_ALL": "it_IT", "LANG": "de"][$0] }) == "it-IT")
        #expect(LocaleChoice.resolve(option: nil, environment: { ["LANG": "C.UTF-8"][$0] }) == "en")
        #expect(LocaleChoice.resolve(option: nil, environment: { _ in nil }) == "en")
    }

    @Test("right-to-left languages mirror the window")
    func direction() {
        #expect(LocaleChoice.isRightToLeft("ar"))
        #expect(LocaleChoice.isRightToLeft("he_IL.UTF-8"))
        #expect(LocaleChoice.isRightToLeft("fa-IR"))
        #expect(!LocaleChoice.isRightToLeft("de"))
        #expect(!LocaleChoice.isRightToLeft("en"))
    }
}

@Suite("relative time")
struct RelativeTimeTests {
    let now: UInt64 = 1_750_000_000_000_000
    let minute: UInt64 = 60_000_000

    @Test("just now, minutes, hours and days, singular and plural")
    func english() {
        let en = AppStrings(locale: "en")
        #expect(RelativeTime.changed(updatedAt: now - 59_000_000, now: now, strings: en) == "changed just now")
        #expect(RelativeTime.changed(updatedAt: now - minute, now: now, strings: en) == "changed 1 minute ago")
        #expect(RelativeTime.changed(updatedAt: now - 5 * minute, now: now, strings: en) == "changed 5 minutes ago")
        #expect(RelativeTime.changed(updatedAt: now - 60 * minute, now: now, strings: en) == "changed 1 hour ago")
        #expect(RelativeTime.changed(updatedAt: now - 25 * 60 * minute, now: now, strings: en) == "changed 1 day ago")
        #expect(RelativeTime.changed(updatedAt: now - 72 * 60 * minute, now: now, strings: en) == "changed 3 days ago")
        #expect(RelativeTime.changed(updatedAt: now + minute, now: now, strings: en) == "changed just now", "a clock that went back")
    }

    @Test("an unfinished session's line, in English and German")
    func sessionLine() {
        let session = SessionEntry(
            id: "x", flowTitle: "Book a consultation", progressLabel: "Step 3 of 4", stepTitle: "Contact details",
            updatedAt: now - 5 * minute)
        #expect(RelativeTime.sessionLine(session, now: now, strings: AppStrings(locale: "en"))
            == "Step 3 of 4 · Contact details, changed 5 minutes ago")
        var german = session
        german.progressLabel = "Schritt 3 von 4"
        german.stepTitle = "Kontaktdaten"
        #expect(RelativeTime.sessionLine(german, now: now, strings: AppStrings(locale: "de"))
            == "Schritt 3 von 4 · Kontaktdaten, vor 5 Minuten geändert")
        var bare = session
        bare.progressLabel = ""
        bare.stepTitle = ""
        #expect(RelativeTime.sessionLine(bare, now: now, strings: AppStrings(locale: "en")) == "changed 5 minutes ago")
    }
}
