// The plugin's unit tests: its capabilities called directly, with contexts
// made by FlowKitTesting as flowd makes them. No flowd needed.
import FlowKit
import FlowKitTesting
import Testing

@testable import MyPlugin

@Suite struct PostcodeTests {
    let field = FieldInfo.testing("postcode", label: "Postcode")

    @Test func acceptsFiveDigits() async throws {
        let validator = PostcodeValidator()
        #expect(try await validator.validate(.text("10115"), field: field, context: .testing()) == nil)
        #expect(try await validator.validate(.text(" 80331 "), field: field, context: .testing()) == nil)
    }

    @Test func refusesAnythingElseInTheSessionsLanguage() async throws {
        let validator = PostcodeValidator()
        #expect(try await validator.validate(.text("1011"), field: field, context: .testing())
            == "Postcode must be five digits, such as 10115.")
        #expect(try await validator.validate(.text("ABCDE"), field: field, context: .testing(locale: "de-AT"))
            == "Postcode muss aus fünf Ziffern bestehen, z. B. 10115.")
    }

    @Test func describesItsRule() async throws {
        let rule = try await PostcodeValidator().describeRule(field: field, context: .testingRuleDescription(locale: "de"))
        #expect(rule == "Fünf Ziffern, z. B. 10115")
    }

    @Test("every language has every message, and any locale gets one", arguments: TestValues.locales)
    func everyLocaleGetsAMessage(locale: String) async throws {
        let message = try await PostcodeValidator().validate(.text("x"), field: field, context: .testing(locale: locale))
        #expect(message?.isEmpty == false)
        for (tag, table) in Messages.tables {
            #expect(Set(table.keys) == Set(MessageKey.allCases), "\(tag) lacks a message")
        }
    }
}
