import CFlowdSystem
import Glibc
import Synchronization

/// How to open a file: the `O_*` flags of `open(2)`. `O_CLOEXEC` is always
/// added, so no descriptor leaks into a child process spawned meanwhile.
package struct OpenFlags: OptionSet, Sendable, Hashable {
    package let rawValue: Int32
    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// `O_RDONLY` (no bit: the absence of write access).
    package static let readOnly: OpenFlags = []
    /// `O_WRONLY`.
    package static let writeOnly = OpenFlags(rawValue: O_WRONLY)
    /// `O_RDWR`.
    package static let readWrite = OpenFlags(rawValue: O_RDWR)
    /// `O_CREAT`.
    package static let create = OpenFlags(rawValue: O_CREAT)
    /// `O_EXCL`: with ``create``, fail when the file exists.
    package static let exclusive = OpenFlags(rawValue: O_EXCL)
    /// `O_TRUNC`.
    package static let truncate = OpenFlags(rawValue: O_TRUNC)
    /// `O_APPEND`.
    package static let append = OpenFlags(rawValue: O_APPEND)
    /// `O_NOFOLLOW`: a symbolic link fails with ``Errno/tooManySymbolicLinks``.
    package static let noFollow = OpenFlags(rawValue: O_NOFOLLOW)
    /// `O_NONBLOCK`: also keeps opening a FIFO from hanging.
    package static let nonBlocking = OpenFlags(rawValue: O_NONBLOCK)
    /// `O_DIRECTORY`: fail unless it is a directory.
    package static let directory = OpenFlags(rawValue: O_DIRECTORY)
    /// `O_NOCTTY`: a terminal does not become the controlling terminal.
    package static let noControllingTerminal = OpenFlags(rawValue: O_NOCTTY)
}

/// An open file descriptor that this object owns: it is closed when the
/// object goes away, or earlier with ``close()``.
///
/// A class, not a `~Copyable` struct with a consuming `close`: descriptors
/// are shared with the threads that read them (a child's output, a
/// notification socket), captured by cancellation handlers and kept in
/// optionals and arrays, none of which Swift's noncopyable types allow
/// without ceremony; and one allocation is nothing next to the `open(2)`.
/// The number is an atomic, so ``close()`` from one thread and a read of
/// ``rawValue`` from another are no data race (the read then sees -1).
package final class FileDescriptor: Sendable, CustomStringConvertible {
    private let raw: Atomic<Int32>

    /// Takes ownership of `fd`.
    package init(owning fd: Int32) {
        raw = Atomic(fd)
    }

    deinit {
        close()
    }

    /// The number, or -1 once closed or released.
    package var rawValue: Int32 { raw.load(ordering: .acquiring) }

    /// True until ``close()`` or ``release()``.
    package var isOpen: Bool { rawValue >= 0 }

    package var description: String { "fd \(rawValue)" }

    /// `close(2)`; later calls do nothing. Errors are ignored and `EINTR` is
    /// not retried: on Linux the number is released either way, and a retry
    /// could close a descriptor another thread just opened.
    package func close() {
        let fd = raw.exchange(-1, ordering: .acquiringAndReleasing)
        if fd >= 0 { _ = Glibc.close(fd) }
    }

    /// Gives up ownership without closing; the caller owns the number now.
    package func release() -> Int32 {
        raw.exchange(-1, ordering: .acquiringAndReleasing)
    }

    // MARK: opening

    /// `open(2)` (`openat(2)` relative to `directory`), close-on-exec.
    package static func open(
        _ path: String, _ flags: OpenFlags, mode: UInt32 = 0, relativeTo directory: FileDescriptor? = nil
    ) throws(SystemCallError) -> FileDescriptor {
        let base = directory?.rawValue ?? AT_FDCWD
        let fd = try SystemCall.check("open", path: path) {
            openat(base, path, flags.rawValue | O_CLOEXEC, mode_t(mode))
        }
        return FileDescriptor(owning: fd)
    }

    /// `pipe2(2)` with `O_CLOEXEC`: a pipe no concurrently spawned child inherits.
    package static func pipe() throws(SystemCallError) -> (read: FileDescriptor, write: FileDescriptor) {
        var fds: [Int32] = [-1, -1]
        _ = try SystemCall.check("pipe2") { pipe2(&fds, O_CLOEXEC) }
        return (FileDescriptor(owning: fds[0]), FileDescriptor(owning: fds[1]))
    }

    /// `socketpair(2)` of two connected `AF_UNIX` stream sockets, close-on-exec.
    package static func socketPair() throws(SystemCallError) -> (FileDescriptor, FileDescriptor) {
        var fds: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        _ = try SystemCall.check("socketpair") { socketpair(AF_UNIX, type, 0, &fds) }
        return (FileDescriptor(owning: fds[0]), FileDescriptor(owning: fds[1]))
    }

    /// `fcntl(F_DUPFD_CLOEXEC)`: a new descriptor for the same open file,
    /// numbered `minimum` or higher.
    package func duplicate(minimum: Int32 = 0) throws(SystemCallError) -> FileDescriptor {
        let fd = rawValue
        return FileDescriptor(owning: try SystemCall.check("fcntl(F_DUPFD_CLOEXEC)") { fcntl(fd, F_DUPFD_CLOEXEC, minimum) })
    }

    // MARK: reading and writing

    /// One `read(2)` into the start of `buffer`; the count read, 0 at end of
    /// file. A non-blocking descriptor with nothing to read throws
    /// ``Errno/wouldBlock``.
    package func read(into buffer: inout [UInt8]) throws(SystemCallError) -> Int {
        try Self.read(from: rawValue, into: &buffer)
    }

    /// ``read(into:)`` from a descriptor this process does not own (0).
    package static func read(from fd: Int32, into buffer: inout [UInt8]) throws(SystemCallError) -> Int {
        let result = buffer.withUnsafeMutableBytes { raw in
            SystemCall.valueOrErrno { Glibc.read(fd, raw.baseAddress, raw.count) }
        }
        switch result {
        case .success(let count): return count
        case .failure(let error): throw SystemCallError("read", errno: error)
        }
    }

    /// `read(2)` until end of file. More than `limit` bytes throws
    /// ``FileReadError/tooLarge(path:limit:)`` naming `path` (one byte more is
    /// read to tell, never the whole of a huge file).
    package func readToEnd(limit: Int, path: String) throws(FileReadError) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while bytes.count <= limit {
            let count: Int
            do {
                count = try read(into: &chunk)
            } catch {
                throw .system(SystemCallError(error.call, path: path, errno: error.errno))
            }
            if count == 0 { return bytes }
            bytes += chunk[0..<count]
        }
        throw .tooLarge(path: path, limit: limit)
    }

    /// One `write(2)` of as much of `bytes` as the descriptor takes now;
    /// the count written. A full non-blocking pipe throws ``Errno/wouldBlock``.
    package func write(someOf bytes: ArraySlice<UInt8>) throws(SystemCallError) -> Int {
        let fd = rawValue
        let result = bytes.withUnsafeBytes { raw in
            SystemCall.valueOrErrno { Glibc.write(fd, raw.baseAddress, raw.count) }
        }
        switch result {
        case .success(let count): return count
        case .failure(let error): throw SystemCallError("write", errno: error)
        }
    }

    /// `write(2)` of all of `bytes`, through short writes.
    package func writeAll(_ bytes: some Collection<UInt8>) throws(SystemCallError) {
        try Self.writeAll(rawValue, bytes)
    }

    /// ``writeAll(_:)`` to a descriptor this process does not own (1, 2).
    package static func writeAll(_ fd: Int32, _ bytes: some Collection<UInt8>) throws(SystemCallError) {
        let buffer = Array(bytes)
        var offset = 0
        while offset < buffer.count {
            let result = buffer.withUnsafeBytes { raw in
                SystemCall.valueOrErrno { Glibc.write(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset) }
            }
            switch result {
            case .success(let count): offset += count
            case .failure(let error): throw SystemCallError("write", errno: error)
            }
        }
    }

    /// Writes `text` to standard error as one `write(2)` (so lines from
    /// different threads do not interleave); failures are dropped, since
    /// there is nobody left to tell.
    package static func printError(_ text: String) {
        try? writeAll(2, Array((text + "\n").utf8))
    }

    // MARK: the open file

    /// `fstat(2)`.
    package func status() throws(SystemCallError) -> FileStatus {
        try Self.status(of: rawValue)
    }

    /// `fstat(2)` of a descriptor this process does not own (2, for example).
    package static func status(of fd: Int32) throws(SystemCallError) -> FileStatus {
        var s = stat()
        _ = try SystemCall.check("fstat") { fstat(fd, &s) }
        return FileStatus(s)
    }

    /// How much of what was sent on socket `fd` its peer has not read yet
    /// (`ioctl(SIOCOUTQ)`): zero once the peer has read all of it. The count
    /// is the kernel's accounting of the queued buffers, not a byte count.
    /// Fails (`ENOTTY`, `EINVAL`) for a descriptor that is no socket.
    package static func unreadByPeer(_ fd: Int32) throws(SystemCallError) -> Int {
        var queued: Int32 = 0
        _ = try SystemCall.check("ioctl(SIOCOUTQ)") { ioctl(fd, UInt(TIOCOUTQ), &queued) }
        return Int(queued)
    }

    /// `fsync(2)`: the data and metadata are on disk.
    package func sync() throws(SystemCallError) {
        let fd = rawValue
        _ = try SystemCall.check("fsync") { fsync(fd) }
    }

    /// `fchmod(2)`.
    package func changeMode(_ mode: UInt32) throws(SystemCallError) {
        let fd = rawValue
        _ = try SystemCall.check("fchmod") { fchmod(fd, mode_t(mode)) }
    }

    /// `ftruncate(2)`.
    package func truncate(to length: Int) throws(SystemCallError) {
        let fd = rawValue
        _ = try SystemCall.check("ftruncate") { ftruncate(fd, off_t(length)) }
    }

    /// `flock(2)` with `LOCK_EX|LOCK_NB`: fails with ``Errno/wouldBlock`` when
    /// another open file description holds the lock.
    package func lockExclusively() throws(SystemCallError) {
        let fd = rawValue
        _ = try SystemCall.check("flock") { flock(fd, LOCK_EX | LOCK_NB) }
    }

    /// `fcntl(F_SETFL)` adding `O_NONBLOCK`.
    package func setNonBlocking() throws(SystemCallError) {
        let fd = rawValue
        let flags = try SystemCall.check("fcntl(F_GETFL)") { fcntl(fd, F_GETFL) }
        _ = try SystemCall.check("fcntl(F_SETFL)") { fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
    }

    /// `mmap(2)` of the first `length` bytes, read-write and `MAP_SHARED`.
    /// Unmap with ``unmap(_:length:)``.
    package func mapShared(length: Int) throws(SystemCallError) -> UnsafeMutableRawPointer {
        guard let p = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, rawValue, 0), p != MAP_FAILED else {
            throw SystemCallError("mmap", errno: .current)
        }
        return p
    }

    /// `munmap(2)`.
    package static func unmap(_ pointer: UnsafeMutableRawPointer, length: Int) {
        _ = munmap(pointer, length)
    }

    /// The names in this directory, without `.` and `..` (`fdopendir(3)` and
    /// `readdir(3)` on a duplicate, so this descriptor stays open).
    package func directoryEntries() throws(SystemCallError) -> [String] {
        let copy = try duplicate()
        guard let dir = fdopendir(copy.rawValue) else { throw SystemCallError("fdopendir", errno: .current) }
        _ = copy.release()  // closedir closes it now
        defer { closedir(dir) }
        rewinddir(dir)
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(dir) else {
                if errno != 0 { throw SystemCallError("readdir", errno: .current) }
                return names
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
    }

    /// `unlinkat(2)` of `name` in this directory.
    package func removeEntry(_ name: String) throws(SystemCallError) {
        let fd = rawValue
        _ = try SystemCall.check("unlink", path: name) { unlinkat(fd, name, 0) }
    }

    /// `renameat(2)` of `name` to `newName`, both in this directory.
    package func renameEntry(_ name: String, to newName: String) throws(SystemCallError) {
        let fd = rawValue
        _ = try SystemCall.check("rename", path: newName) { renameat(fd, name, fd, newName) }
    }

    /// `isatty(3)`.
    package var isTerminal: Bool { isatty(rawValue) == 1 }
}
