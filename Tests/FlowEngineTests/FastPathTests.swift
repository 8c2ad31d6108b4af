import Testing

@testable import FlowEngine

/// The shortcuts taken for speed (docs/performance.md) must give exactly
/// the answers of the general code they bypass. No timing here.
@Suite("Fast paths agree with the general code")
struct FastPathTests {
    static let requests = [
        "en", "EN", "en-US", "en-us", "de", "de-DE", "de_DE", "de_DE.UTF-8@euro", "pt", "pt-BR", "pt-br", "pt-PT", "pt_BR",
        "zh", "ZH", "zh-TW", "zh-HK", "zh-CN", "zh-Hant", "zh-hans", "zh-Hant-TW", "ja", "ko", "fr-CA", "C", "POSIX", "",
        "x", "es-419", "sr-Latn", "en-", "-", "1", "K",
    ]
    static let availableLists: [[String]] = [
        ["en"], ["de", "en"], ["en", "de"], ["EN", "en"], ["en", "EN"], ["pt-BR", "pt", "en"], ["pt", "pt-BR"],
        ["pt-PT", "en"], ["zh-Hans", "zh-Hant", "zh"], ["zh", "zh-Hans"], ["zh-Hant"], ["fr", "es"], ["en-GB", "en-US"],
        ["De-de", "de"], ["es-419", "es"], ["sr-Latn", "sr"], Strings.locales, ["\u{212A}o", "ko"], ["ko", "\u{212A}o"],
    ]

    @Test("bestMatch equals the whole chain for every request and list")
    func bestMatchEqualsTheChain() {
        for available in Self.availableLists {
            for requested in Self.requests {
                let fast = LocaleFallback.bestMatch(for: requested, in: available)
                let chain = LocaleFallback.chainMatch(for: requested, in: available)
                #expect(fast == chain, "\(requested) in \(available): \(String(describing: fast)) vs \(chain)")
            }
        }
        #expect(LocaleFallback.bestMatch(for: "en", in: []) == nil)
    }

    @Test("the shortcut answers the plain cases and declines the others")
    func exactMatchScope() {
        #expect(LocaleFallback.exactMatch(for: "en", in: ["de", "en"]) == 1)
        #expect(LocaleFallback.exactMatch(for: "PT-br", in: ["pt", "pt-BR"]) == 1)
        #expect(LocaleFallback.exactMatch(for: "pt-PT", in: ["pt", "pt-BR"]) == nil)
        #expect(LocaleFallback.exactMatch(for: "zh", in: ["zh", "zh-Hans"]) == nil)
        #expect(LocaleFallback.exactMatch(for: "de_DE", in: ["de-DE"]) == nil)
        #expect(LocaleFallback.exactMatch(for: "C", in: ["C", "en"]) == nil)
        #expect(LocaleFallback.exactMatch(for: "ko", in: ["\u{212A}o", "ko"]) == nil)
    }
}
