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
        let copy = LibDBus.duplicate(fd)
        guard copy >= 0 else { throw .invalidArgs("cannot duplicate file descriptor \(fd): errno \(LibDBus.errnoValue)") }
        fileDescriptor = copy
    }

    deinit {
        LibDBus.closeFD(fileDescriptor)
    }

    /// A new duplicate for the caller to own and close.
    public func duplicate() -> Int32 {
        LibDBus.duplicate(fileDescriptor)
    }

    public static func == (lhs: UnixFD, rhs: UnixFD) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
