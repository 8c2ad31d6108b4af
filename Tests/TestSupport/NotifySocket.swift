import Foundation
import Glibc

/// A stand-in for systemd's notification socket: a bound `AF_UNIX` datagram
/// socket whose path a test puts in a child's `NOTIFY_SOCKET`, so that the
/// child's `sd_notify(3)` messages (`READY=1`, `STATUS=…`, `STOPPING=1`,
/// `WATCHDOG=1`) can be read and checked.
///
/// Reading happens on the calling thread, inside ``wait(timeout:until:)``,
/// with `poll(2)` bounded by the timeout: no thread and no polling loop.
public final class NotifySocket: @unchecked Sendable {
    /// The socket's path, for `NOTIFY_SOCKET`.
    public let path: String
    private let descriptor: Int32
    private let lock = NSLock()
    private var received: [String] = []
    private var closed = false

    /// Binds a new socket at `path` (at most 107 bytes; an existing file there is replaced).
    public init(path: String) throws {
        let bytes = Array(path.utf8)
        var address = sockaddr_un()
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            throw TestSupportError("the notify socket path \(path) is longer than \(capacity - 1) bytes")
        }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("socket(AF_UNIX, SOCK_DGRAM): \(String(cString: strerror(errno)))") }
        unlink(path)
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw TestSupportError("bind \(path): \(reason)")
        }
        self.path = path
        descriptor = fd
    }

    deinit {
        close()
    }

    /// Closes the socket; later waits see only what was received before.
    public func close() {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return }
        closed = true
        Glibc.close(descriptor)
        unlink(path)
    }

    /// Every datagram received so far, oldest first.
    public var messages: [String] {
        lock.lock()
        defer { lock.unlock() }
        return received
    }

    /// Every `NAME=value` assignment received so far, in order (one datagram
    /// may carry several, one per line).
    public var assignments: [(name: String, value: String)] {
        messages.flatMap { message in
            message.split(separator: "\n").compactMap { line -> (name: String, value: String)? in
                guard let eq = line.firstIndex(of: "=") else { return nil }
                return (String(line[..<eq]), String(line[line.index(after: eq)...]))
            }
        }
    }

    /// The values of every `name=` assignment received so far, in order.
    public func values(of name: String) -> [String] {
        assignments.filter { $0.name == name }.map(\.value)
    }

    /// Reads datagrams until `predicate` holds for everything received so far,
    /// or `timeout` passes. Returns whether it holds.
    @discardableResult
    public func wait(timeout: Duration = .seconds(20), until predicate: (NotifySocket) -> Bool) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            if predicate(self) { return true }
            let remaining = clock.now.duration(to: deadline)
            guard remaining > .zero else { return false }
            guard receive(within: remaining) else { return predicate(self) }
        }
    }

    /// Waits until an assignment `name=value` with a value satisfying `match`
    /// has arrived; returns that value, or nil on timeout.
    public func waitForAssignment(
        _ name: String, timeout: Duration = .seconds(20), where match: (String) -> Bool = { _ in true }
    ) -> String? {
        var found: String?
        wait(timeout: timeout) { socket in
            found = socket.values(of: name).first(where: match)
            return found != nil
        }
        return found
    }

    /// Waits up to `timeout` for one datagram and stores it. False when none
    /// came or the socket is closed.
    private func receive(within timeout: Duration) -> Bool {
        lock.lock()
        let isClosed = closed
        lock.unlock()
        guard !isClosed else { return false }
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let (seconds, attoseconds) = timeout.components
        let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
        let ready = poll(&entry, 1, milliseconds)
        guard ready > 0 else { return ready < 0 && errno == EINTR }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        guard count > 0 else { return count < 0 && (errno == EAGAIN || errno == EINTR) }
        let text = String(decoding: buffer[0..<count], as: UTF8.self)
        lock.lock()
        received.append(text)
        lock.unlock()
        return true
    }
}
