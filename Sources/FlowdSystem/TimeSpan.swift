/// systemd's time span syntax, which administrators already know: read by
/// flowd.conf's time keys (`IdleTimeout=7d`) and by flowctl's
/// `sessions --older-than 2h`.
package enum TimeSpan {
    /// A time span such as `30s`, `5min`, `2h`, `7d`, `1h 30min`, `250ms`, or a
    /// bare number of seconds, at most ten years. Returns nil for anything else.
    package static func parse(_ text: String) -> Duration? {
        let units: [(suffixes: [String], seconds: Double)] = [
            (["ms", "msec"], 0.001),
            (["s", "sec", "second", "seconds"], 1),
            (["m", "min", "minute", "minutes"], 60),
            (["h", "hr", "hour", "hours"], 3600),
            (["d", "day", "days"], 86400),
            (["w", "week", "weeks"], 604_800),
        ]
        var total = 0.0
        var sawAny = false
        for part in text.split(separator: " ", omittingEmptySubsequences: true) {
            let digits = part.prefix(while: { $0.isNumber || $0 == "." })
            let suffix = String(part.dropFirst(digits.count)).lowercased()
            guard !digits.isEmpty, let value = Double(digits) else { return nil }
            if suffix.isEmpty {
                total += value
            } else if let unit = units.first(where: { $0.suffixes.contains(suffix) }) {
                total += value * unit.seconds
            } else {
                return nil
            }
            sawAny = true
        }
        guard sawAny, total.isFinite, total <= 10 * 365 * 86400 else { return nil }
        return .milliseconds(Int64((total * 1000).rounded()))
    }

    /// `span` written the way ``parse(_:)`` reads it, in the largest units
    /// that divide it: `7d`, `1h 30min`, `250ms`, `0s`.
    package static func text(_ span: Duration) -> String {
        var milliseconds = span.components.seconds * 1000 + span.components.attoseconds / 1_000_000_000_000_000
        guard milliseconds > 0 else { return "0s" }
        let units: [(name: String, milliseconds: Int64)] = [
            ("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000), ("ms", 1),
        ]
        var parts: [String] = []
        for unit in units where milliseconds >= unit.milliseconds {
            parts.append("\(milliseconds / unit.milliseconds)\(unit.name)")
            milliseconds %= unit.milliseconds
        }
        return parts.joined(separator: " ")
    }
}
