import FlowKit

/// Something a session says to the person, before it is put into words.
///
/// The state machine decides *what* to say (a rule is broken, a step
/// arrived, a submit failed); ``SessionText`` says it in a locale. Arguments
/// are messages too, so a placeholder can hold a number (`verbatim`), a
/// field's label (`flow`) or the localized Review title (`builtin`).
package indirect enum SessionMessage: Sendable, Hashable {
    /// One of flowd's built-in strings, its `{name}` placeholders filled.
    case builtin(BuiltinString, [String: SessionMessage] = [:])
    /// A text of the flow file (a title, a label, a custom message), its
    /// `{name}` placeholders filled.
    case flow(LocalizedText, [String: SessionMessage] = [:])
    /// A text of the flow file that answers are piped into (format 2: a
    /// title, a label, help, a body, the review note, the success message):
    /// its `{field}` placeholders show the answers (see ``Piping``).
    case piped(LocalizedText)
    /// Text that is already in the session's locale: a plugin's message, a
    /// number, an id.
    case verbatim(String)
    /// A date, written the locale's way (``BuiltinString/dateDisplay``).
    case date(CivilDate)
    /// A number as a person writes it: its digits, no grouping, the locale's
    /// decimal separator ("2,5" in German).
    case number(Double)
}

/// Field id → what is wrong with it (`""` for the step as a whole): the
/// unworded form of ``FieldErrors``.
package typealias FieldIssues = [String: SessionMessage]

/// Puts ``SessionMessage``s into words: flowd's built-in strings and the
/// flow's own texts, in one locale.
package struct SessionText: Sendable {
    /// The locale the words are in.
    package let locale: String
    /// flowd's catalog of built-in strings.
    package let strings: Strings
    /// What `{field}` placeholders show; nil leaves piped texts as written
    /// (format 1 flows, and texts said outside a session).
    private(set) var piping: PipedAnswers?
    /// The built-in strings of the catalog locale that serves ``locale``,
    /// found once (``Strings/catalog(for:)``): a page says a dozen of them.
    private let catalog: [String: String]?

    /// Words in `locale` (normalized or not; the catalog falls back).
    package init(locale: String, strings: Strings = .builtin) {
        self.init(locale: locale, strings: strings, piping: nil)
    }

    init(locale: String, strings: Strings, piping: PipedAnswers?) {
        self.locale = locale
        self.strings = strings
        self.piping = piping
        self.catalog = strings.catalog(for: locale)
    }

    /// The message in words.
    package func callAsFunction(_ message: SessionMessage) -> String {
        switch message {
        case .verbatim(let text):
            return text
        case .builtin(let key, let arguments):
            return strings.text(key, in: catalog, arguments.isEmpty ? [:] : arguments.mapValues(callAsFunction))
        case .flow(let text, let arguments):
            let template = text.resolve(locale)
            return arguments.isEmpty ? template : Strings.fill(template, arguments.mapValues(callAsFunction))
        case .piped(let text):
            return piped(text.resolve(locale))
        case .date(let date):
            return format(date)
        case .number(let number):
            return format(number)
        }
    }

    /// `number` as typed (`3`, not `3.0`), with this locale's decimal separator.
    package func format(_ number: Double) -> String {
        let decimal = strings.text(.numberDecimalSeparator, locale: locale)
        return formatNumber(number).split(separator: ".", omittingEmptySubsequences: false).joined(separator: decimal)
    }

    /// `date` as people in this locale write it: "08.12.2026" in German,
    /// "2026年12月08日" in Japanese, "2026-12-08" in English.
    package func format(_ date: CivilDate) -> String {
        func digits(_ n: Int, _ width: Int) -> String {
            let s = String(n)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return strings.text(.dateDisplay, locale: locale, [
            "year": digits(date.year, 4), "month": digits(date.month, 2), "day": digits(date.day, 2),
        ])
    }

    /// A piped text's words: its placeholders filled with the answers, in
    /// this locale.
    func piped(_ template: String) -> String {
        guard let piping else { return template }
        var plain = self
        plain.piping = nil
        return Piping.fill(template) { piping.value($0, plain) }
    }

    /// Each issue in words.
    package func callAsFunction(_ issues: FieldIssues) -> FieldErrors {
        issues.mapValues(callAsFunction)
    }
}

/// What the `{field}` placeholders of a session's piped texts show: each
/// field's answer as Review shows it, in the words' locale, or nil when it
/// has none (then the placeholder's fallback is used).
struct PipedAnswers: Sendable {
    let value: @Sendable (_ field: String, _ words: SessionText) -> String?
}
