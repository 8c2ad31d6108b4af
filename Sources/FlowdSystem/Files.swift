import Glibc

/// Why ``FileSystem/readFile(_:limit:)`` returned nothing.
package enum FileReadError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A system call failed (the file is missing, not readable, …).
    case system(SystemCallError)
    /// The file holds more than `limit` bytes.
    case tooLarge(path: String, limit: Int)
    /// A directory, a FIFO, a device: not something to read as a file.
    case notARegularFile(path: String)

    /// Why, without the path: `No such file or directory`, `larger than 1048576 bytes`.
    package var reason: String {
        switch self {
        case .system(let error): return error.errno.description
        case .tooLarge(_, let limit): return "larger than \(limit) bytes"
        case .notARegularFile: return "not a regular file"
        }
    }

    /// The `errno` of a failed system call; nil for the other cases.
    package var errno: Errno? {
        if case .system(let error) = self { return error.errno }
        return nil
    }

    /// `cannot read /etc/flowd/flowd.conf: No such file or directory`.
    package var description: String {
        switch self {
        case .system(let error): return "cannot read \(error.path ?? "a file"): \(reason)"
        case .tooLarge(let path, _), .notARegularFile(let path): return "cannot read \(path): \(reason)"
        }
    }
}

/// Files and directories by path. Everything that opens a descriptor
/// returns or uses a ``FileDescriptor``.
package enum FileSystem {
    /// `stat(2)`, or `lstat(2)` (the link itself) without `followingSymbolicLinks`.
    package static func status(_ path: String, followingSymbolicLinks: Bool = true) throws(SystemCallError) -> FileStatus {
        var s = stat()
        let flags = followingSymbolicLinks ? 0 : AT_SYMLINK_NOFOLLOW
        _ = try SystemCall.check("stat", path: path) { fstatat(AT_FDCWD, path, &s, flags) }
        return FileStatus(s)
    }

    /// True when `path` exists (`access(2)`, `F_OK`).
    package static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// True when `path` is a regular file this process may execute.
    package static func isExecutableFile(_ path: String) -> Bool {
        guard let status = try? status(path), status.isRegularFile else { return false }
        return access(path, X_OK) == 0
    }

    /// The whole content of the regular file at `path`, at most `limit`
    /// bytes. Opened non-blocking, so a FIFO planted at the path cannot hang
    /// the caller: it is refused as not a regular file.
    package static func readFile(_ path: String, limit: Int) throws(FileReadError) -> [UInt8] {
        let file: FileDescriptor
        let status: FileStatus
        do {
            file = try FileDescriptor.open(path, [.readOnly, .nonBlocking])
            status = try file.status()
        } catch {
            throw .system(SystemCallError(error.call, path: path, errno: error.errno))
        }
        guard status.isRegularFile else { throw .notARegularFile(path: path) }
        return try file.readToEnd(limit: limit, path: path)
    }

    /// Creates (or replaces) the file at `path` with `bytes` and mode `mode`.
    /// Not atomic: for files nobody reads while they are written.
    package static func writeFile(_ path: String, _ bytes: some Collection<UInt8>, mode: UInt32 = 0o600) throws(SystemCallError) {
        let file = try FileDescriptor.open(path, [.writeOnly, .create, .truncate], mode: mode)
        do {
            try file.writeAll(bytes)
            try file.changeMode(mode)
        } catch {
            throw SystemCallError(error.call, path: path, errno: error.errno)
        }
    }

    /// Writes `bytes` to `directory/name` so that the file is either the old
    /// one or the complete new one, also after a crash or a power cut: a
    /// temporary file created with `O_EXCL` and `mode`, `write`, `fsync`,
    /// `rename` over the name, then `fsync` of the directory (without that
    /// last step the rename itself may be lost).
    package static func writeAtomically(
        _ bytes: some Collection<UInt8>, directory: String, name: String, mode: UInt32 = 0o600
    ) throws(SystemCallError) {
        let dir = try FileDescriptor.open(directory, [.readOnly, .directory])
        var temporary = ""
        var file: FileDescriptor?
        for attempt in 0..<16 {
            temporary = ".\(name).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).\(attempt).tmp"
            do {
                file = try FileDescriptor.open(
                    temporary, [.writeOnly, .create, .exclusive, .noFollow], mode: mode, relativeTo: dir)
                break
            } catch where error.errno == .fileExists {
                continue
            } catch {
                throw SystemCallError("create", path: directory + "/" + temporary, errno: error.errno)
            }
        }
        guard let file else { throw SystemCallError("create", path: directory + "/" + temporary, errno: .fileExists) }
        var committed = false
        defer { if !committed { try? dir.removeEntry(temporary) } }
        do {
            try file.writeAll(bytes)
            try file.sync()
        } catch {
            throw SystemCallError(error.call, path: directory + "/" + temporary, errno: error.errno)
        }
        file.close()
        do {
            try dir.renameEntry(temporary, to: name)
        } catch {
            throw SystemCallError("rename", path: directory + "/" + name, errno: error.errno)
        }
        committed = true
        do {
            try dir.sync()
        } catch {
            throw SystemCallError("fsync", path: directory, errno: error.errno)
        }
    }

    /// `mkdir -p`: creates `path` and every missing parent with `mode`.
    /// Existing directories keep their mode (an administrator, or systemd's
    /// `StateDirectoryMode=`, owns that choice). A component that exists but
    /// is not a directory fails with ``Errno/notADirectory`` and its path.
    package static func makeDirectories(_ path: String, mode: UInt32 = 0o700) throws(SystemCallError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            switch SystemCall.valueOrErrno({ mkdir(prefix, mode_t(mode)) }) {
            case .success: continue
            case .failure(let error) where error == .fileExists:
                guard try status(prefix).isDirectory else {
                    throw SystemCallError("mkdir", path: prefix, errno: .notADirectory)
                }
            case .failure(let error):
                throw SystemCallError("mkdir", path: prefix, errno: error)
            }
        }
    }

    /// `realpath(3)`: the absolute path with every symbolic link, `.` and
    /// `..` resolved; the file must exist.
    package static func canonicalPath(_ path: String) throws(SystemCallError) -> String {
        guard let resolved = realpath(path, nil) else { throw SystemCallError("realpath", path: path, errno: .current) }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `chmod(2)`.
    package static func changeMode(_ path: String, _ mode: UInt32) throws(SystemCallError) {
        _ = try SystemCall.check("chmod", path: path) { chmod(path, mode_t(mode)) }
    }

    /// `mkdtemp(3)`: a new directory `directory/prefix.XXXXXX`, mode 0700.
    package static func makeTemporaryDirectory(in directory: String, prefix: String) throws(SystemCallError) -> String {
        var template = Array("\(directory)/\(prefix).XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { $0.baseAddress.flatMap { mkdtemp($0) } }
        guard let made else { throw SystemCallError("mkdtemp", path: directory, errno: .current) }
        return String(cString: made)
    }

    /// The names in the directory at `path`, without `.` and `..`.
    package static func directoryEntries(_ path: String) throws(SystemCallError) -> [String] {
        let dir = try FileDescriptor.open(path, [.readOnly, .directory])
        do {
            return try dir.directoryEntries()
        } catch {
            throw SystemCallError(error.call, path: path, errno: error.errno)
        }
    }

    /// The bytes of the files at and below `path` (their sizes), without
    /// following symbolic links, looking at no more than `limit` entries;
    /// what cannot be read counts nothing. For a status report, not a quota.
    package static func totalSize(of path: String, limit: Int = 100_000) -> Int64 {
        var remaining = limit
        func walk(_ path: String) -> Int64 {
            guard remaining > 0, let status = try? status(path, followingSymbolicLinks: false) else { return 0 }
            remaining -= 1
            guard status.isDirectory else { return status.isRegularFile ? status.size : 0 }
            var total: Int64 = 0
            for name in (try? directoryEntries(path)) ?? [] { total += walk(path + "/" + name) }
            return total
        }
        return walk(path)
    }

    /// Deletes `path` and, for a directory, everything below it, without
    /// following symbolic links. What cannot be deleted is left.
    package static func removeTree(_ path: String) {
        guard let status = try? status(path, followingSymbolicLinks: false) else { return }
        if status.isDirectory {
            for name in (try? directoryEntries(path)) ?? [] { removeTree(path + "/" + name) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }

    /// `readlink(2)`; nil when `path` is not a readable symbolic link.
    package static func symbolicLinkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
