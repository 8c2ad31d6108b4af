import FlowEngine

/// The desktop client's own strings: only what the daemon does not provide
/// (window chrome, the start page's headings and buttons, relative times).
/// Everything about a flow comes from the daemon in the session's language.
///
/// The texts live in `Resources/l10n/<locale>.json`, one file per locale, in
/// the same 10 locales as flowd's built-in strings, and are looked up with
/// flowd's fallback rules (`pt-PT` → `pt-BR`, `zh-TW` → `zh-Hant`, `sv` → `en`).
package enum AppString: String, CaseIterable, Sendable {
    /// The application's name in the window title ("Flows").
    case appName
    /// The start page's two groups.
    case flowsHeading, flowsDescription, sessionsHeading, sessionsDescription
    /// Shown when no flow is installed.
    case noFlows
    /// Buttons on an unfinished session's row; "{title}" in the accessible versions.
    case resume, discard, resumeSession, discardSession
    /// "changed just now", "changed {n} minutes ago" (singular and plural), hours, days.
    case changedJustNow, changedMinuteOne, changedMinutesOther, changedHourOne, changedHoursOther
    case changedDayOne, changedDaysOther
    /// Joins "Step 3 of 4" and the step title.
    case progressSeparator
    /// "{where}, {changed}": an unfinished session's second line.
    case sessionLine
    /// The toast when the window closes during a flow.
    case sessionKept
    /// Under a secure field that already holds a value.
    case secureIsSet
    /// The date and time pickers' buttons and fields.
    case chooseDate, chooseTime, hours, minutes
    /// The success page's button.
    case close
    /// The label of a receipt's `reference`, the key the shipped submit
    /// actions use (other keys are shown as they are).
    case receiptReference
    /// A notice's button: try again to reach flowd or open the form.
    case retry
    /// Notices: flowd cannot be reached; the form asked for is not there.
    case unreachableTitle, notAvailableTitle
    /// Toasts: the connection to flowd was lost, and is back.
    case connectionLost, reconnected
    /// A toast: another client closed the session shown.
    case sessionGone
}

/// The app's string catalog in one locale.
package struct AppStrings: Sendable {
    /// The locales with a complete translation (the same as flowd's).
    package static let locales = Strings.locales

    /// Every translation, from the embedded resource files.
    package static let catalog = Strings(resources: [
        ("en", PackageResources.en_json), ("es", PackageResources.es_json), ("fr", PackageResources.fr_json),
        ("de", PackageResources.de_json), ("it", PackageResources.it_json), ("pt-BR", PackageResources.pt_BR_json),
        ("ja", PackageResources.ja_json), ("ko", PackageResources.ko_json),
        ("zh-Hans", PackageResources.zh_Hans_json), ("zh-Hant", PackageResources.zh_Hant_json),
    ])

    /// The requested locale (as given: `de_DE.UTF-8`, `pt-PT`).
    package let locale: String

    package init(locale: String) {
        self.locale = locale
    }

    /// The catalog locale serving this one.
    package var catalogLocale: String { Self.catalog.catalogLocale(for: locale) }

    package func callAsFunction(_ key: AppString, _ arguments: [String: String] = [:]) -> String {
        Self.catalog.text(forKey: key.rawValue, locale: locale, arguments)
    }
}
