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
struct TimeSlotsProvider: OptionsProvider {
    static let name = "flowd.time-slots"

    func options(for field: FieldInfo, context: PluginContext) async throws -> [ChoiceOption] {
        let options = try PluginOptions(context.options, capability: Self.name, allowed: ["start", "end", "minutes"])
        let start = try Self.minutes(options, "start", default: 9 * 60)
        let end = try Self.minutes(options, "end", default: 17 * 60)
        let length = try options.integer("minutes", in: 5...720) ?? 30
        let slots = Self.slots(start: start, end: end, length: length)
        guard !slots.isEmpty else {
            throw PluginConfigurationError(Self.name, "no slot of \(length) minutes fits between start and end")
        }
        let formatter = ICULocale.formatter(for: context.locale, template: "jmm")
        return slots.map { m in
            let id = Self.format(m)
            guard let formatter else { return ChoiceOption(id: id, label: id) }
            let label = formatter.string(from: Date(timeIntervalSince1970: Double(m * 60)))
            return ChoiceOption(id: id, label: label)
        }
    }

    /// Slot starts in minutes after midnight: `start`, `start + length`, … while
    /// the slot ends by `end`.
    static func slots(start: Int, end: Int, length: Int) -> [Int] {
        guard length > 0 else { return [] }
        return Array(stride(from: start, through: end - length, by: length))
    }

    /// `HH:MM`.
    static func format(_ minutes: Int) -> String {
        let h = minutes / 60
        let m = minutes % 60
        return (h < 10 ? "0" : "") + String(h) + ":" + (m < 10 ? "0" : "") + String(m)
    }

    /// Minutes after midnight for `HH:MM` (00:00 to 24:00).
    static func parse(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2, let h = Int(parts[0]), let m = Int(parts[1]),
            parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
            (0...24).contains(h), (0..<60).contains(m), h * 60 + m <= 24 * 60
        else { return nil }
        return h * 60 + m
    }

    private static func minutes(_ options: PluginOptions, _ key: String, default value: Int) throws -> Int {
        guard let text = try options.string(key) else { return value }
        guard let m = parse(text) else {
            throw PluginConfigurationError(name, "option \"\(key)\" must be a time HH:MM")
        }
        return m
    }
}
