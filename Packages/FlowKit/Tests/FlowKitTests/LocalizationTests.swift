import FlowKit
import FlowKitTesting
import Testing

/// The one locale chain (flowd's engine uses it too) and messages compiled
/// into a plugin.
@Suite struct LocalizationTests {
    static let greeting = LocalizedMessage([
        "en": "Hello, {name}.",
        "de": "Hallo, {name}.",
        "pt-BR": "Olá, {name}.",
        "zh-Hant": "{name}，你好。",
        "zh-Hans": "{name}，你好。(简)",
    ])

    @Test("the fallback chain: de_CH → de → en; another variety of the language before English")
    func fallbackChain() {
        #expect(LocaleChain.candidates(for: "de_CH.UTF-8") == ["de-CH", "de"])
        #expect(Self.greeting("de_CH", ["name": "Ada"]) == "Hallo, Ada.")
        #expect(Self.greeting("de-AT", ["name": "Ada"]) == "Hallo, Ada.")
        #expect(Self.greeting("pt-PT", ["name": "Ada"]) == "Olá, Ada.")
        #expect(Self.greeting("sv", ["name": "Ada"]) == "Hello, Ada.")
        #expect(Self.greeting("C", ["name": "Ada"]) == "Hello, Ada.")
        #expect(Self.greeting("zh-TW", ["name": "Ada"]) == "Ada，你好。")
        #expect(Self.greeting("zh", ["name": "Ada"]) == "Ada，你好。(简)")
        #expect(LocalizedMessage(["fr": "Bonjour", "it": "Ciao"])("sv") == "Bonjour", "no English: the first given")
        #expect(LocalizedMessage([:])("en") == "")
        #expect(Self.greeting.locales == ["en", "de", "pt-BR", "zh-Hant", "zh-Hans"])
    }

    @Test("format arguments: each {name} once, in one pass; unknown ones stay")
    func arguments() {
        #expect(LocalizedMessage.fill("{a} and {b}", ["a": "{b}", "b": "2"]) == "{b} and 2")
        #expect(LocalizedMessage.fill("{missing} {", ["a": "1"]) == "{missing} {")
        #expect(LocalizedMessage.fill("{a}{a}", ["a": "x"]) == "xx")
        #expect(Self.greeting("en") == "Hello, {name}.")
    }

    @Test("well-formed tags and requests")
    func tags() {
        #expect(LocaleChain.isWellFormed("zh-Hant-TW") && LocaleChain.isWellFormed("de_CH"))
        #expect(!LocaleChain.isWellFormed("d") && !LocaleChain.isWellFormed("de--CH"))
        #expect(LocaleChain.requested(".UTF-8") == nil)
        #expect(LocaleChain.requested("de_CH.UTF-8@euro") == "de-CH")
        #expect(LocaleChain.bestMatch(for: "de-CH", in: ["en", "de"]) == 1)
        #expect(LocaleChain.bestMatch(for: "de-CH", in: [String]()) == nil)
    }

    @Test("every language FlowKitTesting tries gets a message", arguments: TestValues.locales)
    func everyLocale(locale: String) {
        #expect(!Self.greeting(locale).isEmpty)
    }
}

/// A validator may hand back the value cleaned up; one written before SDK
/// 1.1 keeps the value as typed.
@Suite struct FieldReviewTests {
    struct Upper: FieldValidator {
        func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? { nil }
        func review(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> FieldReview {
            .accepted(normalizedTo: .text(value.textValue?.uppercased() ?? ""))
        }
    }

    struct Odd: FieldValidator {
        func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
            value.textValue == "odd" ? "odd" : nil
        }
    }

    @Test func reviews() async throws {
        let field = FieldInfo.testing()
        let upper: any FieldValidator = Upper()
        let odd: any FieldValidator = Odd()
        #expect(try await upper.review(.text("de1"), field: field, context: .testing()) == .accepted(normalizedTo: .text("DE1")))
        #expect(try await odd.review(.text("odd"), field: field, context: .testing()) == FieldReview(.rejected("odd")))
        #expect(try await odd.review(.text("even"), field: field, context: .testing()).normalizedValue == nil)
    }
}
