/// A message in several languages, picked by the session's locale with the
/// engine's fallback: `pt-BR` → `pt` → another `pt-*` → `en` → any; Chinese
/// without a script takes it from the region (`zh-TW` → `zh-Hant`, other
/// `zh` → `zh-Hans`).
package struct Localized: Sendable {
    package let texts: [String: String]

    package init(_ texts: [String: String]) {
        self.texts = texts
    }

    /// The text for `locale` (a BCP 47 tag such as `de`, `pt-BR`, `zh-Hans`).
    package func callAsFunction(_ locale: String) -> String {
        var chain = Localized.fallbacks(locale)
        let language = Localized.language(locale)
        if language == "zh", !chain.contains(where: { $0.hasPrefix("zh-Han") }) {
            let region = chain.first?.split(separator: "-").dropFirst().map { $0.uppercased() } ?? []
            let traditional = region.contains("TW") || region.contains("HK") || region.contains("MO")
            chain.insert(traditional ? "zh-Hant" : "zh-Hans", at: max(0, chain.count - 2))
        }
        for candidate in chain.dropLast() {
            if let t = texts[candidate] { return t }
        }
        // Another variety of the same language reads better than English.
        if let other = texts.keys.sorted().first(where: { $0.hasPrefix(language + "-") }), let t = texts[other] {
            return t
        }
        if let t = texts["en"] { return t }
        return texts.sorted { $0.key < $1.key }.first?.value ?? ""
    }

    /// `pt-BR` → [`pt-BR`, `pt`, `en`]; `de_DE.UTF-8` is read as `de-DE`.
    package static func fallbacks(_ locale: String) -> [String] {
        let cleaned = String(locale.split(separator: ".").first ?? "").replacingUnderscores()
        var result: [String] = []
        var parts = cleaned.split(separator: "-").map(String.init)
        while !parts.isEmpty {
            result.append(parts.joined(separator: "-"))
            parts.removeLast()
        }
        result.append("en")
        return result
    }

    /// The language part of a locale, lowercased: `pt-BR` → `pt`.
    package static func language(_ locale: String) -> String {
        String(Localized.fallbacks(locale).first?.split(separator: "-").first ?? "en").lowercased()
    }

    /// Fills `{name}` placeholders.
    package static func fill(_ template: String, _ values: [String: String]) -> String {
        var s = template
        for (k, v) in values { s = s.replacingEvery("{\(k)}", with: v) }
        return s
    }
}

extension String {
    fileprivate func replacingUnderscores() -> String {
        String(map { $0 == "_" ? "-" : $0 })
    }

    /// Every occurrence of `target` replaced by `replacement` (no Foundation).
    fileprivate func replacingEvery(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var result = ""
        var rest = self[...]
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
