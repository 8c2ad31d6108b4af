import CFlowdSystem
import Glibc
import Synchronization

/// The one thread that looks after every child process of this process:
/// it starts them, waits for them to end and moves the bytes of their
/// standard streams, all through one `epoll` set.
///
/// Why one thread: a thread per child (blocked in `waitpid`, or in a
/// blocking read of its output) costs a thread for as long as the child runs,
/// and a caller that waits for its child blocks one more. Here a child's end
/// is a pidfd (`pidfd_open(2)`) that turns readable, its pipes are
/// non-blocking descriptors in the same set, and an `async` waiter
/// (``ChildProcess/ended(before:cancellable:)``) is a continuation resumed
/// from here: waiting for a child holds no thread at all.
///
/// Why children are started here too: `PR_SET_PDEATHSIG`, which kills a
/// child when this process dies, fires when the *thread* that started the
/// child ends, not the process. A plugin pool thread that exits after 30
/// idle seconds would take its children with it; this thread lives as long
/// as the process.
///
/// Everything in ``Thread-only state`` is touched only on the watcher's own
/// thread: other threads hand it work with ``post(_:)`` or ``perform(_:)``.
final class ChildWatcher: @unchecked Sendable {
    // @unchecked: the mutable fields below the lock are used on the watcher
    // thread only; the queue of posted work is behind a lock.

    /// The process's watcher, started on first use; the error when its
    /// thread or descriptors could not be made.
    static let shared: Result<ChildWatcher, SystemCallError> = Result { () throws(SystemCallError) in
        try ChildWatcher()
    }

    private let epoll: FileDescriptor
    private let wakeup: FileDescriptor
    private let posted = LockedValue<[@Sendable () -> Void]>([])
    private let nextID = Atomic<UInt64>(1)
    private let threadID = Atomic<UInt>(0)

    // MARK: Thread-only state

    private var registrations: [UInt64: Registration] = [:]
    private var timers = TimerQueue()

    /// A descriptor in the set and what to do when it is ready.
    private struct Registration {
        let fd: Int32
        let handler: (PollEvents) -> Void
    }

    private init() throws(SystemCallError) {
        epoll = FileDescriptor(owning: try SystemCall.check("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) })
        wakeup = FileDescriptor(
            owning: try SystemCall.check("eventfd") { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) })
        try add(wakeup.rawValue, events: .readable, id: 0)
        let started = Semaphore()
        try SystemThread.detach(name: "flowd-children") { [self] in
            threadID.store(SystemThread.currentID, ordering: .releasing)
            started.signal()
            run()
        }
        started.wait()
    }

    /// True on the watcher's thread.
    var isCurrent: Bool { threadID.load(ordering: .acquiring) == SystemThread.currentID }

    // MARK: handing work to the thread

    /// Runs `body` on the watcher thread soon, in the order posted.
    func post(_ body: @escaping @Sendable () -> Void) {
        posted.withLock { $0.append(body) }
        var one: UInt64 = 1
        _ = SystemCall.valueOrErrno { Glibc.write(wakeup.rawValue, &one, MemoryLayout<UInt64>.size) }
    }

    /// Runs `body` on the watcher thread and returns its result; at once
    /// when called there.
    func perform<T>(_ body: @escaping @Sendable () -> Result<T, SystemCallError>) -> Result<T, SystemCallError> {
        if isCurrent { return body() }
        let result = LockedValue<Result<T, SystemCallError>?>(nil)
        post { result.withLockNotifying { $0 = body() } }
        result.wait(timeout: nil) { $0 != nil }
        return result.withLock { $0 } ?? .failure(SystemCallError("the child process watcher", errno: .invalidArgument))
    }

    /// Calls `action` on the watcher thread at `deadline` (or soon after);
    /// the id cancels it (``cancelTimer(_:)``).
    func schedule(at deadline: MonotonicClock.Instant, _ action: @escaping @Sendable () -> Void) -> UInt64 {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        post { [self] in timers.add(id, deadline: deadline.nanoseconds, interval: nil, handler: action) }
        return id
    }

    /// Forgets a timer that has not fired yet.
    func cancelTimer(_ id: UInt64) {
        post { [self] in timers.cancel(id) }
    }

    // MARK: on the thread

    /// Adds `fd` to the set; `handler` runs on this thread each time it is
    /// ready, until ``unwatch(_:)`` with the returned id. Call on the
    /// watcher thread.
    func watch(_ fd: Int32, for events: PollEvents, _ handler: @escaping (PollEvents) -> Void) throws(SystemCallError) -> UInt64 {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        try add(fd, events: events, id: id)
        registrations[id] = Registration(fd: fd, handler: handler)
        return id
    }

    /// Takes a descriptor out of the set (before it is closed). Call on the
    /// watcher thread.
    func unwatch(_ id: UInt64) {
        guard let registration = registrations.removeValue(forKey: id) else { return }
        var event = epoll_event()
        // A descriptor closed meanwhile has left the set by itself.
        _ = SystemCall.valueOrErrno { epoll_ctl(epoll.rawValue, EPOLL_CTL_DEL, registration.fd, &event) }
    }

    private func add(_ fd: Int32, events: PollEvents, id: UInt64) throws(SystemCallError) {
        var event = epoll_event()
        event.events = (events.contains(.readable) ? EPOLLIN.rawValue : 0) | (events.contains(.writable) ? EPOLLOUT.rawValue : 0)
        event.data.u64 = id
        let epoll = self.epoll.rawValue
        _ = try SystemCall.check("epoll_ctl(ADD, fd \(fd))") { epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) }
    }

    private func run() {
        // Signals are for the process's own threads (the loop's signalfd):
        // none is delivered here, and a write to a pipe whose reader has gone
        // is EPIPE, not SIGPIPE.
        try? Signal.blockAll(except: [])
        let capacity = 64
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
        defer { events.deallocate() }
        while true {
            let count: Int32
            switch SystemCall.valueOrErrno(retryOnInterrupt: false, { epoll_wait(epoll.rawValue, events, Int32(capacity), waitMilliseconds()) }) {
            case .success(let n): count = n
            case .failure: count = 0
            }
            for index in 0..<Int(count) {
                let id = events[index].data.u64
                let mask = events[index].events
                if id == 0 {
                    var value: UInt64 = 0
                    _ = SystemCall.valueOrErrno { Glibc.read(wakeup.rawValue, &value, MemoryLayout<UInt64>.size) }
                    continue
                }
                guard let registration = registrations[id] else { continue }
                var ready: PollEvents = []
                if mask & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 { ready.insert(.readable) }
                if mask & (EPOLLOUT.rawValue | EPOLLERR.rawValue) != 0 { ready.insert(.writable) }
                if mask & EPOLLHUP.rawValue != 0 { ready.insert(.hangUp) }
                if mask & EPOLLERR.rawValue != 0 { ready.insert(.error) }
                registration.handler(ready)
            }
            for work in posted.withLock({ queue in defer { queue = [] }; return queue }) { work() }
            let now = MonotonicClock.now().nanoseconds
            while let action = timers.popDue(now: now) { action() }
        }
    }

    /// Until the next timer, rounded up to a millisecond; -1 without one.
    private func waitMilliseconds() -> Int32 {
        guard let next = timers.nextDeadline() else { return -1 }
        let left = MonotonicClock.Instant(nanoseconds: next).duration(since: MonotonicClock.now()).nonNegativeNanoseconds
        return Int32(clamping: (left + 999_999) / 1_000_000)
    }
}
