import Glibc

/// The seam for the few POSIX calls FlowStore makes (directory and file
/// modes, the wall clock), next to ``LibSQLite`` for SQLite. Each function
/// returns the C result and the `errno` it left, never throws.
enum Posix {
    /// Wraps `mkdir(2)`.
    static func makeDirectory(_ path: String, mode: mode_t) -> (result: Int32, errno: Int32) {
        let rc = mkdir(path, mode)
        return (rc, rc == 0 ? 0 : errno)
    }

    /// Wraps `stat(2)`, following symbolic links (used for directories and plugin files).
    static func status(_ path: String) -> (status: stat?, errno: Int32) {
        var st = stat()
        guard stat(path, &st) == 0 else { return (nil, errno) }
        return (st, 0)
    }

    /// Wraps `open(2)` with `O_CLOEXEC | O_NOFOLLOW` added.
    static func open(_ path: String, flags: Int32, mode: mode_t) -> (fd: Int32, errno: Int32) {
        let fd = Glibc.open(path, flags | O_CLOEXEC | O_NOFOLLOW, mode)
        return (fd, fd >= 0 ? 0 : errno)
    }

    /// Wraps `fstat(2)`.
    static func status(fd: Int32) -> (status: stat?, errno: Int32) {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return (nil, errno) }
        return (st, 0)
    }

    /// Wraps `fchmod(2)`.
    static func changeMode(fd: Int32, _ mode: mode_t) -> Int32 {
        fchmod(fd, mode) == 0 ? 0 : errno
    }

    /// Wraps `close(2)`; the result is ignored because the descriptor is
    /// released either way on Linux.
    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// Wraps `clock_gettime(CLOCK_REALTIME)`: microseconds since the Unix epoch.
    static func realtimeMicroseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }

    static func isDirectory(_ st: stat) -> Bool { st.st_mode & S_IFMT == S_IFDIR }
    static func isRegularFile(_ st: stat) -> Bool { st.st_mode & S_IFMT == S_IFREG }
}

/// Creating the state directory and giving the database files their modes.
enum StoreFiles {
    /// Creates `directory` and any missing parents with mode 0700. Existing
    /// directories keep their mode: the administrator (or systemd's
    /// `StateDirectoryMode=`) owns that choice.
    static func ensureDirectory(_ directory: String) throws(StoreError) {
        guard !directory.isEmpty else { return }
        let absolute = directory.hasPrefix("/")
        var prefix = absolute ? "" : "."
        for component in directory.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += "/" + component
            if let st = Posix.status(prefix).status {
                guard Posix.isDirectory(st) else { throw .notADirectory(path: prefix) }
                continue
            }
            let made = Posix.makeDirectory(prefix, mode: 0o700)
            if made.result != 0 && made.errno != EEXIST {
                throw .directory(path: prefix, errno: made.errno)
            }
        }
    }

    /// Creates `path` with mode 0600 if missing, or tightens an existing
    /// file to 0600, without following a symbolic link. SQLite gives the
    /// `-wal` and `-shm` files it creates the mode of the database file, and
    /// existing companions are tightened too.
    static func ensurePrivateFiles(_ path: String) throws(StoreError) {
        try ensurePrivateFile(path, create: true)
        for suffix in ["-wal", "-shm", "-journal"] {
            try ensurePrivateFile(path + suffix, create: false)
        }
    }

    private static func ensurePrivateFile(_ path: String, create: Bool) throws(StoreError) {
        // O_NONBLOCK: a FIFO planted at the path must not hang start-up.
        let opened = Posix.open(path, flags: O_RDONLY | O_NONBLOCK | (create ? O_CREAT : 0), mode: 0o600)
        guard opened.fd >= 0 else {
            if !create && opened.errno == ENOENT { return }
            if opened.errno == ELOOP { throw .notARegularFile(path: path) }
            throw .file(path: path, errno: opened.errno)
        }
        defer { Posix.close(opened.fd) }
        let stat = Posix.status(fd: opened.fd)
        guard let st = stat.status else { throw .file(path: path, errno: stat.errno) }
        guard Posix.isRegularFile(st) else { throw .notARegularFile(path: path) }
        if st.st_mode & 0o077 != 0 {
            let failure = Posix.changeMode(fd: opened.fd, 0o600)
            guard failure == 0 else { throw .file(path: path, errno: failure) }
        }
    }
}
