import FlowKit
import FlowdSystem

/// The calendar of the host the plugins run in (FlowKit has dates, not clocks).
package enum LocalCalendar {
    /// Today in the process's local time zone (`TZ`, else `/etc/localtime`),
    /// the same day the daemon's engine calls today: both read it through
    /// FlowdSystem's `CalendarTime`.
    package static func today() -> CivilDate {
        let now = WallClock.microsecondsSinceEpoch()
        if let local = CalendarTime.local(microsecondsSinceEpoch: now),
            let date = CivilDate(year: local.year, month: local.month, day: local.day)
        {
            return date
        }
        // Only a clock outside the years 1–9999 gets here: the UTC day, clamped.
        let day = Int((Double(now) / 86_400_000_000).rounded(.down))
        return CivilDate(daysSinceEpoch: day) ?? (day < 0 ? .earliest : .latest)
    }
}
