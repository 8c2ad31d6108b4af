import Glibc

/// Where an `AF_UNIX` stream socket listens: a file, or a name in the
/// abstract namespace (Linux; no file, gone with its listener).
package enum UnixSocketAddress: Sendable, Hashable, CustomStringConvertible {
    case path(String)
    case abstract(String)

    package var description: String {
        switch self {
        case .path(let path): return path
        case .abstract(let name): return "@\(name)"
        }
    }
}

extension FileDescriptor {
    /// `socket(2)` + `connect(2)`: a close-on-exec `AF_UNIX` stream socket
    /// connected to `address` (the path or name at most 107 bytes). The
    /// socket blocks; ``sendSome(_:_:)`` and ``receiveSome(_:into:maximumFDs:)``
    /// never do (`MSG_DONTWAIT`).
    package static func connectUnixStream(to address: UnixSocketAddress) throws(SystemCallError) -> FileDescriptor {
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: socketAddress.sun_path)
        let name: [UInt8]
        let length: Int
        switch address {
        case .path(let path):
            name = Array(path.utf8)
            guard !name.isEmpty, name.count < capacity, !name.contains(0) else {
                throw SystemCallError("connect", path: address.description, errno: .invalidArgument)
            }
            length = MemoryLayout<sa_family_t>.size + name.count + 1
        case .abstract(let abstract):
            name = [0] + Array(abstract.utf8)
            guard name.count <= capacity else {
                throw SystemCallError("connect", path: address.description, errno: .invalidArgument)
            }
            length = MemoryLayout<sa_family_t>.size + name.count
        }
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { raw in raw.copyBytes(from: name) }
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = FileDescriptor(owning: try SystemCall.check("socket") { socket(AF_UNIX, type, 0) })
        _ = try SystemCall.check("connect", path: address.description) {
            withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd.rawValue, $0, socklen_t(length)) }
            }
        }
        return fd
    }
}
