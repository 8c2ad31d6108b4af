import Glibc

/// What `poll(2)` waits for, or reports, on one descriptor.
package struct PollEvents: OptionSet, Sendable, Hashable {
    package let rawValue: Int16
    package init(rawValue: Int16) { self.rawValue = rawValue }

    /// `POLLIN`: there is something to read (or the end of the stream).
    package static let readable = PollEvents(rawValue: Int16(POLLIN))
    /// `POLLOUT`: a write would not block.
    package static let writable = PollEvents(rawValue: Int16(POLLOUT))
    /// `POLLERR` (reported only).
    package static let error = PollEvents(rawValue: Int16(POLLERR))
    /// `POLLHUP`: the other end closed (reported only).
    package static let hangUp = PollEvents(rawValue: Int16(POLLHUP))
}

/// `poll(2)`: waits until one of several descriptors is ready, for code
/// that does not run on the event loop (a plugin feeding a child process).
package enum Poll {
    /// Waits up to `timeout` (nil: no limit) until one of `requests` is
    /// ready; returns what happened on each, in order (all empty on timeout).
    package static func wait(
        _ requests: [(descriptor: Int32, events: PollEvents)], timeout: Duration?
    ) throws(SystemCallError) -> [PollEvents] {
        var entries = requests.map { pollfd(fd: $0.descriptor, events: $0.events.rawValue, revents: 0) }
        let milliseconds = timeout.map { Int32(clamping: ($0.nonNegativeNanoseconds + 999_999) / 1_000_000) } ?? -1
        _ = try SystemCall.check("poll") { poll(&entries, nfds_t(entries.count), milliseconds) }
        return entries.map { PollEvents(rawValue: $0.revents) }
    }
}
