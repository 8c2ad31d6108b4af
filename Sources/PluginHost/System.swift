// The one seam through which PluginHost calls C. Every function here wraps one
// libc call, turns its return code into a Swift value or a thrown `Errno`, and
// retries EINTR where that is the right thing to do. Nothing else in the module
// calls Glibc's file, dl* or clock functions directly.
import Glibc

/// An `errno` value from a failed C call.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    /// The raw `errno` number.
    public let rawValue: Int32

    /// Wraps an `errno` number.
    public init(_ rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The current thread's `errno`.
    static var current: Errno { Errno(errno) }

    /// The C library's text for the error, through the thread-safe XSI
    /// `strerror_r`.
    public var description: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard strerror_r(rawValue, &buffer, buffer.count) == 0 else { return "errno \(rawValue)" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static let loop = Errno(ELOOP)
    static let notFound = Errno(ENOENT)
    static let exists = Errno(EEXIST)
}

/// The metadata `fstat` reports that the loader cares about.
struct FileStatus: Sendable {
    var mode: UInt32
    var owner: UInt32
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modifiedSeconds: Int64
    var modifiedNanoseconds: Int64

    var isRegularFile: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFREG) }
    var isDirectory: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFDIR) }
    /// True when the group-write or other-write permission bit is set.
    var isWritableByGroupOrOthers: Bool { mode & 0o022 != 0 }
    /// The permission bits, for messages (`0666`).
    var permissions: UInt32 { mode & 0o7777 }

    init(_ s: stat) {
        mode = UInt32(s.st_mode)
        owner = UInt32(s.st_uid)
        device = UInt64(s.st_dev)
        inode = UInt64(s.st_ino)
        size = Int64(s.st_size)
        modifiedSeconds = Int64(s.st_mtim.tv_sec)
        modifiedNanoseconds = Int64(s.st_mtim.tv_nsec)
    }
}

enum System {
    /// `openat(2)`, retrying EINTR.
    static func openAt(_ directory: Int32, _ path: String, flags: Int32, mode: mode_t = 0) throws(Errno) -> Int32 {
        while true {
            let fd = Glibc.openat(directory, path, flags, mode)
            if fd >= 0 { return fd }
            if errno != EINTR { throw Errno.current }
        }
    }

    /// `open(2)`, retrying EINTR.
    static func open(_ path: String, flags: Int32, mode: mode_t = 0) throws(Errno) -> Int32 {
        try openAt(AT_FDCWD, path, flags: flags, mode: mode)
    }

    /// `close(2)`. EINTR is not retried: on Linux the descriptor is gone either way.
    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// `fstat(2)`.
    static func fstat(_ fd: Int32) throws(Errno) -> FileStatus {
        var s = stat()
        guard Glibc.fstat(fd, &s) == 0 else { throw Errno.current }
        return FileStatus(s)
    }

    /// `fstatat(2)` with `AT_SYMLINK_NOFOLLOW`: the entry itself, not what it points at.
    static func lstat(_ path: String) throws(Errno) -> FileStatus {
        var s = stat()
        guard Glibc.fstatat(AT_FDCWD, path, &s, AT_SYMLINK_NOFOLLOW) == 0 else { throw Errno.current }
        return FileStatus(s)
    }

    /// The names in a directory, through `fdopendir(3)`/`readdir(3)` on a
    /// duplicate of `fd` (so the caller's descriptor stays open). `.` and `..`
    /// are left out.
    static func directoryEntries(_ fd: Int32) throws(Errno) -> [String] {
        let copy = Glibc.fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw Errno.current }
        guard let dir = Glibc.fdopendir(copy) else {
            let e = Errno.current
            Glibc.close(copy)
            throw e
        }
        defer { Glibc.closedir(dir) }
        Glibc.rewinddir(dir)
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = Glibc.readdir(dir) else {
                if errno != 0 { throw Errno.current }
                break
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// `write(2)` of the whole buffer, retrying EINTR and short writes.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                Glibc.write(fd, raw.baseAddress.map { $0 + offset }, bytes.count - offset)
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw Errno.current
            }
            offset += n
        }
    }

    /// `read(2)` until end of file, retrying EINTR; at most `limit` bytes.
    static func readAll(_ fd: Int32, limit: Int) throws(Errno) -> [UInt8] {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while result.count < limit {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Errno.current
            }
            if n == 0 { break }
            result.append(contentsOf: chunk[0..<n])
        }
        return Array(result.prefix(limit))
    }

    /// `unlinkat(2)`.
    static func unlink(_ directory: Int32, _ name: String) throws(Errno) {
        guard Glibc.unlinkat(directory, name, 0) == 0 else { throw Errno.current }
    }

    /// `mkdir(2)`; an existing directory is not an error.
    static func makeDirectory(_ path: String, mode: mode_t) throws(Errno) {
        if Glibc.mkdir(path, mode) != 0 && errno != EEXIST { throw Errno.current }
    }

    /// `ftruncate(2)`.
    static func truncate(_ fd: Int32, to length: Int) throws(Errno) {
        guard Glibc.ftruncate(fd, off_t(length)) == 0 else { throw Errno.current }
    }

    /// `flock(2)` with `LOCK_EX|LOCK_NB`: fails with EWOULDBLOCK when another
    /// open file description holds it.
    static func lockExclusively(_ fd: Int32) throws(Errno) {
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { throw Errno.current }
    }

    /// `mmap(2)` of the first `length` bytes, read-write, `MAP_SHARED`.
    static func mapShared(_ fd: Int32, length: Int) throws(Errno) -> UnsafeMutableRawPointer {
        guard let p = Glibc.mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), p != MAP_FAILED else {
            throw Errno.current
        }
        return p
    }

    /// `munmap(2)`.
    static func unmap(_ p: UnsafeMutableRawPointer, length: Int) {
        _ = Glibc.munmap(p, length)
    }

    /// `geteuid(2)`.
    static var effectiveUserID: UInt32 { UInt32(Glibc.geteuid()) }

    /// `getpid(2)`.
    static var processID: Int32 { Glibc.getpid() }

    /// `clock_gettime(CLOCK_REALTIME)` in microseconds since the epoch.
    static var wallClockMicroseconds: Int64 {
        var ts = timespec()
        Glibc.clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }

    /// `clock_gettime(CLOCK_MONOTONIC)` in nanoseconds.
    static var monotonicNanoseconds: UInt64 {
        var ts = timespec()
        Glibc.clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// `dlopen(3)`. On failure returns the `dlerror(3)` text.
    static func dlopen(_ path: String, flags: Int32) -> Result<UnsafeMutableRawPointer, DynamicLoaderError> {
        _ = Glibc.dlerror()
        if let handle = Glibc.dlopen(path, flags) { return .success(handle) }
        return .failure(DynamicLoaderError(message: lastDynamicLoaderError))
    }

    /// `fcntl(F_DUPFD_CLOEXEC)`: a copy of `fd` numbered above `fd`.
    static func duplicateAbove(_ fd: Int32) throws(Errno) -> Int32 {
        let copy = Glibc.fcntl(fd, F_DUPFD_CLOEXEC, fd + 1)
        guard copy >= 0 else { throw Errno.current }
        return copy
    }

    /// `dlsym(3)`: nil when the symbol does not exist.
    static func dlsym(_ handle: UnsafeMutableRawPointer, _ symbol: String) -> UnsafeMutableRawPointer? {
        _ = Glibc.dlerror()
        return Glibc.dlsym(handle, symbol)
    }

    /// `dlerror(3)`, or a fixed text when it has nothing to say.
    private static var lastDynamicLoaderError: String {
        guard let text = Glibc.dlerror() else { return "unknown dynamic loader error" }
        return String(cString: text)
    }

    /// `pthread_sigmask(3)`: blocks every signal for the calling thread except
    /// `unblocked`. Throws the error it returns.
    static func blockSignals(except unblocked: [Int32]) throws(Errno) {
        var mask = sigset_t()
        sigfillset(&mask)
        for signal in unblocked { sigdelset(&mask, signal) }
        let rc = Glibc.pthread_sigmask(SIG_SETMASK, &mask, nil)
        guard rc == 0 else { throw Errno(rc) }
    }

    /// `pthread_setname_np(3)` for the calling thread. Glibc declares it only
    /// under `_GNU_SOURCE`, which Swift's Glibc module does not set, so it is
    /// looked up once with `dlsym(RTLD_DEFAULT)`. A name longer than 15 bytes
    /// is refused by the kernel; nothing happens then.
    static func setCurrentThreadName(_ name: String) {
        guard let setName = threadNameFunction else { return }
        _ = setName(pthread_self(), name)
    }

    private typealias SetThreadName = @convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32
    private static let threadNameFunction: SetThreadName? = {
        guard let symbol = Glibc.dlsym(nil, "pthread_setname_np") else { return nil }
        return unsafeBitCast(symbol, to: SetThreadName.self)
    }()

    /// `gmtime_r(3)` formatted as RFC 3339 UTC with second precision.
    static func rfc3339(microseconds: Int64) -> String {
        var seconds = time_t(microseconds / 1_000_000)
        var parts = tm()
        guard Glibc.gmtime_r(&seconds, &parts) != nil else { return "@\(microseconds / 1_000_000)" }
        func pad(_ v: Int32, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))Z"
    }
}

/// A failure reported by `dlopen(3)`, with `dlerror(3)`'s text.
struct DynamicLoaderError: Error, Sendable {
    var message: String
}
