import FlowdSystem

/// Creating the database's directory and giving the database files their modes.
enum StoreFiles {
    /// Creates `directory` and any missing parents with mode 0700, and
    /// returns its canonical path (symbolic links resolved). Existing
    /// directories keep their mode — the administrator (or systemd's
    /// `StateDirectoryMode=`) owns that choice — but one that group or
    /// others may write to is refused: they could replace the database.
    ///
    /// Why the canonical path: SQLite's no-follow flag refuses a symbolic
    /// link anywhere in a path, and a link among the directories (a
    /// symlinked `~/.local`, `/var/lib` on another disk) is no risk. Only
    /// the database file itself must not be one, which the file checks see.
    static func ensureDirectory(_ directory: String) throws(StoreError) -> String {
        guard !directory.isEmpty else { return directory }
        let canonical: String
        let status: FileStatus
        do {
            try FileSystem.makeDirectories(directory, mode: 0o700)
            canonical = try FileSystem.canonicalPath(directory)
            status = try FileSystem.status(canonical)
        } catch {
            if error.errno == .notADirectory { throw .notADirectory(path: error.path ?? directory) }
            throw .directory(path: error.path ?? directory, reason: describe(error.errno))
        }
        if status.isWritableByGroupOrOthers {
            throw .unsafeDirectory(path: directory, mode: status.permissions)
        }
        return canonical
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
        let file: FileDescriptor
        do {
            file = try FileDescriptor.open(
                path, create ? [.readOnly, .nonBlocking, .noFollow, .create] : [.readOnly, .nonBlocking, .noFollow],
                mode: 0o600)
        } catch {
            if !create && error.errno == .noSuchFileOrDirectory { return }
            if error.errno == .tooManySymbolicLinks { throw .symbolicLink(path: path) }
            throw .file(path: path, reason: describe(error.errno))
        }
        do {
            let status = try file.status()
            guard status.isRegularFile else { throw StoreError.notARegularFile(path: path) }
            if status.isAccessibleByGroupOrOthers { try file.changeMode(0o600) }
        } catch let error as StoreError {
            throw error
        } catch let error as SystemCallError {
            throw .file(path: path, reason: describe(error.errno))
        } catch {
            throw .file(path: path, reason: "\(error)")
        }
    }

    /// `Permission denied (errno 13)`.
    private static func describe(_ errno: Errno) -> String {
        "\(errno) (errno \(errno.rawValue))"
    }
}
