// The plugin's unit tests: its capabilities called directly, with contexts
// made by FlowKitTesting as flowd makes them. No flowd needed.
import FlowKit
import FlowKitTesting
import Testing

@testable import MyPlugin

@Suite struct PostcodeTests {
    let field = FieldInfo.testing("postcode", label: "Postcode")

    @Test func acceptsFiveDigitsAndStoresThemWithoutSpaces() async throws {
        let validator = PostcodeValidator()
        #expect(try await validator.review(.text("10115"), field: field, context: .testing()) == .accepted(normalizedTo: .text("10115")))
        let log = TestLog()
        #expect(try await validator.review(.text(" 803 31 "), field: field, context: .testing(log: log))
            == .accepted(normalizedTo: .text("80331")))
        #expect(log.messages(at: .debug) == ["removed spaces from a postcode"])
        #expect(log.entries.first?.fields["removed"] == .integer(3))
        #expect(try await validator.validate(.text(" 80331 "), field: field, context: .testing()) == nil)
    }

    @Test func refusesAnythingElseInTheSessionsLanguage() async throws {
        let validator = PostcodeValidator()
        #expect(try await validator.validate(.text("1011"), field: field, context: .testing())
            == "Postcode must be five digits, such as 10115.")
        #expect(try await validator.validate(.text("ABCDE"), field: field, context: .testing(locale: "de_CH"))
            == "Postcode muss aus fünf Ziffern bestehen, z. B. 10115.")
        #expect(try await validator.validate(.text("101 15"), field: field, context: .testing(options: ["allowSpaces": false]))
            == "Postcode must be five digits, such as 10115.")
    }

    @Test func declaresItsOptions() {
        let capability = Capability.fieldValidator("myplugin.postcode", PostcodeValidator())
        #expect(capability.declaredOptions?.map(\.name) == ["allowSpaces"])
        #expect(PluginOption.problems(in: ["allowSpace": true], declared: PostcodeValidator.declaredOptions)
            == [.unknown(key: "allowSpace")])
    }

    @Test func describesItsRule() async throws {
        let rule = try await PostcodeValidator().describeRule(field: field, context: .testingRuleDescription(locale: "de"))
        #expect(rule == "Fünf Ziffern, z. B. 10115")
    }

    @Test("every message has every language, and any locale gets one", arguments: TestValues.locales)
    func everyLocaleGetsAMessage(locale: String) async throws {
        let message = try await PostcodeValidator().validate(.text("x"), field: field, context: .testing(locale: locale))
        #expect(message?.isEmpty == false)
        for message in Messages.all {
            #expect(Set(message.locales) == Messages.locales, "\(message.locales) lacks a language")
        }
    }
}
