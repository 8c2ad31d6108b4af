import FlowKit
import Foundation

/// The calendar of the host the plugins run in (FlowKit has dates, not clocks).
package enum LocalCalendar {
    /// Today in the process's local time zone (`TZ`, else `/etc/localtime`),
    /// the same day the daemon's engine calls today.
    package static func today() -> CivilDate {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        let now = Date()
        let parts = calendar.dateComponents([.year, .month, .day], from: now)
        if let y = parts.year, let m = parts.month, let d = parts.day, let date = CivilDate(year: y, month: m, day: d) {
            return date
        }
        // Only a clock outside the years 1–9999 gets here: the UTC day, clamped.
        let day = Int((now.timeIntervalSince1970 / 86_400).rounded(.down))
        return CivilDate(daysSinceEpoch: day) ?? (day < 0 ? .earliest : .latest)
    }
}
