import FlowdSystem

/// Why an ``EventLoop`` operation failed.
package enum ReactorError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A system call failed; `call` names it and what it was doing.
    case systemCall(_ call: String, Errno)
    /// The caller passed something the loop cannot accept.
    case invalidArgument(String)

    /// A one-line human message.
    package var message: String {
        switch self {
        case .systemCall(let call, let errno): return "\(call) failed: \(errno) (errno \(errno.rawValue))"
        case .invalidArgument(let why): return why
        }
    }

    package var description: String { message }
}
