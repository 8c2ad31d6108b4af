import CAdw
import Glibc

/// The process's environment and clock, through GLib.
package enum ProcessEnvironment {
    /// The variable's value, or nil when unset.
    package static func value(_ name: String) -> String? {
        g_getenv(name).map { String(cString: $0) }
    }

    /// Wall-clock time in microseconds since the epoch (the unit of `UpdatedAt`).
    package static var nowMicroseconds: UInt64 { UInt64(max(g_get_real_time(), 0)) }
}

/// Lines on standard output and standard error, written at once (not held in
/// a buffer when the output is a file or a pipe: a test reads them live).
package enum Output {
    package static func line(_ text: String) { write(text + "\n", to: 1) }
    package static func error(_ text: String) { write(text + "\n", to: 2) }

    private static func write(_ text: String, to fd: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            bytes = bytes.dropFirst(n)
        }
    }
}
