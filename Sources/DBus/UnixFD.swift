import Glibc

/// A file descriptor carried in a message (`h`), owned by this object and
/// closed when it is released.
public final class UnixFD: @unchecked Sendable, Hashable {
    /// The owned descriptor; valid while this object lives.
    public let fileDescriptor: Int32

    /// Takes ownership of `fd` (libdbus hands out duplicates the reader owns).
    init(adopting fd: Int32) {
        fileDescriptor = fd
    }

    /// Duplicates `fd` (close-on-exec); the caller keeps its own descriptor.
    public init(duplicating fd: Int32) throws(DBusError) {
        let copy = LibC.duplicate(fd)
        guard copy >= 0 else { throw .invalidArgs("cannot duplicate file descriptor \(fd): errno \(LibC.errnoValue)") }
        fileDescriptor = copy
    }

    deinit {
        LibC.close(fileDescriptor)
    }

    /// A new duplicate for the caller to own and close.
    public func duplicate() -> Int32 {
        LibC.duplicate(fileDescriptor)
    }

    public static func == (lhs: UnixFD, rhs: UnixFD) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// The few C library calls of this module that are not libdbus.
enum LibC {
    /// `fcntl(F_DUPFD_CLOEXEC)`.
    static func duplicate(_ fd: Int32) -> Int32 { fcntl(fd, F_DUPFD_CLOEXEC, 0) }
    /// `close(2)`.
    static func close(_ fd: Int32) { _ = Glibc.close(fd) }
    /// The calling thread's `errno`.
    static var errnoValue: Int32 { errno }
    /// Writes one line to stderr (`write(2)`), the default log sink.
    static func printError(_ line: String) {
        var text = line + "\n"
        text.withUTF8 { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    }
}
