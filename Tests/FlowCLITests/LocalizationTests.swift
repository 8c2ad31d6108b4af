@testable import FlowCLI
import FlowEngine
import Testing

/// flowctl's own words (issue 14, item 4): every one in flowd's ten
/// locales, with the same placeholders as the English one.
@Suite("flowctl's own words")
struct LocalizationTests {
    @Test("every key in every locale, placeholders matching English")
    func complete() throws {
        let catalog = FlowctlText.catalog
        #expect(catalog.loadProblems.isEmpty, "\(catalog.loadProblems)")
        let english = try #require(catalog.tables["en"])
        #expect(Set(english.keys) == Set(FlowctlText.allCases.map(\.rawValue)), "en.json and FlowctlText name the same keys")
        for locale in Strings.locales {
            let table = try #require(catalog.tables[locale], "\(locale).json")
            #expect(Set(table.keys) == Set(english.keys), "\(locale): \(Set(english.keys).symmetricDifference(table.keys).sorted())")
            for (key, text) in table {
                let wanted = Strings.placeholders(in: english[key] ?? "").sorted()
                #expect(Strings.placeholders(in: text).sorted() == wanted, "\(locale).\(key): \(text)")
                if locale != "en", ["keyEnter", "columnID", "changedMinuteOne", "errorDetail", "labelValue", "formatDate"].allSatisfy({ $0 != key }) {
                    // Only words that are the same in both languages may stay English.
                    #expect(text != english[key] || text.count < 8, "\(locale).\(key) is not translated: \(text)")
                }
            }
        }
    }

    @Test("language names: flowd's ten by name, in the person's language; others by tag")
    func languageNames() {
        #expect(FlowctlText.languageName("de", in: "en") == "German")
        #expect(FlowctlText.languageName("de-AT", in: "fr") == "allemand")
        #expect(FlowctlText.languageName("ja", in: "ja") == "日本語")
        #expect(FlowctlText.languageName("zh-TW", in: "en") == "Traditional Chinese")
        #expect(FlowctlText.languageName("ar", in: "de") == "ar")
        #expect(FlowctlText.languageName("sv", in: "en") == "sv")
    }
}
