import Glibc

/// What `stat(2)` reports about a file, as much of it as the package uses.
package struct FileStatus: Sendable, Hashable {
    /// `st_mode`: the type and permission bits.
    package var mode: UInt32
    /// `st_uid`.
    package var owner: UInt32
    /// Which file it is and its version: device, inode, size, modification time.
    package var identity: FileIdentity

    init(_ s: stat) {
        mode = UInt32(s.st_mode)
        owner = UInt32(s.st_uid)
        identity = FileIdentity(
            device: UInt64(s.st_dev), inode: UInt64(s.st_ino), size: Int64(s.st_size),
            modificationTime: Int64(s.st_mtim.tv_sec) * 1_000_000_000 + Int64(s.st_mtim.tv_nsec))
    }

    /// `st_size` in bytes.
    package var size: Int64 { identity.size }
    /// `S_ISREG`.
    package var isRegularFile: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFREG) }
    /// `S_ISDIR`.
    package var isDirectory: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFDIR) }
    /// True when the group-write or other-write permission bit is set.
    package var isWritableByGroupOrOthers: Bool { mode & 0o022 != 0 }
    /// True when group or others have any permission (`mode & 0o077`).
    package var isAccessibleByGroupOrOthers: Bool { mode & 0o077 != 0 }
    /// The permission bits, for messages (`0644`).
    package var permissions: UInt32 { mode & 0o7777 }
}

/// Which file this is, and which version of it: a file replaced, rewritten or
/// touched gets another identity. The plugin loader compares these to lift a
/// quarantine once the file changed, and the session store persists them.
package struct FileIdentity: Sendable, Hashable, Codable {
    /// `st_dev`.
    package var device: UInt64
    /// `st_ino`.
    package var inode: UInt64
    /// `st_size` in bytes.
    package var size: Int64
    /// `st_mtim`, in nanoseconds since the Unix epoch.
    package var modificationTime: Int64

    /// An identity from its parts (for a store that kept them).
    package init(device: UInt64, inode: UInt64, size: Int64, modificationTime: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modificationTime = modificationTime
    }
}
