import FlowKit
import FlowdPluginSupport

/// `flowd.date-window`: a date (`YYYY-MM-DD`) within a window relative to
/// today, in the daemon's time zone.
///
/// Options: `minDays` (default 0: today) and `maxDays` (default 30), whole
/// numbers from -36500 to 36500 with `minDays <= maxDays`. `{"minDays": 1,
/// "maxDays": 14}` means "tomorrow up to two weeks from today".
struct DateWindowValidator: FieldValidator {
    static let name = "flowd.date-window"

    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        let (first, last) = try Self.window(context.options, today: LocalCalendar.today())
        guard let text = value.textValue else {
            throw PluginConfigurationError(Self.name, "works on date fields only")
        }
        guard let date = CivilDate(iso: text) else { return DateWindowMessages.format(context.locale) }
        if date < first || date > last {
            return Localized.fill(
                DateWindowMessages.outside(context.locale), ["first": first.description, "last": last.description])
        }
        return nil
    }

    /// The first and last allowed day for `options`, counted from `today`.
    static func window(_ values: [String: JSONValue], today: CivilDate) throws -> (CivilDate, CivilDate) {
        let options = try PluginOptions(values, capability: name, allowed: ["minDays", "maxDays"])
        let minDays = try options.integer("minDays", in: -36500...36500) ?? 0
        let maxDays = try options.integer("maxDays", in: -36500...36500) ?? 30
        guard minDays <= maxDays else {
            throw PluginConfigurationError(name, "\"minDays\" must not be greater than \"maxDays\"")
        }
        guard let first = today.adding(days: minDays), let last = today.adding(days: maxDays) else {
            throw PluginConfigurationError(name, "the window leaves the calendar (the years 1 to 9999)")
        }
        return (first, last)
    }
}

enum DateWindowMessages {
    static let format = Localized([
        "en": "Enter a date as YYYY-MM-DD.",
        "de": "Geben Sie ein Datum als JJJJ-MM-TT ein.",
        "fr": "Saisissez une date au format AAAA-MM-JJ.",
        "es": "Introduzca una fecha con el formato AAAA-MM-DD.",
    ])
    static let outside = Localized([
        "en": "Choose a date from {first} to {last}.",
        "de": "Wählen Sie ein Datum vom {first} bis zum {last}.",
        "fr": "Choisissez une date du {first} au {last}.",
        "es": "Elija una fecha del {first} al {last}.",
    ])
}
