import FlowdSystem

/// A failed file operation of the spool: the system's sentence (`mkdir
/// /var/spool/x: Permission denied`), as the plugin's own error, so no
/// FlowdSystem type crosses into the daemon.
struct SpoolError: Error, CustomStringConvertible {
    var description: String

    init(_ error: SystemCallError) {
        description = "flowd.spool: \(error)"
    }
}

/// The spool's files: safe names, its directories and atomic writes.
enum SpoolFile {
    /// Letters, digits, `-`, `_` and `.` (not leading): safe as one path component.
    static func isSafeName(_ s: String) -> Bool {
        guard let first = s.unicodeScalars.first, first != ".", s.unicodeScalars.count <= 200 else { return false }
        return s.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                || $0 == "-" || $0 == "_" || $0 == "."
        }
    }

    /// Every missing component of `path`, mode 0700 (existing ones are left
    /// as they are); a component that is not a directory fails.
    static func makeDirectories(_ path: String) throws(SpoolError) {
        do {
            try FileSystem.makeDirectories(path, mode: 0o700)
        } catch {
            throw SpoolError(error)
        }
    }

    /// Writes `bytes` to `directory/name` so that the file is either the old
    /// one or the complete new one, and stays after a crash (mode 0600).
    static func writeAtomically(_ bytes: [UInt8], directory: String, name: String) throws(SpoolError) {
        do {
            try FileSystem.writeAtomically(bytes, directory: directory, name: name, mode: 0o600)
        } catch {
            throw SpoolError(error)
        }
    }
}
