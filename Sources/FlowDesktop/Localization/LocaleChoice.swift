import FlowClient
import FlowEngine

/// The locale the window speaks and new sessions ask for: `--locale`, else
/// the environment as flowctl reads it (``RequestedLocale``), else `en`.
package enum LocaleChoice {
    /// The chosen tag, normalized (`de_DE.UTF-8` → `de-DE`; `C` → `en`).
    package static func resolve(option: String?, environment: (String) -> String?) -> String {
        if let option, !option.isEmpty { return LocaleFallback.normalize(option) }
        return RequestedLocale.fromEnvironment(environment) ?? "en"
    }

    /// Languages written right to left, by their primary subtag.
    private static let rightToLeft: Set<String> = ["ar", "arc", "ckb", "dv", "fa", "he", "ks", "ps", "sd", "ug", "ur", "yi"]

    /// True when `tag`'s language is written right to left: the window is
    /// mirrored even when the app's strings fall back to English.
    package static func isRightToLeft(_ tag: String) -> Bool {
        let language = LocaleFallback.normalize(tag).split(separator: "-").first.map { $0.lowercased() } ?? ""
        return rightToLeft.contains(language)
    }
}
