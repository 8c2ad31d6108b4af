/// The identifiers of flowd's own human strings. The texts live in
/// `Resources/l10n/<locale>.json`, one file per locale, never in code.
///
/// Placeholders are written `{name}` and filled by ``Strings/text(_:locale:_:)``.
package enum BuiltinString: String, CaseIterable, Sendable {
    case back, `continue`, backToReview, review, submit, finish
    case notGiven, notFinished, other, selectAllThatApply
    /// "Step {n} of {m}"
    case stepCounter
    /// "Step {n} of {m}, {title}": what a screen reader says when a step arrives.
    case stepAnnouncement
    /// "Edit {step}": the accessible label of a review group's Edit action.
    case edit
    case yes, no
    /// Joins the labels of a multiple choice in Review (", " or "、").
    case listSeparator
    /// Shown in Review in place of a secure value.
    case secureMask
    /// How computed numbers are written: the separator of thousands ("," in
    /// English, "." in German), the decimal separator, and the fewest digits
    /// before the separator at which grouping starts ("2" in Spanish: 1440,
    /// but 14.400). Not sentences: data a translator sets once.
    case numberGroupSeparator, numberDecimalSeparator, numberMinimumGrouping
    /// How a date is written for people: "{day}.{month}.{year}" in German,
    /// "{year}年{month}月{day}日" in Japanese; `{month}` and `{day}` have two
    /// digits. Data a translator sets once, like the number separators.
    case dateDisplay
    /// "Sending…": the label while a submit runs, and its announcement.
    case submitting, submitted
    /// "Not sent": a cancelled submit.
    case notSent
    /// The buttons of a failed or running submit: "Try again", "Cancel".
    case tryAgain, cancel
    /// "(optional)": after the label of a field that need not be answered.
    case optional
    /// "Couldn't send this. Try again.": the default submit error.
    case submitFailed, submitTimeout, submitInterrupted
    /// "Couldn't check this value.": a plugin validator failed (fail closed).
    case checkFailed, checkTimeout
    case noOptions
    // Default validation messages.
    case required, requiredChoice, mustBeOn, otherRequired
    /// "{min}"
    case minLength
    /// "{max}"
    case maxLength
    case pattern, email
    /// "{min}"
    case minimum
    /// "{max}"
    case maximum
    case integer, dateFormat, timeFormat
    /// "{date}"
    case dateAfter, dateBefore
    case dateAfterToday, dateBeforeToday
    /// "{min}"
    case minSelected
    /// "{max}"
    case maxSelected
    case invalidOption
    /// "{field}": the label of the other field of a step rule.
    case mustEqual, mustDiffer, mustBeBefore, mustBeAfter, mustBeLess, mustBeGreater
    // Hints: rules said before the person breaks them.
    /// "Must be in the required format": a pattern without the flow's `patternHint`.
    case patternHint
    /// "{field}": "Must match Password" and the other comparisons.
    case hintMustEqual, hintMustDiffer, hintMustBeBefore, hintMustBeAfter, hintMustBeLess, hintMustBeGreater
    /// "{field}", "{value}": "Required if Purpose is Loan".
    case hintRequiredIfEquals
    /// "{field}": "Required if Company is filled in" (or left empty).
    case hintRequiredIfAnswered, hintRequiredIfNotAnswered
    /// "{field}": a condition that reads one field in another way.
    case hintRequiredDependsOn
    /// A condition that reads several fields.
    case hintRequiredDepends
}

/// flowd's built-in string catalog with its translations.
///
/// ```swift
/// Strings.builtin.text(.continue, locale: "de")                 // "Weiter"
/// Strings.builtin.text(.stepCounter, locale: "fr", ["n": "2", "m": "4"])  // "Étape 2 sur 4"
/// ```
package struct Strings: Sendable {
    /// The locales with a complete translation, in the order they are listed.
    package static let locales = ["en", "es", "fr", "de", "it", "pt-BR", "ja", "ko", "zh-Hans", "zh-Hant"]

    /// The catalog built from the embedded resource files.
    package static let builtin = Strings(resources: [
        ("en", PackageResources.en_json), ("es", PackageResources.es_json), ("fr", PackageResources.fr_json),
        ("de", PackageResources.de_json), ("it", PackageResources.it_json), ("pt-BR", PackageResources.pt_BR_json),
        ("ja", PackageResources.ja_json), ("ko", PackageResources.ko_json),
        ("zh-Hans", PackageResources.zh_Hans_json), ("zh-Hant", PackageResources.zh_Hant_json),
    ])

    /// Locale → key → text, as read from the resources.
    package let tables: [String: [String: String]]
    /// Problems found while reading the resources (tests assert it is empty).
    package let loadProblems: [String]
    private let localeOrder: [String]

    /// A catalog of `(locale, JSON bytes)` resources, each an object of
    /// key → text, matched as ``catalogLocale(for:)`` says. The desktop
    /// client builds its own strings this way.
    package init(resources: [(String, [UInt8])]) {
        var tables: [String: [String: String]] = [:]
        var problems: [String] = []
        let limits = JSONParser.Limits(maxDepth: 4, maxStringBytes: 4096)
        for (locale, bytes) in resources {
            do {
                let parsed = try JSONParser.parse(bytes, limits: limits)
                guard case .object(let members) = parsed.root else {
                    problems.append("\(locale).json: expected an object of strings")
                    continue
                }
                var table: [String: String] = [:]
                for m in members {
                    if case .string(let s) = m.value {
                        table[m.key] = s
                    } else {
                        problems.append("\(locale).json: \(m.key): expected a string")
                    }
                }
                tables[locale] = table
            } catch {
                problems.append("\(locale).json: line \(error.line), column \(error.column): \(error.message)")
            }
        }
        self.tables = tables
        self.loadProblems = problems
        self.localeOrder = resources.map(\.0)
    }

    /// The catalog locale that serves a requested locale (`pt-PT` → `pt-BR`,
    /// `zh-TW` → `zh-Hant`, `sv` → `en`).
    package func catalogLocale(for requested: String) -> String {
        // A catalog locale asks for itself (the chain's first step): one look-up.
        if tables[requested] != nil { return requested }
        guard let i = LocaleFallback.bestMatch(for: requested, in: localeOrder) else { return "en" }
        return localeOrder[i]
    }

    /// The text of `key` in `locale`, falling back to English for a key a
    /// translation lacks, with `{name}` placeholders replaced from `arguments`.
    package func text(_ key: BuiltinString, locale: String, _ arguments: [String: String] = [:]) -> String {
        text(forKey: key.rawValue, locale: locale, arguments)
    }

    /// The text of the key named `key`, as ``text(_:locale:_:)`` finds it: for
    /// catalogs whose keys are not ``BuiltinString``s.
    package func text(forKey key: String, locale: String, _ arguments: [String: String] = [:]) -> String {
        text(forKey: key, in: catalog(for: locale), arguments)
    }

    /// The table of the catalog locale that serves `locale`: found once by
    /// a caller that looks up many keys in one locale, for
    /// ``text(_:in:_:)``.
    package func catalog(for locale: String) -> [String: String]? {
        tables[catalogLocale(for: locale)]
    }

    /// ``text(_:locale:_:)`` with the locale's table already found
    /// (``catalog(for:)``).
    package func text(_ key: BuiltinString, in catalog: [String: String]?, _ arguments: [String: String] = [:]) -> String {
        text(forKey: key.rawValue, in: catalog, arguments)
    }

    private func text(forKey key: String, in catalog: [String: String]?, _ arguments: [String: String]) -> String {
        let template = catalog?[key] ?? tables["en"]?[key] ?? key
        return arguments.isEmpty ? template : Self.fill(template, arguments)
    }

    /// Replaces each `{name}` in `template` with `arguments[name]`; unknown
    /// names are left as they are.
    ///
    /// Scans the UTF-8 bytes for the ASCII braces (a brace byte is never part
    /// of a longer UTF-8 sequence): every announcement is made here, and
    /// walking `Character`s cost more than the rest of `GetStep`'s text.
    package static func fill(_ template: String, _ arguments: [String: String]) -> String {
        let open = UInt8(ascii: "{")
        let close = UInt8(ascii: "}")
        var template = template
        // On the contiguous bytes: the string's own index arithmetic cost
        // several times the rest of the work.
        return template.withUTF8 { bytes -> String in
            var out: [UInt8] = []
            var rest = 0
            var index = 0
            while let start = bytes[index...].firstIndex(of: open) {
                let nameStart = start + 1
                guard let end = bytes[nameStart...].firstIndex(of: close) else { break }
                let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[nameStart..<end]), as: UTF8.self)
                index = end + 1
                guard let value = arguments[name] else { continue }
                if out.isEmpty { out.reserveCapacity(bytes.count + 32) }
                out.append(contentsOf: bytes[rest..<start])
                out.append(contentsOf: value.utf8)
                rest = index
            }
            if rest == 0 { return String(decoding: bytes, as: UTF8.self) }
            out.append(contentsOf: bytes[rest...])
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// The `{name}` placeholders a template uses, in order (tests compare them
    /// across translations).
    package static func placeholders(in template: String) -> [String] {
        var names: [String] = []
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            let after = rest[rest.index(after: open)...]
            guard let close = after.firstIndex(of: "}") else { break }
            names.append(String(after[..<close]))
            rest = after[after.index(after: close)...]
        }
        return names
    }
}
