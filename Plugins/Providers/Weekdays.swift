import FlowKit
import FlowdPluginSupport
import Foundation

/// `flowd.weekdays`: the next N weekdays (Monday to Friday), starting
/// tomorrow in the daemon's time zone.
///
/// Options: `count` (1–60, default 5). Each option's id is the date,
/// `YYYY-MM-DD` (what a `date` answer looks like); its label is the weekday
/// and date in the session's language through ICU (“Monday, June 3”,
/// “Montag, 3. Juni”, “lundi 3 juin”, “lunes, 3 de junio”, and every other
/// language ICU knows); for a language it does not know, the ISO date.
struct WeekdaysProvider: OptionsProvider, DeclaresOptions {
    static let name = "flowd.weekdays"
    static let declaredOptions = [PluginOption(name: "count", type: .integer)]

    func options(for field: FieldInfo, context: PluginContext) async throws -> [ChoiceOption] {
        let options = try PluginOptions(context.options, capability: Self.name, declared: Self.declaredOptions)
        let count = try options.integer("count", in: 1...60) ?? 5
        let labeller = DateLabeller(locale: context.locale)
        return Self.weekdays(after: LocalCalendar.today(), count: count).map {
            ChoiceOption(id: $0.description, label: labeller.label(for: $0))
        }
    }

    /// The first `count` weekdays strictly after `day` (fewer at the end of
    /// the calendar, in the year 9999).
    static func weekdays(after day: CivilDate, count: Int) -> [CivilDate] {
        var result: [CivilDate] = []
        var d = day
        while result.count < count, let next = d.adding(days: 1) {
            d = next
            if d.isoWeekday <= 5 { result.append(d) }
        }
        return result
    }
}

/// Labels dates in a language, or falls back to ISO dates.
struct DateLabeller {
    private let formatter: DateFormatter?

    init(locale: String) {
        formatter = ICULocale.formatter(for: locale, template: "EEEEdMMMM")
    }

    func label(for date: CivilDate) -> String {
        guard let formatter else { return date.description }
        // Noon UTC of that day, formatted in UTC: no time-zone shift can move it.
        let instant = Date(timeIntervalSince1970: Double(date.daysSinceEpoch) * 86_400 + 43_200)
        return formatter.string(from: instant)
    }
}

/// ICU formatters for a session locale.
enum ICULocale {
    /// A UTC formatter for `locale` from a skeleton `template`, or nil when
    /// ICU has no data for the locale's language.
    static func formatter(for locale: String, template: String) -> DateFormatter? {
        let identifier = LocaleChain.normalize(locale)
        let language = String(identifier.split(separator: "-").first ?? "en").lowercased()
        guard Locale.availableIdentifiers.contains(where: { $0 == language || $0.hasPrefix(language + "_") })
        else { return nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: identifier)
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.setLocalizedDateFormatFromTemplate(template)
        return formatter
    }
}
