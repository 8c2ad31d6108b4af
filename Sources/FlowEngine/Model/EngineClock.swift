import FlowKit

/// The engine's only source of time, injected by the daemon (and by tests).
///
/// The engine never reads the system clock or the time zone: `today` is the
/// local calendar date as the daemon computes it.
package protocol EngineClock: Sendable {
    /// Microseconds since the Unix epoch.
    var now: Int64 { get }
    /// Today's date in the daemon's local time zone, for `"today"` in date rules.
    var today: CivilDate { get }
}

/// A clock that always says the same thing: for tests and for replaying.
package struct FixedClock: EngineClock {
    /// Microseconds since the Unix epoch.
    package var now: Int64
    /// The local calendar date.
    package var today: CivilDate

    /// A clock stopped at `now` on `today`.
    package init(now: Int64, today: CivilDate) {
        self.now = now
        self.today = today
    }
}
