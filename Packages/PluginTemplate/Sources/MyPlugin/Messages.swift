// The plugin's messages, compiled into it: nothing to find at run time.
// Add a language by adding a table; add a message by adding a key to every
// table (the tests check that each language has every key).

/// The messages a person sees, by key.
enum MessageKey: String, CaseIterable, Sendable {
    case postcodeFormat
    case postcodeRule
}

enum Messages {
    /// Language tag → key → text. `%@` is replaced by the arguments in order.
    static let tables: [String: [MessageKey: String]] = [
        "en": [
            .postcodeFormat: "%@ must be five digits, such as 10115.",
            .postcodeRule: "Five digits, such as 10115",
        ],
        "de": [
            .postcodeFormat: "%@ muss aus fünf Ziffern bestehen, z. B. 10115.",
            .postcodeRule: "Fünf Ziffern, z. B. 10115",
        ],
    ]

    /// The text of `key` in `locale`, by the chain flowd uses: the whole tag
    /// (`pt-BR`), then its language (`pt`), then English.
    static func text(_ key: MessageKey, locale: String, _ arguments: String...) -> String {
        var template = ""
        for tag in chain(locale) {
            if let text = tables[tag]?[key] {
                template = text
                break
            }
        }
        let pieces = template.split(separator: "%@", omittingEmptySubsequences: false)
        var result = String(pieces.first ?? "")
        for (index, piece) in pieces.dropFirst().enumerated() {
            result += (index < arguments.count ? arguments[index] : "") + piece
        }
        return result
    }

    /// `pt-BR` → `pt-BR`, `pt`, `en`.
    static func chain(_ locale: String) -> [String] {
        let parts = locale.split(separator: "-").map(String.init)
        var tags: [String] = []
        for count in stride(from: parts.count, to: 0, by: -1) {
            tags.append(parts[..<count].joined(separator: "-"))
        }
        return tags + ["en"]
    }
}
