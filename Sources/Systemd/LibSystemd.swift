import CSystemd
import Glibc

/// The one seam through which the Systemd module calls C: libsystemd's
/// `sd_*` functions and the few POSIX calls the log backends need. Nothing
/// here throws; callers turn negative results into ``SystemdError`` values.
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

    /// Wraps `getenv(3)`.
    static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }

    /// Wraps `fstat(2)`: the device and inode of `fd`, or nil.
    static func deviceAndInode(of fd: Int32) -> (device: UInt64, inode: UInt64)? {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        return (UInt64(st.st_dev), UInt64(st.st_ino))
    }

    /// Wraps `getpid(2)`.
    static func processID() -> Int32 {
        getpid()
    }

    /// Wraps `clock_gettime(CLOCK_MONOTONIC)`, in microseconds: the clock
    /// systemd expects in `MONOTONIC_USEC=`.
    static func monotonicMicroseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1000
    }

    /// Wraps `write(2)`, retrying on `EINTR` and short writes. Returns 0 or the errno.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Int32 {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return write(fd, base + offset, raw.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return 0
    }

    /// Wraps `strerror(3)`.
    static func describe(_ errno: Int32) -> String {
        guard let text = strerror(errno) else { return "errno \(errno)" }
        return "\(String(cString: text)) (errno \(errno))"
    }
}
