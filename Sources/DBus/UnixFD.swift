import FlowdSystem

/// A file descriptor carried in a message (`h`), owned by this object and
/// closed when it is released.
package final class UnixFD: Sendable, Hashable {
    private let owned: FileDescriptor

    /// Takes ownership of `fd` (libdbus hands out duplicates the reader owns).
    init(adopting fd: Int32) {
        owned = FileDescriptor(owning: fd)
    }

    /// Owns `fd` from now on.
    init(owning fd: FileDescriptor) {
        owned = fd
    }

    /// Duplicates `fd` (close-on-exec); the caller keeps its own descriptor.
    package init(duplicating fd: FileDescriptor) throws(DBusError) {
        do {
            owned = try fd.duplicate()
        } catch {
            throw .invalidArgs("cannot duplicate file descriptor \(fd.rawValue): \(error.errno)")
        }
    }

    /// The owned descriptor's number; valid while this object lives.
    package var fileDescriptor: Int32 { owned.rawValue }

    /// A new duplicate for the caller to own and close.
    package func duplicate() throws(SystemCallError) -> FileDescriptor {
        try owned.duplicate()
    }

    package static func == (lhs: UnixFD, rhs: UnixFD) -> Bool { lhs === rhs }
    package func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
