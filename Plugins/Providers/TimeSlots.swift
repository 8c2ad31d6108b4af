import FlowKit
import FlowdPluginSupport
import Foundation

/// `flowd.time-slots`: the start times of slots of equal length in a day.
///
/// Options: `start` (`HH:MM`, default `09:00`), `end` (`HH:MM`, default
/// `17:00`; the last slot ends by then), `minutes` (5–720, default 30). Each
/// option's id is the start time `HH:MM` (what a `time` answer looks like); its
/// label is that time in the session's language (“9:00 AM” in English,
/// “09:00” in German).
struct TimeSlotsProvider: OptionsProvider, DeclaresOptions {
    static let name = "flowd.time-slots"
    static let declaredOptions = [
        PluginOption(name: "start", type: .string),
        PluginOption(name: "end", type: .string),
        PluginOption(name: "minutes", type: .integer),
    ]

    func options(for field: FieldInfo, context: PluginContext) async throws -> [ChoiceOption] {
        let options = try PluginOptions(context.options, capability: Self.name, declared: Self.declaredOptions)
        let start = try Self.minutes(options, "start", default: 9 * 60)
        let end = try Self.minutes(options, "end", default: 17 * 60)
        let length = try options.integer("minutes", in: 5...720) ?? 30
        let slots = Self.slots(start: start, end: end, length: length)
        guard !slots.isEmpty else {
            throw PluginConfigurationError(Self.name, "no slot of \(length) minutes fits between start and end")
        }
        let formatter = ICULocale.formatter(for: context.locale, template: "jmm")
        return slots.map { start in
            let id = start.description
            guard let formatter else { return ChoiceOption(id: id, label: id) }
            let label = formatter.string(from: Date(timeIntervalSince1970: Double(start.minutesSinceMidnight * 60)))
            return ChoiceOption(id: id, label: label)
        }
    }

    /// Slot starts: `start`, `start + length`, … (in minutes after midnight)
    /// while the slot ends by `end`.
    static func slots(start: Int, end: Int, length: Int) -> [CivilTime] {
        guard length > 0 else { return [] }
        return stride(from: start, through: end - length, by: length).compactMap(CivilTime.init(minutesSinceMidnight:))
    }

    /// Minutes after midnight for `HH:MM` (00:00 to 23:59), or `24:00` (the
    /// end of the day, which an `end` may be).
    static func parse(_ text: String) -> Int? {
        text == "24:00" ? 24 * 60 : CivilTime(iso: text)?.minutesSinceMidnight
    }

    private static func minutes(_ options: PluginOptions, _ key: String, default value: Int) throws -> Int {
        guard let text = try options.string(key) else { return value }
        guard let m = parse(text) else {
            throw PluginConfigurationError(name, "option \"\(key)\" must be a time HH:MM")
        }
        return m
    }
}
