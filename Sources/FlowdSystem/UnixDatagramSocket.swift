import Glibc

/// A bound `AF_UNIX` datagram socket that receives: what systemd's
/// notification socket is, so tests and the benchmark can stand in for it.
package final class UnixDatagramSocket: Sendable {
    /// The socket's path.
    package let path: String
    private let descriptor: FileDescriptor

    /// Binds a new socket at `path` (at most 107 bytes; an existing file
    /// there is replaced).
    package init(bindingTo path: String) throws(SystemCallError) {
        let bytes = Array(path.utf8)
        var address = sockaddr_un()
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { throw SystemCallError("bind", path: path, errno: .invalidArgument) }
        let type = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = FileDescriptor(owning: try SystemCall.check("socket") { socket(AF_UNIX, type, 0) })
        unlink(path)
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
        _ = try SystemCall.check("bind", path: path) {
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd.rawValue, $0, length) }
            }
        }
        self.path = path
        descriptor = fd
    }

    deinit {
        close()
    }

    /// Waits for one datagram and returns it; empty once ``shutdown()`` was called.
    package func receive(maximumBytes: Int = 65536) throws(SystemCallError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: maximumBytes)
        let count = try descriptor.read(into: &buffer)
        return Array(buffer[0..<count])
    }

    /// `shutdown(2)`: a ``receive(maximumBytes:)`` blocked in another thread
    /// returns empty, and so does every later one.
    package func shutdown() {
        _ = Glibc.shutdown(descriptor.rawValue, Int32(SHUT_RDWR))
    }

    /// Closes the socket and removes its file. Safe to call more than once.
    package func close() {
        guard descriptor.isOpen else { return }
        descriptor.close()
        unlink(path)
    }
}
