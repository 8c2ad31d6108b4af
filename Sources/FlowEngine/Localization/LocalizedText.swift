/// A human string in a flow file: either one plain string, or translations
/// keyed by locale, such as `{"en": "Day and time", "de": "Tag und Uhrzeit"}`.
///
/// Translations keep their document order, because the last step of the
/// fallback chain is "the first one given".
package struct LocalizedText: Sendable, Hashable {
    /// One translation.
    package struct Translation: Sendable, Hashable, Codable {
        /// The locale tag as written in the file, for example `pt-BR`.
        package let locale: String
        /// The text in that locale.
        package let text: String

        /// A translation of `text` into `locale`.
        package init(locale: String, text: String) {
            self.locale = locale
            self.text = text
        }
    }

    /// The translations in document order; empty for a plain string.
    package let translations: [Translation]
    /// The plain string, when the file gave one instead of a map.
    package let plain: String?

    /// A plain string, the same in every locale.
    package init(_ plain: String) {
        self.plain = plain
        self.translations = []
    }

    /// Translations in order of preference for the "first one" fallback.
    /// An empty list behaves as the empty string.
    package init(translations: [Translation]) {
        self.plain = nil
        self.translations = translations
    }

    /// The text for `locale`, falling back `pt-BR → pt → (another pt-*) → en →
    /// the first translation` (see ``LocaleFallback``).
    package func resolve(_ locale: String) -> String {
        if let plain { return plain }
        guard let i = LocaleFallback.bestMatch(for: locale, in: translations.lazy.map(\.locale)) else { return "" }
        return translations[i].text
    }

    /// The locales this text is translated into (empty for a plain string).
    package var locales: [String] { translations.map(\.locale) }
}

extension LocalizedText: ExpressibleByStringLiteral {
    /// A plain string (for tests and code that builds texts).
    package init(stringLiteral value: String) { self.init(value) }
}

/// A plain string encodes as a JSON string, translations as an object.
extension LocalizedText: Codable {
    package init(from decoder: any Decoder) throws {
        if let c = try? decoder.singleValueContainer(), let s = try? c.decode(String.self) {
            self.init(s)
            return
        }
        let keyed = try decoder.container(keyedBy: AnyCodingKey.self)
        var list: [Translation] = []
        for key in keyed.allKeys {
            list.append(Translation(locale: key.stringValue, text: try keyed.decode(String.self, forKey: key)))
        }
        self.init(translations: list)
    }

    package func encode(to encoder: any Encoder) throws {
        if let plain {
            var c = encoder.singleValueContainer()
            try c.encode(plain)
            return
        }
        var c = encoder.container(keyedBy: AnyCodingKey.self)
        for t in translations { try c.encode(t.text, forKey: AnyCodingKey(stringValue: t.locale)) }
    }
}
