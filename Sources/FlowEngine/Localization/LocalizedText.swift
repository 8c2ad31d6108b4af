/// A human string in a flow file: either one plain string, or translations
/// keyed by locale, such as `{"en": "Day and time", "de": "Tag und Uhrzeit"}`.
///
/// Translations keep their document order, because the last step of the
/// fallback chain is "the first one given".
public struct LocalizedText: Sendable, Hashable {
    /// One translation.
    public struct Translation: Sendable, Hashable, Codable {
        /// The locale tag as written in the file, for example `pt-BR`.
        public let locale: String
        /// The text in that locale.
        public let text: String

        /// A translation of `text` into `locale`.
        public init(locale: String, text: String) {
            self.locale = locale
            self.text = text
        }
    }

    /// The translations in document order; empty for a plain string.
    public let translations: [Translation]
    /// The plain string, when the file gave one instead of a map.
    public let plain: String?

    /// A plain string, the same in every locale.
    public init(_ plain: String) {
        self.plain = plain
        self.translations = []
    }

    /// Translations in order of preference for the "first one" fallback.
    /// An empty list behaves as the empty string.
    public init(translations: [Translation]) {
        self.plain = nil
        self.translations = translations
    }

    /// The text for `locale`, falling back `pt-BR → pt → (another pt-*) → en →
    /// the first translation` (see ``LocaleFallback``).
    public func resolve(_ locale: String) -> String {
        if let plain { return plain }
        guard let i = LocaleFallback.bestMatch(for: locale, in: translations.map(\.locale)) else { return "" }
        return translations[i].text
    }

    /// The locales this text is translated into (empty for a plain string).
    public var locales: [String] { translations.map(\.locale) }
}

extension LocalizedText: ExpressibleByStringLiteral {
    /// A plain string (for tests and code that builds texts).
    public init(stringLiteral value: String) { self.init(value) }
}

/// A plain string encodes as a JSON string, translations as an object.
extension LocalizedText: Codable {
    public init(from decoder: any Decoder) throws {
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

    public func encode(to encoder: any Encoder) throws {
        if let plain {
            var c = encoder.singleValueContainer()
            try c.encode(plain)
            return
        }
        var c = encoder.container(keyedBy: AnyCodingKey.self)
        for t in translations { try c.encode(t.text, forKey: AnyCodingKey(stringValue: t.locale)) }
    }
}
