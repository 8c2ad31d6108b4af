import Foundation
import Glibc

/// A stand-in for systemd's notification socket: a bound `AF_UNIX` datagram
/// socket whose path a test puts in a child's `NOTIFY_SOCKET`, so that the
/// child's `sd_notify(3)` messages (`READY=1`, `STATUS=…`, `STOPPING=1`,
/// `WATCHDOG=1`) can be read and checked.
///
/// A reader thread drains the socket all the time, as systemd does: the
/// kernel queues only a few datagrams per socket
/// (`/proc/sys/net/unix/max_dgram_qlen`, often 10), and a sender whose
/// datagrams are not read blocks in `sendmsg`. Waiting never polls: the
/// reader wakes the waiters.
public final class NotifySocket: @unchecked Sendable {
    /// The socket's path, for `NOTIFY_SOCKET`.
    public let path: String
    private let descriptor: Int32
    /// Written once by ``close()`` to wake the reader thread.
    private let wakeUp: [Int32]
    /// What the reader thread shares with the waiters. The thread holds
    /// this, not the socket, so that dropping the socket closes it.
    private final class Inbox: @unchecked Sendable {
        let condition = NSCondition()
        var received: [String] = []
        var closed = false
        let readerDone = Latch()
    }

    private let inbox = Inbox()
    private var condition: NSCondition { inbox.condition }
    private var received: [String] { inbox.received }

    /// Binds a new socket at `path` (at most 107 bytes; an existing file
    /// there is replaced) and starts reading.
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
        var pair: [Int32] = [-1, -1]
        guard bound == 0, socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw TestSupportError("cannot set up the notify socket \(path): \(reason)")
        }
        self.path = path
        descriptor = fd
        wakeUp = pair
        let inbox = self.inbox
        let wakeRead = pair[0]
        let thread = Thread { Self.readLoop(descriptor: fd, wakeUp: wakeRead, inbox: inbox) }
        thread.start()
    }

    deinit {
        close()
    }

    /// Stops reading and closes the socket; later waits see only what was
    /// received before. Safe to call more than once.
    public func close() {
        condition.lock()
        let wasClosed = inbox.closed
        inbox.closed = true
        condition.broadcast()
        condition.unlock()
        guard !wasClosed else { return }
        var byte: UInt8 = 1
        _ = write(wakeUp[1], &byte, 1)
        _ = inbox.readerDone.wait(timeout: .seconds(10))
        Glibc.close(descriptor)
        Glibc.close(wakeUp[0])
        Glibc.close(wakeUp[1])
        unlink(path)
    }

    private static func readLoop(descriptor: Int32, wakeUp: Int32, inbox: Inbox) {
        defer { inbox.readerDone.countDown() }
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            var entries = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: wakeUp, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&entries, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if entries[1].revents != 0 { return }
            guard entries[0].revents != 0 else { continue }
            let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                return
            }
            let text = String(decoding: buffer[0..<count], as: UTF8.self)
            inbox.condition.lock()
            inbox.received.append(text)
            inbox.condition.broadcast()
            inbox.condition.unlock()
        }
    }

    /// Every datagram received so far, oldest first.
    public var messages: [String] {
        condition.lock()
        defer { condition.unlock() }
        return received
    }

    /// Every `NAME=value` assignment received so far, in order (one datagram
    /// may carry several, one per line).
    public var assignments: [(name: String, value: String)] {
        Self.assignments(in: messages)
    }

    private static func assignments(in messages: [String]) -> [(name: String, value: String)] {
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

    /// Waits until `predicate` holds for what was received, or `timeout`
    /// passes. Returns whether it holds.
    @discardableResult
    public func wait(timeout: Duration = .seconds(20), until predicate: (NotifySocket) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout.timeInterval)
        condition.lock()
        while true {
            let seen = received.count
            let isClosed = inbox.closed
            // The predicate reads through the public accessors, which lock.
            condition.unlock()
            if predicate(self) { return true }
            condition.lock()
            if received.count != seen { continue }
            if isClosed { break }
            if !condition.wait(until: deadline) { break }
        }
        condition.unlock()
        return predicate(self)
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
}
