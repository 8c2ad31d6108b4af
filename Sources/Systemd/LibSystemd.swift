import CSystemd
import Glibc

/// The one seam through which the Systemd module calls C: libsystemd's
/// `sd_*` functions (everything POSIX comes from FlowdSystem). Nothing here
/// throws; callers turn negative results into ``SystemdError`` values.
enum LibSystemd {
    /// Wraps `sd_notify(0, state)`: 0 when `$NOTIFY_SOCKET` is unset, a
    /// positive value when sent, `-errno` on failure. The environment is
    /// never unset, so later calls still reach systemd.
    static func notify(_ state: String) -> Int32 {
        sd_notify(0, state)
    }

    /// Wraps `sd_watchdog_enabled(0, &usec)`: positive with the interval in
    /// `usec` when systemd expects pings from this process, 0 when not,
    /// `-errno` when `$WATCHDOG_USEC` or `$WATCHDOG_PID` is malformed.
    static func watchdogEnabled(_ usec: inout UInt64) -> Int32 {
        sd_watchdog_enabled(0, &usec)
    }

    /// Wraps `sd_journal_sendv`: one entry from `fields`, each `NAME=value`
    /// bytes (values may hold newlines or any byte). Returns 0 or `-errno`.
    static func journalSend(_ fields: [[UInt8]]) -> Int32 {
        // One contiguous buffer, so every iovec points into memory that
        // stays valid for the whole call.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(fields.reduce(0) { $0 + $1.count })
        var ranges: [Range<Int>] = []
        for field in fields {
            let start = bytes.count
            bytes.append(contentsOf: field)
            ranges.append(start..<bytes.count)
        }
        return bytes.withUnsafeMutableBytes { raw -> Int32 in
            guard let base = raw.baseAddress else { return -EINVAL }
            let vectors = ranges.map { iovec(iov_base: base + $0.lowerBound, iov_len: $0.count) }
            return vectors.withUnsafeBufferPointer { sd_journal_sendv($0.baseAddress, Int32($0.count)) }
        }
    }

    /// Wraps `sd_pid_get_session(0, …)`: the logind session this process
    /// belongs to (a login, ssh, `machinectl shell`), nil when it is in none.
    static func ownSession() -> String? {
        taking { sd_pid_get_session(0, &$0) }
    }

    /// The string a `sd_*` call allocated into its out-parameter, freed
    /// here; nil when the call failed.
    private static func taking(_ body: (inout UnsafeMutablePointer<CChar>?) -> Int32) -> String? {
        var pointer: UnsafeMutablePointer<CChar>?
        defer { free(pointer) }
        guard body(&pointer) >= 0, let pointer else { return nil }
        return String(cString: pointer)
    }
}
