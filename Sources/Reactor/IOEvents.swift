/// The readiness a watch asks for, and what the loop reports to its handler.
///
/// Ask for ``read`` and/or ``write``. The loop always reports ``hangUp`` and
/// ``error`` to enabled watches of a file descriptor, whether asked for or not,
/// because `epoll` always reports them.
package struct IOEvents: OptionSet, Sendable, Hashable, CustomStringConvertible {
    package let rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Data can be read (`EPOLLIN`).
    package static let read = IOEvents(rawValue: 1 << 0)
    /// Data can be written (`EPOLLOUT`).
    package static let write = IOEvents(rawValue: 1 << 1)
    /// The peer hung up (`EPOLLHUP`). Reported, never requested.
    package static let hangUp = IOEvents(rawValue: 1 << 2)
    /// An error is pending on the descriptor (`EPOLLERR`). Reported, never requested.
    package static let error = IOEvents(rawValue: 1 << 3)

    package var description: String {
        let names: [(IOEvents, String)] = [(.read, "read"), (.write, "write"), (.hangUp, "hangUp"), (.error, "error")]
        return "[" + names.filter { contains($0.0) }.map(\.1).joined(separator: ", ") + "]"
    }
}
