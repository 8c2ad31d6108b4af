import Glibc

/// A bound `AF_UNIX` datagram socket standing in for systemd's notification
/// socket: flowd, started with `NOTIFY_SOCKET` set to ``path``, sends
/// `READY=1` here once it owns its bus name.
final class NotifySocket {
    let path: String
    private var fd: Int32

    /// Binds a datagram socket at `path` (`socket`, `bind`).
    init(path: String) throws(BenchError) {
        self.path = path
        unlink(path)
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .setup("socket: \(Posix.lastError)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            Glibc.close(fd)
            throw .setup("the notification socket path \(path) is longer than \(capacity - 1) bytes; use a shorter --dir")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else {
            let message = Posix.lastError
            Glibc.close(fd)
            throw .setup("bind \(path): \(message)")
        }
    }

    deinit { close() }

    /// Closes the socket and removes its file. Safe to call more than once.
    func close() {
        guard fd >= 0 else { return }
        Glibc.close(fd)
        fd = -1
        unlink(path)
    }

    /// Drops every datagram already queued.
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT)) > 0 {}
    }

    /// Waits until a datagram holding the line `READY=1` arrives and returns
    /// the monotonic time (ns) it was received; nil when `stillWaiting`
    /// returns false (the process died) or after `timeoutMilliseconds`.
    func waitForReady(timeoutMilliseconds: Int, stillWaiting: () -> Bool) -> UInt64? {
        let deadline = Posix.monotonicNanoseconds() + UInt64(timeoutMilliseconds) * 1_000_000
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Posix.monotonicNanoseconds() < deadline {
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, 50)
            if ready > 0 {
                let n = recv(fd, &buffer, buffer.count, 0)
                let received = Posix.monotonicNanoseconds()
                if n > 0 {
                    let text = String(decoding: buffer[0..<n], as: UTF8.self)
                    if text.split(separator: "\n").contains("READY=1") { return received }
                }
                continue
            }
            if !stillWaiting() { return nil }
        }
        return nil
    }
}
