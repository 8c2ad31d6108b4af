import CReactor

/// A POSIX error number, as returned in `errno` by a failed system call.
///
/// A small typed wrapper in the style of swift-system's `Errno`: it keeps the raw
/// code for comparisons and renders the C library's message for people.
public struct Errno: Error, RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The raw `errno` value.
    public let rawValue: Int32

    /// Wraps a raw `errno` value.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The calling thread's current `errno`.
    static var current: Errno { Errno(rawValue: Syscall.errnoValue) }

    /// The C library's message for this error (`strerror`; glibc keeps it per thread).
    public var description: String {
        Syscall.errorMessage(rawValue)
    }

    /// Interrupted system call.
    public static let interrupted = Errno(rawValue: EINTR)
    /// Resource temporarily unavailable (also `EWOULDBLOCK`).
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    /// Bad file descriptor.
    public static let badFileDescriptor = Errno(rawValue: EBADF)
    /// The file descriptor is already registered.
    public static let fileExists = Errno(rawValue: EEXIST)
    /// The file descriptor is not registered.
    public static let noSuchEntry = Errno(rawValue: ENOENT)
    /// The file descriptor does not support polling (for example a regular file).
    public static let notPermitted = Errno(rawValue: EPERM)
    /// An argument was invalid.
    public static let invalidArgument = Errno(rawValue: EINVAL)
    /// No such process.
    public static let noSuchProcess = Errno(rawValue: ESRCH)
}
