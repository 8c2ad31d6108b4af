import FlowdSystem

/// Messages to the service manager through `sd_notify(3)`.
///
/// Every method returns `true` when the message was sent and `false` when
/// the process is not run by systemd with a notification socket
/// (`$NOTIFY_SOCKET` unset), so a daemon can call them unconditionally.
/// Sending failures throw.
///
/// - `ready()` once the bus name is owned (`Type=notify`);
/// - `status(_:)` with live counts, as often as they change;
/// - `watchdog()` at half of ``watchdogInterval()``;
/// - `reloading()`, then `ready()` when a reload finished (`Type=notify-reload`);
/// - `stopping()` on SIGTERM.
package struct SystemdNotifier: Sendable {
    /// A notifier; it holds no state, the socket comes from the environment at each call.
    package init() {}

    /// True when `$NOTIFY_SOCKET` is set, that is, when messages go anywhere.
    package var isConnected: Bool {
        CurrentProcess.environmentVariable("NOTIFY_SOCKET") != nil
    }

    /// `READY=1`: start-up (or a reload) has finished.
    @discardableResult
    package func ready() throws(SystemdError) -> Bool {
        try send([("READY", "1")])
    }

    /// `STATUS=…`: a one-line status for `systemctl status`. Newlines and
    /// other control characters become spaces, so the text can never add an
    /// assignment of its own.
    @discardableResult
    package func status(_ text: String) throws(SystemdError) -> Bool {
        try send([("STATUS", Self.singleLine(text))])
    }

    /// `WATCHDOG=1`: the keep-alive ping.
    @discardableResult
    package func watchdog() throws(SystemdError) -> Bool {
        try send([("WATCHDOG", "1")])
    }

    /// `STOPPING=1`: shutdown has begun.
    @discardableResult
    package func stopping() throws(SystemdError) -> Bool {
        try send([("STOPPING", "1")])
    }

    /// `RELOADING=1` with `MONOTONIC_USEC=` (required by
    /// `Type=notify-reload`): a reload has begun. Send ``ready()`` when it ends.
    @discardableResult
    package func reloading() throws(SystemdError) -> Bool {
        try send([("RELOADING", "1"), ("MONOTONIC_USEC", String(MonotonicClock.now().nanoseconds / 1000))])
    }

    /// The watchdog interval systemd expects (`WatchdogSec=`), from
    /// `sd_watchdog_enabled`; nil when the watchdog is off or meant for
    /// another process. Ping at half this interval.
    package func watchdogInterval() throws(SystemdError) -> Duration? {
        var usec: UInt64 = 0
        let rc = LibSystemd.watchdogEnabled(&usec)
        if rc < 0 { throw .watchdogMisconfigured(Errno(rawValue: -rc)) }
        guard rc > 0, usec > 0 else { return nil }
        return .microseconds(Int64(clamping: usec))
    }

    /// Sends several `NAME=value` assignments in one message. Names must be
    /// uppercase `A–Z`, `0–9` and `_`; values must not hold a newline or NUL.
    @discardableResult
    package func send(_ assignments: [(name: String, value: String)]) throws(SystemdError) -> Bool {
        let state = try Self.encode(assignments)
        let rc = LibSystemd.notify(state)
        if rc < 0 { throw .notifyFailed(Errno(rawValue: -rc), state: state) }
        return rc > 0
    }

    /// The message text for `assignments`: one `NAME=value` per line.
    static func encode(_ assignments: [(name: String, value: String)]) throws(SystemdError) -> String {
        guard !assignments.isEmpty else { throw .invalidAssignment("nothing to send") }
        var lines: [String] = []
        for (name, value) in assignments {
            let validName = !name.isEmpty && name.utf8.allSatisfy { byte in
                (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x30 && byte <= 0x39) || byte == 0x5f
            }
            guard validName else { throw .invalidAssignment("bad name \"\(name)\"") }
            guard !value.utf8.contains(0x0a) && !value.utf8.contains(0) else {
                throw .invalidAssignment("the value of \(name) holds a newline or NUL")
            }
            lines.append("\(name)=\(value)")
        }
        return lines.joined(separator: "\n")
    }

    static func singleLine(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { scalar in
            scalar.properties.generalCategory == .control ? " " : scalar
        }))
    }
}
