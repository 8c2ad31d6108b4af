import Glibc

/// An open file descriptor that this object owns.
///
/// `close()` may be called any number of times; the descriptor is also closed
/// when the object goes away.
final class FileDescriptor {
    private var fd: Int32

    /// Takes ownership of `fd`.
    init(owning fd: Int32) {
        self.fd = fd
    }

    /// Opens `path` with `open(2)`.
    convenience init(path: String, flags: Int32, mode: mode_t = 0) throws(Errno) {
        self.init(owning: try System.open(path, flags: flags | O_CLOEXEC, mode: mode))
    }

    /// Opens `name` relative to `directory` with `openat(2)`.
    convenience init(in directory: FileDescriptor, name: String, flags: Int32, mode: mode_t = 0) throws(Errno) {
        self.init(owning: try System.openAt(directory.rawValue, name, flags: flags | O_CLOEXEC, mode: mode))
    }

    deinit {
        close()
    }

    /// The raw descriptor, or -1 once closed.
    var rawValue: Int32 { fd }

    /// `fstat(2)` of the descriptor.
    func status() throws(Errno) -> FileStatus {
        try System.fstat(fd)
    }

    /// Closes the descriptor (`close(2)`); later calls do nothing.
    func close() {
        guard fd >= 0 else { return }
        System.close(fd)
        fd = -1
    }

    /// Replaces the descriptor with a copy numbered higher (`fcntl(2)`
    /// `F_DUPFD_CLOEXEC`) and closes the old number.
    func moveToHigherNumber() throws(Errno) {
        let copy = try System.duplicateAbove(fd)
        System.close(fd)
        fd = copy
    }

    /// Gives up ownership without closing and returns the raw descriptor; the
    /// caller now owns it.
    func release() -> Int32 {
        let raw = fd
        fd = -1
        return raw
    }
}
