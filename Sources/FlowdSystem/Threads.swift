import CFlowdSystem
import Glibc

/// A thread of this process (`pthread_t`), started with ``spawn(name:_:)``
/// (joinable) or ``detach(name:_:)``.
///
/// The package's one thread starter: the loop thread, the plugin pool, the
/// plugin timeout thread, flowctl's signal thread, the benchmark's clients
/// and the readers of child processes all start here. Every thread gets a
/// name (`pthread_setname_np`, visible in `top -H`, `gdb` and core dumps).
package struct SystemThread: Sendable, Hashable {
    private let handle: pthread_t

    /// The calling thread's id, for cheap "is this the loop thread" checks.
    @inline(__always)
    package static var currentID: UInt { UInt(pthread_self()) }

    /// This thread's id, comparable with ``currentID``.
    package var id: UInt { UInt(handle) }

    /// Starts a joinable thread named `name` running `body`; call ``join()``.
    package static func spawn(name: String, _ body: @escaping @Sendable () -> Void) throws(SystemCallError) -> SystemThread {
        SystemThread(handle: try start(name: name, detached: false, body))
    }

    /// Starts a detached thread named `name` running `body`: its resources
    /// go when it returns, and nobody can join it.
    package static func detach(name: String, _ body: @escaping @Sendable () -> Void) throws(SystemCallError) {
        _ = try start(name: name, detached: true, body)
    }

    /// `pthread_join`: waits until the thread has returned.
    package func join() {
        _ = pthread_join(handle, nil)
    }

    /// `pthread_kill`: sends `signal` to this thread.
    package func send(_ signal: Signal) throws(SystemCallError) {
        try SystemCall.checkReturned("pthread_kill") { pthread_kill(handle, signal.rawValue) }
    }

    /// `pthread_setname_np` for the calling thread. Names are cut to the 15
    /// bytes the kernel keeps (at a character boundary).
    package static func setCurrentName(_ name: String) {
        _ = pthread_setname_np(pthread_self(), shortened(name))
    }

    private static func shortened(_ name: String) -> String {
        var result = ""
        for character in name {
            guard result.utf8.count + String(character).utf8.count <= 15 else { break }
            result.append(character)
        }
        return result
    }

    private final class Start {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    private static func start(
        name: String, detached: Bool, _ body: @escaping @Sendable () -> Void
    ) throws(SystemCallError) -> pthread_t {
        let context = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        if detached { pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED)) }
        var thread = pthread_t()
        let result = pthread_create(
            &thread, &attributes,
            { raw in
                guard let raw else { return nil }
                let start = Unmanaged<Start>.fromOpaque(raw).takeRetainedValue()
                SystemThread.setCurrentName(start.name)
                start.body()
                return nil
            }, context)
        if result != 0 {
            Unmanaged<Start>.fromOpaque(context).release()
            throw SystemCallError("pthread_create", errno: Errno(rawValue: result))
        }
        return thread
    }
}
