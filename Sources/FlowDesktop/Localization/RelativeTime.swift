/// "changed 5 minutes ago" for an unfinished session.
package enum RelativeTime {
    /// The phrase for a change at `updatedAt`, seen at `now` (both microseconds
    /// since the epoch). A clock that went backwards reads as "just now".
    package static func changed(updatedAt: UInt64, now: UInt64, strings: AppStrings) -> String {
        let seconds = now > updatedAt ? (now - updatedAt) / 1_000_000 : 0
        let minutes = seconds / 60
        let hours = minutes / 60
        let days = hours / 24
        func phrase(_ n: UInt64, _ one: AppString, _ other: AppString) -> String {
            strings(n == 1 ? one : other, ["n": String(n)])
        }
        if minutes < 1 { return strings(.changedJustNow) }
        if hours < 1 { return phrase(minutes, .changedMinuteOne, .changedMinutesOther) }
        if days < 1 { return phrase(hours, .changedHourOne, .changedHoursOther) }
        return phrase(days, .changedDayOne, .changedDaysOther)
    }

    /// The second line of an unfinished session's row:
    /// "Step 3 of 4 · Contact details, changed 5 minutes ago".
    package static func sessionLine(_ session: SessionEntry, now: UInt64, strings: AppStrings) -> String {
        var line = session.progressLabel
        if !session.stepTitle.isEmpty {
            line += (line.isEmpty ? "" : strings(.progressSeparator)) + session.stepTitle
        }
        let changed = changed(updatedAt: session.updatedAt, now: now, strings: strings)
        return line.isEmpty ? changed : strings(.sessionLine, ["where": line, "changed": changed])
    }
}
