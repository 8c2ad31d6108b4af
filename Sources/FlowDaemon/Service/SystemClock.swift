import FlowEngine
import FlowKit
import Glibc

/// The engine's clock on the real system: wall time in microseconds, and
/// today's date in the daemon's local time zone (`TZ`, `/etc/localtime`).
struct SystemClock: EngineClock {
    var now: Int64 { Self.microsecondsNow() }

    var today: CivilDate {
        var seconds = time_t(Self.microsecondsNow() / 1_000_000)
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil,
            let date = CivilDate(year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday))
        else {
            // localtime_r cannot fail for a time this close to now; a fixed
            // date keeps the type total.
            return CivilDate(year: 1970, month: 1, day: 1) ?? Self.epoch
        }
        return date
    }

    private static let epoch: CivilDate = {
        guard let d = CivilDate(iso: "1970-01-01") else { preconditionFailure("the epoch is a valid date") }
        return d
    }()

    /// `CLOCK_REALTIME` in microseconds since the epoch.
    static func microsecondsNow() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }

    /// `CLOCK_MONOTONIC` in microseconds.
    static func monotonicMicroseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }
}

/// Session ids: 128 bits from the system's secure random source (Swift's
/// `SystemRandomNumberGenerator`, which is `getrandom(2)` on Linux) as 32
/// lowercase hex characters, so they cannot be guessed.
enum SessionID {
    /// A new id.
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
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

    /// True for 32 lowercase hex characters.
    static func isValid(_ id: String) -> Bool {
        guard id.utf8.count == 32 else { return false }
        var id = id
        return id.withUTF8 { bytes in bytes.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) } }
    }
}
