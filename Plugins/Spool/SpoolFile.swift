import Glibc

/// A failed file operation of the spool, with the C call and the errno text.
struct SpoolError: Error, CustomStringConvertible {
    var operation: String
    var path: String
    var code: Int32

    var description: String {
        var buffer = [CChar](repeating: 0, count: 256)
        let text = strerror_r(code, &buffer, buffer.count) == 0
            ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            : "errno \(code)"
        return "flowd.spool: \(operation) \(path): \(text)"
    }
}

/// The POSIX calls behind an atomic spool write. Each wrapper names the C
/// function it calls and throws ``SpoolError`` with errno.
enum SpoolFile {
    /// Letters, digits, `-`, `_` and `.` (not leading): safe as one path component.
    static func isSafeName(_ s: String) -> Bool {
        guard let first = s.unicodeScalars.first, first != ".", s.unicodeScalars.count <= 200 else { return false }
        return s.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                || $0 == "-" || $0 == "_" || $0 == "."
        }
    }

    /// `mkdir(2)` of every missing component with mode 0700 (existing ones
    /// are left as they are).
    static func makeDirectories(_ path: String) throws(SpoolError) {
        var prefix = ""
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw SpoolError(operation: "mkdir", path: prefix, code: errno)
            }
        }
        var st = stat()
        guard stat(path, &st) == 0 else { throw SpoolError(operation: "stat", path: path, code: errno) }
        guard st.st_mode & S_IFMT == S_IFDIR else { throw SpoolError(operation: "use", path: path, code: ENOTDIR) }
    }

    /// Writes `bytes` to `directory/name` so that the file is either the old
    /// one or the complete new one, and stays after a crash:
    /// `open(O_CREAT|O_EXCL, 0600)` a temporary name, `write`, `fsync`,
    /// `rename`, `fsync` the directory.
    static func writeAtomically(_ bytes: [UInt8], directory: String, name: String) throws(SpoolError) {
        let dirFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dirFD >= 0 else { throw SpoolError(operation: "open", path: directory, code: errno) }
        defer { close(dirFD) }

        var temporary = ""
        var fd: Int32 = -1
        for attempt in 0..<16 {
            temporary = ".\(name).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).\(attempt).tmp"
            fd = openat(dirFD, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd >= 0 || errno != EEXIST { break }
        }
        guard fd >= 0 else { throw SpoolError(operation: "create", path: directory + "/" + temporary, code: errno) }
        var committed = false
        defer {
            if fd >= 0 { close(fd) }
            if !committed { unlinkat(dirFD, temporary, 0) }
        }

        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in write(fd, raw.baseAddress.map { $0 + offset }, bytes.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SpoolError(operation: "write", path: directory + "/" + temporary, code: errno)
            }
            offset += n
        }
        guard fsync(fd) == 0 else { throw SpoolError(operation: "fsync", path: directory + "/" + temporary, code: errno) }
        let closed = close(fd)
        fd = -1
        guard closed == 0 else { throw SpoolError(operation: "close", path: directory + "/" + temporary, code: errno) }
        guard renameat(dirFD, temporary, dirFD, name) == 0 else {
            throw SpoolError(operation: "rename", path: directory + "/" + name, code: errno)
        }
        committed = true
        guard fsync(dirFD) == 0 else { throw SpoolError(operation: "fsync", path: directory, code: errno) }
    }
}
