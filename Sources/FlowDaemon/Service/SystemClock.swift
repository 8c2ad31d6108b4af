import FlowEngine
import FlowKit
import FlowProtocol
import FlowdSystem
import Synchronization

/// The engine's clock on the real system: wall time in microseconds, and
/// today's date in the daemon's local time zone (`TZ`, `/etc/localtime`).
struct SystemClock: EngineClock {
    var now: Int64 { WallClock.microsecondsSinceEpoch() }

    /// Today in the local time zone, worked out once per second of wall
    /// time: every resolution of a session's answers asks for it (dates
    /// relative to `today`), several times per call, and `localtime_r` was
    /// a few thousand instructions each time.
    var today: CivilDate {
        let second = WallClock.microsecondsSinceEpoch() / 1_000_000
        if let kept = Self.lastToday.withLock({ $0 }), kept.second == second { return kept.date }
        let date: CivilDate
        if let local = CalendarTime.localNow(), let day = CivilDate(year: local.year, month: local.month, day: local.day) {
            date = day
        } else {
            // localtime_r cannot fail for a time this close to now; a fixed
            // date keeps the type total.
            date = CivilDate(year: 1970, month: 1, day: 1) ?? Self.epoch
        }
        Self.lastToday.withLock { $0 = (second, date) }
        return date
    }

    /// The last ``today`` and the second of wall time it was worked out in.
    private static let lastToday = Mutex<(second: Int64, date: CivilDate)?>(nil)

    private static let epoch: CivilDate = {
        guard let d = CivilDate(iso: "1970-01-01") else { preconditionFailure("the epoch is a valid date") }
        return d
    }()
}

/// New session ids: 128 bits from the system's secure random source (Swift's
/// `SystemRandomNumberGenerator`, which is `getrandom(2)` on Linux) as 32
/// lowercase hex characters, so they cannot be guessed.
extension SessionID {
    /// A new id, from `generator` (flowd-bench gives a seeded one).
    package static func make(using generator: inout some RandomNumberGenerator) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var hex = [UInt8]()
        hex.reserveCapacity(32)
        for _ in 0..<2 {
            var word = generator.next()
            for _ in 0..<16 {
                hex.append(digits[Int(word >> 60)])
                word <<= 4
            }
        }
        return String(decoding: hex, as: UTF8.self)
    }

    /// A new id from the system's secure random source.
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        return make(using: &generator)
    }
}
