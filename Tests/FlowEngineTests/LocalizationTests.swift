import FlowKit
import Foundation
import Testing

@testable import FlowEngine

@Suite struct LocalizationTests {
    let text = LocalizedText(translations: [
        .init(locale: "de", text: "Tag"), .init(locale: "pt", text: "Dia (pt)"), .init(locale: "en", text: "Day"),
        .init(locale: "zh-Hant", text: "日期（繁）"), .init(locale: "zh-Hans", text: "日期（简）"),
    ])

    @Test func fallsBackAlongTheChain() {
        #expect(text.resolve("de") == "Tag")
        #expect(text.resolve("de-AT") == "Tag")
        #expect(text.resolve("pt-BR") == "Dia (pt)")
        #expect(text.resolve("fr") == "Day")
        #expect(text.resolve("DE") == "Tag")
        #expect(text.resolve("de_DE.UTF-8") == "Tag")
        #expect(text.resolve("C") == "Day")
        #expect(text.resolve("zh-TW") == "日期（繁）")
        #expect(text.resolve("zh-HK") == "日期（繁）")
        #expect(text.resolve("zh-CN") == "日期（简）")
        #expect(text.resolve("zh") == "日期（简）")
    }

    @Test func fallsBackToTheFirstWithoutEnglish() {
        let t = LocalizedText(translations: [.init(locale: "fr", text: "Jour"), .init(locale: "de", text: "Tag")])
        #expect(t.resolve("ja") == "Jour")
        #expect(t.resolve("de") == "Tag")
        #expect(LocalizedText("plain").resolve("ja") == "plain")
    }

    @Test func prefersAnotherRegionOfTheSameLanguageOverEnglish() {
        let t = LocalizedText(translations: [.init(locale: "en", text: "Day"), .init(locale: "pt-BR", text: "Dia")])
        #expect(t.resolve("pt-PT") == "Dia")
        #expect(t.resolve("pt") == "Dia")
        #expect(t.resolve("es") == "Day")
        let english = LocalizedText(translations: [.init(locale: "fr", text: "Jour"), .init(locale: "en-GB", text: "Day")])
        #expect(english.resolve("sv") == "Day")
    }

    @Test func localizedTextCodesAsAStringOrAMap() throws {
        #expect(try jsonText(LocalizedText("Hi")) == "\"Hi\"")
        let map = LocalizedText(translations: [.init(locale: "de", text: "Hallo")])
        #expect(try jsonText(map) == #"{"de":"Hallo"}"#)
        let back = try JSONDecoder().decode(LocalizedText.self, from: Data(#"{"de":"Hallo"}"#.utf8))
        #expect(back.resolve("de") == "Hallo")
        #expect(try JSONDecoder().decode(LocalizedText.self, from: Data("\"x\"".utf8)) == LocalizedText("x"))
        #expect(try JSONDecoder().decode(CivilDate.self, from: Data("\"2024-02-29\"".utf8)).day == 29)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(CivilDate.self, from: Data("\"2023-02-29\"".utf8)) }
    }

    @Test func chainCandidates() {
        #expect(LocaleFallback.candidates(for: "pt-BR") == ["pt-BR", "pt"])
        #expect(LocaleFallback.candidates(for: "zh-Hant-TW") == ["zh-Hant-TW", "zh-Hant", "zh"])
        #expect(LocaleFallback.candidates(for: "zh-TW") == ["zh-TW", "zh-Hant", "zh"])
        #expect(LocaleFallback.normalize("pt_BR.UTF-8@euro") == "pt-BR")
        #expect(LocaleFallback.isWellFormed("pt-BR"))
        #expect(LocaleFallback.isWellFormed("zh_Hant"))
        #expect(!LocaleFallback.isWellFormed("e"))
        #expect(!LocaleFallback.isWellFormed("english"))
        #expect(!LocaleFallback.isWellFormed("en--US"))
        #expect(!LocaleFallback.isWellFormed("en-US-" + String(repeating: "x", count: 40)))
    }

    @Test func catalogLoadsEveryLocaleWithEveryKeyAndTheSamePlaceholders() throws {
        let s = Strings.builtin
        #expect(s.loadProblems.isEmpty, "\(s.loadProblems)")
        #expect(Set(s.tables.keys) == Set(Strings.locales))
        let english = try #require(s.tables["en"])
        let keys = Set(BuiltinString.allCases.map(\.rawValue))
        #expect(Set(english.keys) == keys, "keys in en.json and BuiltinString differ")
        for locale in Strings.locales {
            let table = try #require(s.tables[locale])
            #expect(Set(table.keys) == keys, "\(locale) has keys \(Set(table.keys).symmetricDifference(keys))")
            for key in BuiltinString.allCases {
                let en = Strings.placeholders(in: english[key.rawValue] ?? "")
                let translated = Strings.placeholders(in: table[key.rawValue] ?? "")
                #expect(Set(en) == Set(translated), "\(locale).\(key.rawValue): \(translated) vs \(en)")
                #expect(!(table[key.rawValue] ?? "").isEmpty, "\(locale).\(key.rawValue) is empty")
            }
        }
    }

    /// Review's Edit link cites the step's title as the author wrote it
    /// (proper nouns, German nouns, acronyms keep their case), between the
    /// language's quotation marks, so "Edit The problem" cannot happen.
    @Test func editLinksQuoteTheStepTitleInEveryLocale() {
        let openers: Set<Character> = ["“", "„", "«", "「", "‘"]
        let closers: Set<Character> = ["”", "“", "»", "」", "’"]
        for locale in Strings.locales {
            let text = Strings.builtin.text(.edit, locale: locale, ["step": "The problem"])
            guard let range = text.range(of: "The problem") else {
                Issue.record("\(locale): \(text) does not hold the title as written")
                continue
            }
            let before = text[..<range.lowerBound].last { $0 != " " && $0 != "\u{00A0}" }
            let after = text[range.upperBound...].first { $0 != " " && $0 != "\u{00A0}" }
            #expect(before.map(openers.contains) == true && after.map(closers.contains) == true, "\(locale): \(text)")
        }
    }

    @Test func translationsDifferFromEnglishWhereTheyShould() throws {
        for locale in Strings.locales where locale != "en" {
            #expect(Strings.builtin.text(.continue, locale: locale) != "Continue", "\(locale)")
            #expect(Strings.builtin.text(.submitFailed, locale: locale) != "Couldn't send this. Try again.")
        }
    }

    @Test func builtinTextsAndFormatting() {
        let s = Strings.builtin
        #expect(s.text(.continue, locale: "de") == "Weiter")
        #expect(s.text(.stepCounter, locale: "fr", ["n": "2", "m": "4"]) == "Étape 2 sur 4")
        #expect(s.text(.stepCounter, locale: "ko", ["n": "2", "m": "4"]) == "4단계 중 2단계")
        #expect(s.text(.edit, locale: "en", ["step": "Day and time"]) == "Edit “Day and time”")
        #expect(s.text(.edit, locale: "de", ["step": "Tag"]) == "„Tag“ bearbeiten")
        #expect(s.text(.submitFailed, locale: "en") == "Couldn't send this. Try again.")
        #expect(s.text(.back, locale: "pt-PT") == "Voltar")
        #expect(s.text(.back, locale: "zh-TW") == "返回")
        #expect(s.text(.submit, locale: "zh-TW") == "送出")
        #expect(s.text(.submit, locale: "zh-CN") == "提交")
        #expect(s.text(.back, locale: "sv") == "Back")
        #expect(s.catalogLocale(for: "es-MX") == "es")
        #expect(Strings.fill("{a} and {b} and {c}", ["a": "1", "b": "2"]) == "1 and 2 and {c}")
        #expect(Strings.fill("unclosed {a", ["a": "1"]) == "unclosed {a")
        #expect(Strings.placeholders(in: "Step {n} of {m}") == ["n", "m"])
    }
}
