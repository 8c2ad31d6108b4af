import FlowdSystem
import Synchronization

/// The service manager's end of `sd_notify(3)`: a bound `AF_UNIX` datagram
/// socket whose path goes into a child's `NOTIFY_SOCKET`, so that the
/// child's messages (`READY=1`, `STATUS=…`, `STOPPING=1`, `WATCHDOG=1`) can be
/// read, as systemd reads them. The benchmark times `READY=1` with it; the
/// tests check what flowd tells systemd.
///
/// A reader thread drains the socket all the time, as systemd does: the
/// kernel queues only a few datagrams per socket
/// (`/proc/sys/net/unix/max_dgram_qlen`, often 10), and a sender whose
/// datagrams are not read blocks in `sendmsg`. Waiting never polls: the
/// reader wakes the waiters.
package final class NotifySocket: Sendable {
    /// One datagram and when it arrived.
    package struct Message: Sendable, Hashable {
        /// The text: one `NAME=value` per line.
        package var text: String
        /// When the reader received it.
        package var receivedAt: MonotonicClock.Instant
    }

    private struct Inbox {
        var messages: [Message] = []
        var closed = false
    }

    /// The socket's path, for `NOTIFY_SOCKET`.
    package var path: String { socket.path }
    private let socket: UnixDatagramSocket
    private let inbox = LockedValue(Inbox())
    private let reader: SystemThread
    private let isClosed = Atomic<Bool>(false)

    /// Binds a new socket at `path` (at most 107 bytes; an existing file
    /// there is replaced) and starts reading.
    package init(path: String) throws(SystemCallError) {
        let socket = try UnixDatagramSocket(bindingTo: path)
        let inbox = self.inbox
        self.socket = socket
        reader = try SystemThread.spawn(name: "notify-socket") {
            while let bytes = try? socket.receive(), !bytes.isEmpty {
                let message = Message(text: String(decoding: bytes, as: UTF8.self), receivedAt: MonotonicClock.now())
                inbox.withLockNotifying { $0.messages.append(message) }
            }
            inbox.withLockNotifying { $0.closed = true }
        }
    }

    deinit {
        close()
    }

    /// Stops reading and closes the socket; later waits see only what was
    /// received before. Safe to call more than once.
    package func close() {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        socket.shutdown()
        reader.join()
        socket.close()
    }

    /// What arrived so far.
    package struct Received: Sendable {
        /// Every datagram, oldest first.
        package var messages: [Message]

        /// Every `NAME=value` assignment, in order (one datagram may carry
        /// several, one per line).
        package var assignments: [(name: String, value: String)] {
            messages.flatMap { message in
                message.text.split(separator: "\n").compactMap { line -> (name: String, value: String)? in
                    guard let eq = line.firstIndex(of: "=") else { return nil }
                    return (String(line[..<eq]), String(line[line.index(after: eq)...]))
                }
            }
        }

        /// The values of every `name=` assignment, in order.
        package func values(of name: String) -> [String] {
            assignments.filter { $0.name == name }.map(\.value)
        }
    }

    /// What arrived so far.
    package var received: Received { Received(messages: inbox.withLock { $0.messages }) }

    /// Every datagram received so far, oldest first.
    package var messages: [Message] { received.messages }

    /// Every `NAME=value` assignment received so far, in order.
    package var assignments: [(name: String, value: String)] { received.assignments }

    /// The values of every `name=` assignment received so far, in order.
    package func values(of name: String) -> [String] { received.values(of: name) }

    /// Forgets what was received so far.
    package func clear() {
        inbox.withLock { $0.messages = [] }
    }

    /// Waits until `predicate` holds for what was received, or `timeout`
    /// passes (or the socket closed). Returns whether it holds.
    @discardableResult
    package func wait(timeout: Duration = .seconds(20), until predicate: (Received) -> Bool) -> Bool {
        inbox.wait(timeout: timeout) { inbox in predicate(Received(messages: inbox.messages)) || inbox.closed }
        return predicate(received)
    }

    /// Waits until an assignment `name=value` with a value satisfying `match`
    /// has arrived; returns that value, or nil on timeout.
    package func waitForAssignment(
        _ name: String, timeout: Duration = .seconds(20), where match: (String) -> Bool = { _ in true }
    ) -> String? {
        var found: String?
        wait(timeout: timeout) { received in
            found = received.values(of: name).first(where: match)
            return found != nil
        }
        return found
    }

    /// Waits until a datagram holding `NAME=value` arrives and returns when
    /// it was received; nil after `timeout`.
    package func receiveTime(of name: String, _ value: String, timeout: Duration) -> MonotonicClock.Instant? {
        var received: MonotonicClock.Instant?
        wait(timeout: timeout) { all in
            received = all.messages.first { $0.text.split(separator: "\n").contains("\(name)=\(value)") }?.receivedAt
            return received != nil
        }
        return received
    }
}
