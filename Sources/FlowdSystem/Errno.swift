import Glibc

/// A POSIX error number, as a failed system call leaves it in `errno` (or
/// returns it, for the `pthread_*` and `posix_spawn` families).
///
/// The one errno type of the package, in the style of swift-system's
/// `Errno`: named by what the error means, with the C constant in each doc
/// comment, and described with the C library's text (`strerror_r`, which is
/// thread-safe) for people.
package struct Errno: Error, RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The raw `errno` value.
    package let rawValue: Int32

    /// Wraps a raw `errno` value.
    package init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The calling thread's current `errno`.
    package static var current: Errno { Errno(rawValue: errno) }

    /// The C library's message for this error (the XSI `strerror_r`).
    package var description: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard strerror_r(rawValue, &buffer, buffer.count) == 0 else { return "errno \(rawValue)" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Operation not permitted. The corresponding C error is `EPERM`.
    package static let notPermitted = Errno(rawValue: EPERM)
    /// No such file or directory. The corresponding C error is `ENOENT`.
    package static let noSuchFileOrDirectory = Errno(rawValue: ENOENT)
    /// Interrupted system call: a signal arrived first. The corresponding C
    /// error is `EINTR`; ``SystemCall`` retries it.
    package static let interrupted = Errno(rawValue: EINTR)
    /// Bad file descriptor. The corresponding C error is `EBADF`.
    package static let badFileDescriptor = Errno(rawValue: EBADF)
    /// Resource temporarily unavailable: a non-blocking call would block.
    /// The corresponding C error is `EAGAIN` (also `EWOULDBLOCK`).
    package static let wouldBlock = Errno(rawValue: EAGAIN)
    /// Permission denied. The corresponding C error is `EACCES`.
    package static let permissionDenied = Errno(rawValue: EACCES)
    /// File exists. The corresponding C error is `EEXIST`.
    package static let fileExists = Errno(rawValue: EEXIST)
    /// Not a directory. The corresponding C error is `ENOTDIR`.
    package static let notADirectory = Errno(rawValue: ENOTDIR)
    /// Invalid argument. The corresponding C error is `EINVAL`.
    package static let invalidArgument = Errno(rawValue: EINVAL)
    /// Text file busy: an executable is open for writing. The corresponding
    /// C error is `ETXTBSY`.
    package static let textFileBusy = Errno(rawValue: ETXTBSY)
    /// Too many levels of symbolic links, also what `O_NOFOLLOW` reports for
    /// a symbolic link. The corresponding C error is `ELOOP`.
    package static let tooManySymbolicLinks = Errno(rawValue: ELOOP)
    /// Timed out. The corresponding C error is `ETIMEDOUT`.
    package static let timedOut = Errno(rawValue: ETIMEDOUT)
    /// The peer of a socket went away with data unread.
    package static let connectionReset = Errno(rawValue: ECONNRESET)
}
