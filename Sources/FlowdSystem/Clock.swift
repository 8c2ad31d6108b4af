import Glibc

/// `CLOCK_MONOTONIC`: the clock of every timeout, deadline and measurement
/// in the package (the Reactor's timerfd, condition waits, the plugin
/// timeouts, `MONOTONIC_USEC=` for systemd). It does not jump with the wall
/// clock, and it stops while the machine sleeps.
package enum MonotonicClock {
    /// A point on the monotonic clock, in nanoseconds since boot.
    package struct Instant: Comparable, Hashable, Sendable {
        /// Nanoseconds on `CLOCK_MONOTONIC`.
        package var nanoseconds: UInt64

        package init(nanoseconds: UInt64) {
            self.nanoseconds = nanoseconds
        }

        /// This instant moved `duration` later (a negative duration counts as zero).
        package func advanced(by duration: Duration) -> Instant {
            let (sum, overflow) = nanoseconds.addingReportingOverflow(duration.nonNegativeNanoseconds)
            return Instant(nanoseconds: overflow ? .max : sum)
        }

        /// How long from `earlier` to this instant (zero when `earlier` is later).
        package func duration(since earlier: Instant) -> Duration {
            guard nanoseconds > earlier.nanoseconds else { return .zero }
            return .nanoseconds(Int64(clamping: nanoseconds - earlier.nanoseconds))
        }

        /// The instant as a C `timespec`.
        var timespec: Glibc.timespec {
            Glibc.timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        }

        package static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }
    }

    /// `clock_gettime(CLOCK_MONOTONIC)`.
    package static func now() -> Instant {
        var ts = Glibc.timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Instant(nanoseconds: UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec))
    }

    /// Sleeps until `deadline` (`clock_nanosleep` with `TIMER_ABSTIME`,
    /// which a signal does not cut short: it is retried to the same deadline).
    package static func sleep(until deadline: Instant) {
        var spec = deadline.timespec
        // clock_nanosleep returns the error number instead of setting errno.
        _ = SystemCall.valueOrErrno {
            let error = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &spec, nil)
            if error == 0 { return Int32(0) }
            errno = error
            return -1
        }
    }

    /// Sleeps for `duration`.
    package static func sleep(for duration: Duration) {
        sleep(until: now().advanced(by: duration))
    }
}

extension Duration {
    /// Whole nanoseconds, clamped to zero for negative durations (and to
    /// half of `UInt64.max`, centuries, for huge ones, so adding it to a
    /// monotonic instant cannot overflow).
    package var nonNegativeNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        if seconds < 0 || (seconds == 0 && attoseconds < 0) { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow || whole > UInt64.max / 2 { return UInt64.max / 2 }
        return whole &+ UInt64(attoseconds / 1_000_000_000)
    }
}

/// `CLOCK_REALTIME`: the time of day, for timestamps people and stores read.
/// Never for measuring how long something took (use ``MonotonicClock``).
package enum WallClock {
    /// `clock_gettime(CLOCK_REALTIME)` in microseconds since the Unix epoch.
    package static func microsecondsSinceEpoch() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }
}

/// A date and time of day on the Gregorian calendar, broken down from a
/// point in time in the local time zone (`TZ`, `/etc/localtime`) or in UTC.
package struct CalendarTime: Hashable, Sendable {
    /// The year, 1970 or later for real clocks.
    package var year: Int
    /// 1–12.
    package var month: Int
    /// 1–31.
    package var day: Int
    /// 0–23.
    package var hour: Int
    /// 0–59.
    package var minute: Int
    /// 0–60 (a leap second).
    package var second: Int

    /// The local time at `microseconds` since the epoch (`localtime_r`), or
    /// nil when the C library cannot represent it.
    package static func local(microsecondsSinceEpoch microseconds: Int64) -> CalendarTime? {
        var seconds = time_t(microseconds / 1_000_000)
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return nil }
        return CalendarTime(parts)
    }

    /// The UTC time at `microseconds` since the epoch (`gmtime_r`).
    package static func utc(microsecondsSinceEpoch microseconds: Int64) -> CalendarTime? {
        var seconds = time_t(microseconds / 1_000_000)
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { return nil }
        return CalendarTime(parts)
    }

    /// The local date and time now.
    package static func localNow() -> CalendarTime? {
        local(microsecondsSinceEpoch: WallClock.microsecondsSinceEpoch())
    }

    private init(_ parts: tm) {
        year = Int(parts.tm_year) + 1900
        month = Int(parts.tm_mon) + 1
        day = Int(parts.tm_mday)
        hour = Int(parts.tm_hour)
        minute = Int(parts.tm_min)
        second = Int(parts.tm_sec)
    }

    /// `HH:MM:SS`.
    package var timeOfDay: String {
        "\(Self.pad(hour, 2)):\(Self.pad(minute, 2)):\(Self.pad(second, 2))"
    }

    /// `YYYY-MM-DDTHH:MM:SSZ`: RFC 3339 with second precision, for a UTC time.
    package var rfc3339UTC: String {
        "\(Self.pad(year, 4))-\(Self.pad(month, 2))-\(Self.pad(day, 2))T\(timeOfDay)Z"
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
