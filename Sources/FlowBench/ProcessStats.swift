import FlowdSystem

/// What `/proc` says about a process the benchmark started: its memory and
/// CPU time.
enum ProcessStats {
    /// A process's resident memory in bytes (`VmRSS` in `/proc/PID/status`); nil when unreadable.
    static func residentBytes(of pid: Int32) -> Int? {
        guard let bytes = try? FileSystem.readFile("/proc/\(pid)/status", limit: 1 << 20) else { return nil }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let digits = line.dropFirst(6).filter(\.isNumber)
            return Int(digits).map { $0 * 1024 }
        }
        return nil
    }

    /// CPU time a process has used (user + system, `/proc/PID/stat` fields
    /// 14 and 15), in microseconds; nil when unreadable. Resolution: one
    /// clock tick (10 ms), fine over a run of seconds.
    static func cpuMicroseconds(of pid: Int32) -> Int? {
        cpuSplit(of: pid).map { $0.user + $0.system }
    }

    /// User and system CPU time of a process in microseconds (`/proc/PID/stat`).
    static func cpuSplit(of pid: Int32) -> (user: Int, system: Int)? {
        guard let bytes = try? FileSystem.readFile("/proc/\(pid)/stat", limit: 1 << 20) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        // The command name (field 2) may hold spaces: count fields after its ')'.
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state), so utime (14) and stime (15) are 11 and 12.
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        let ticks = CurrentProcess.clockTicksPerSecond
        return (user * 1_000_000 / ticks, system * 1_000_000 / ticks)
    }

    /// This process's CPU time (user + system), in microseconds.
    static func ownCPUMicroseconds() -> Int {
        Int(CurrentProcess.cpuTime().nonNegativeNanoseconds / 1000)
    }

    /// `path` made absolute against the current directory.
    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : (CurrentProcess.currentDirectory() ?? "/") + "/" + path
    }
}
