import FlowEngine

/// The language a client asks flowd for (flowctl and flowd-gtk alike):
/// `--locale` when given, else the POSIX environment in its order of
/// precedence (`LC_ALL`, then `LC_MESSAGES`, then `LANG`).
package enum RequestedLocale {
    /// The language of the environment as a tag (`de_DE.UTF-8` → `de-DE`):
    /// the first of `LC_ALL`, `LC_MESSAGES` and `LANG` that is set decides;
    /// nil when none is, or it is `C` or `POSIX` (no language: the daemon's
    /// default), or it is not a language tag.
    package static func fromEnvironment(_ variable: (String) -> String?) -> String? {
        for key in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            guard let value = variable(key), !value.isEmpty else { continue }
            let base = value.split(whereSeparator: { $0 == "." || $0 == "@" }).first.map(String.init) ?? value
            if base == "C" || base == "POSIX" { return nil }
            let tag = LocaleFallback.normalize(value)
            return LocaleFallback.isWellFormed(tag) ? tag : nil
        }
        return nil
    }
}
