/// A system call that failed: which call, on what (a path, when there is
/// one), and the ``Errno``. Reads as a sentence: `open /etc/flowd/flowd.conf:
/// No such file or directory`.
package struct SystemCallError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The C function, sometimes with what it was doing (`mkdir`, `open`).
    package var call: String
    /// The file the call was about, if any.
    package var path: String?
    /// Why it failed.
    package var errno: Errno

    /// A failure of `call` on `path` with `errno`.
    package init(_ call: String, path: String? = nil, errno: Errno) {
        self.call = call
        self.path = path
        self.errno = errno
    }

    package var description: String {
        if let path { return "\(call) \(path): \(errno)" }
        return "\(call): \(errno)"
    }
}

/// How every C call of the package turns `-1`/`errno` into a Swift value.
///
/// ``valueOrErrno(retryOnInterrupt:_:)`` is the one place in the package that
/// retries `EINTR` (swift-system's `valueOrErrno`, NIO's `syscall`): a call
/// a signal interrupted is made again, unless the caller says a retry is
/// wrong for it (`close(2)` on Linux, a wait that should report the signal).
package enum SystemCall {
    /// Calls `body` until it does not fail with `EINTR`; its result, or the
    /// `errno` it left when it returned -1.
    @inline(__always)
    package static func valueOrErrno<Value: FixedWidthInteger>(
        retryOnInterrupt: Bool = true, _ body: () -> Value
    ) -> Result<Value, Errno> {
        retrying(retryOnInterrupt, body)
    }

    /// The body of every ``valueOrErrno(retryOnInterrupt:_:)``: specialized
    /// for each of them, in this module.
    @inline(__always)
    private static func retrying<Value: FixedWidthInteger>(
        _ retryOnInterrupt: Bool, _ body: () -> Value
    ) -> Result<Value, Errno> {
        while true {
            let value = body()
            if value != -1 { return .success(value) }
            let error = Errno.current
            if retryOnInterrupt && error == .interrupted { continue }
            return .failure(error)
        }
    }

    /// ``valueOrErrno(retryOnInterrupt:_:)`` for the `Int32` most C calls
    /// return. Not generic, so that a call from another module (the
    /// Reactor's `epoll_wait`, once per wake of the loop) does not run the
    /// generic body unspecialized, which looks up `Result<Value, Errno>`'s
    /// metadata each time (330 instructions).
    @inline(__always)
    package static func valueOrErrno(retryOnInterrupt: Bool = true, _ body: () -> Int32) -> Result<Int32, Errno> {
        retrying(retryOnInterrupt, body)
    }

    /// ``valueOrErrno(retryOnInterrupt:_:)`` for the `Int` (`ssize_t`) of
    /// `read(2)` and `write(2)`; not generic, as the `Int32` one.
    @inline(__always)
    package static func valueOrErrno(retryOnInterrupt: Bool = true, _ body: () -> Int) -> Result<Int, Errno> {
        retrying(retryOnInterrupt, body)
    }

    /// ``valueOrErrno(retryOnInterrupt:_:)`` that throws `call` (on `path`)
    /// with the `errno`.
    @inline(__always)
    package static func check<Value: FixedWidthInteger>(
        _ call: @autoclosure () -> String, path: String? = nil, retryOnInterrupt: Bool = true, _ body: () -> Value
    ) throws(SystemCallError) -> Value {
        switch valueOrErrno(retryOnInterrupt: retryOnInterrupt, body) {
        case .success(let value): return value
        case .failure(let error): throw SystemCallError(call(), path: path, errno: error)
        }
    }

    /// For the calls that return an error number instead of setting `errno`
    /// (`pthread_*`, `posix_spawn*`): throws unless `body` returns 0.
    @inline(__always)
    package static func checkReturned(
        _ call: @autoclosure () -> String, path: String? = nil, _ body: () -> Int32
    ) throws(SystemCallError) {
        let result = body()
        if result != 0 { throw SystemCallError(call(), path: path, errno: Errno(rawValue: result)) }
    }
}
