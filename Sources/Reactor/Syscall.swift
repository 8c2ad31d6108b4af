import CReactor
import Glibc

/// The one seam through which every C call of the Reactor passes.
///
/// Each wrapper names the C function it calls, turns `-1`/`errno` into a typed
/// ``ReactorError``, and retries `EINTR` where a retry is the right answer.
enum Syscall {
    /// Returns `result`, or throws the current `errno` as a failure of `call`.
    @inline(__always)
    private static func check(_ call: @autoclosure () -> String, _ result: Int32) throws(ReactorError) -> Int32 {
        if result == -1 { throw .systemCall(call(), .current) }
        return result
    }

    /// The calling thread's `errno`.
    static var errnoValue: Int32 { errno }

    /// `strerror`: the C library's message for an error number.
    static func errorMessage(_ code: Int32) -> String {
        guard let message = strerror(code) else { return "errno \(code)" }
        return String(cString: message)
    }

    // MARK: epoll

    /// `epoll_create1(EPOLL_CLOEXEC)`.
    static func epollCreate() throws(ReactorError) -> Int32 {
        try check("epoll_create1", epoll_create1(Int32(EPOLL_CLOEXEC)))
    }

    /// `epoll_ctl(EPOLL_CTL_ADD/MOD)`: registers `fd` for `mask`, tagging events with `fd`.
    static func epollSet(_ epollFD: Int32, fd: Int32, mask: UInt32, add: Bool) throws(ReactorError) {
        var event = epoll_event()
        event.events = mask
        event.data.fd = fd
        let op = add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD
        _ = try check("epoll_ctl(\(add ? "ADD" : "MOD"), fd \(fd))", epoll_ctl(epollFD, op, fd, &event))
    }

    /// `epoll_ctl(EPOLL_CTL_DEL)`. A descriptor that was already closed (and so
    /// left the epoll set by itself) is not an error.
    static func epollRemove(_ epollFD: Int32, fd: Int32) throws(ReactorError) {
        var event = epoll_event()
        if epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, &event) == -1 {
            let error = Errno(rawValue: errno)
            if error == .badFileDescriptor || error == .noSuchEntry { return }
            throw .systemCall("epoll_ctl(DEL, fd \(fd))", error)
        }
    }

    /// `epoll_wait`: blocks until an event or `timeout` milliseconds (-1: forever).
    /// An interrupted wait reports zero events.
    static func epollWait(
        _ epollFD: Int32, into buffer: UnsafeMutableBufferPointer<epoll_event>, timeout: Int32
    ) throws(ReactorError) -> Int {
        let count = epoll_wait(epollFD, buffer.baseAddress, Int32(buffer.count), timeout)
        if count == -1 {
            if Errno(rawValue: errno) == .interrupted { return 0 }
            throw .systemCall("epoll_wait", .current)
        }
        return Int(count)
    }

    // MARK: eventfd

    /// `eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)`.
    static func eventFD() throws(ReactorError) -> Int32 {
        try check("eventfd", eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)))
    }

    /// `write(2)` of 1 to an eventfd. A full counter (`EAGAIN`) already means
    /// "readable", so it is not an error.
    static func eventFDSignal(_ fd: Int32) {
        var one: UInt64 = 1
        while write(fd, &one, MemoryLayout<UInt64>.size) == -1 && Errno(rawValue: errno) == .interrupted {}
    }

    /// `read(2)` of an eventfd or timerfd counter, resetting it. Returns 0 when
    /// nothing was pending.
    static func readCounter(_ fd: Int32) -> UInt64 {
        var value: UInt64 = 0
        while read(fd, &value, MemoryLayout<UInt64>.size) == -1 {
            if Errno(rawValue: errno) != .interrupted { return 0 }
        }
        return value
    }

    // MARK: timerfd

    /// `timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)`.
    static func timerFD() throws(ReactorError) -> Int32 {
        try check("timerfd_create", timerfd_create(CLOCK_MONOTONIC, Int32(TFD_CLOEXEC | TFD_NONBLOCK)))
    }

    /// `timerfd_settime(TFD_TIMER_ABSTIME)`: fire once at `deadline` nanoseconds
    /// on the monotonic clock; `nil` disarms.
    static func timerFDArm(_ fd: Int32, deadline: UInt64?) throws(ReactorError) {
        var spec = itimerspec()
        if let deadline {
            // A zero it_value would disarm; a deadline is never zero on a booted system.
            let at = max(deadline, 1)
            spec.it_value.tv_sec = Int(at / 1_000_000_000)
            spec.it_value.tv_nsec = Int(at % 1_000_000_000)
        }
        _ = try check("timerfd_settime", timerfd_settime(fd, Int32(TFD_TIMER_ABSTIME), &spec, nil))
    }

    /// `clock_gettime(CLOCK_MONOTONIC)` in nanoseconds.
    static func monotonicNow() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }

    // MARK: signals

    /// `sigemptyset` + `sigaddset` for each of `signals`.
    static func signalSet(_ signals: some Sequence<Int32>) -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        return set
    }

    /// `pthread_sigmask(SIG_BLOCK)` in the calling thread.
    static func blockSignals(_ set: sigset_t) throws(ReactorError) {
        var set = set
        let result = pthread_sigmask(SIG_BLOCK, &set, nil)
        if result != 0 { throw .systemCall("pthread_sigmask", Errno(rawValue: result)) }
    }

    /// `signalfd`: creates a descriptor (`fd == -1`) or changes the mask of one.
    static func signalFD(_ fd: Int32, mask: sigset_t) throws(ReactorError) -> Int32 {
        var mask = mask
        return try check("signalfd", signalfd(fd, &mask, Int32(SFD_CLOEXEC | SFD_NONBLOCK)))
    }

    /// `read(2)` of one `signalfd_siginfo`; nil when none is pending.
    static func readSignal(_ fd: Int32) -> Int32? {
        var info = signalfd_siginfo()
        let size = MemoryLayout<signalfd_siginfo>.size
        while true {
            let count = read(fd, &info, size)
            if count == size { return Int32(bitPattern: info.ssi_signo) }
            if count == -1 && Errno(rawValue: errno) == .interrupted { continue }
            return nil
        }
    }

    /// `pthread_kill`: sends `signal` to one thread of this process.
    static func signalThread(_ thread: pthread_t, _ signal: Int32) throws(ReactorError) {
        let result = pthread_kill(thread, signal)
        if result != 0 { throw .systemCall("pthread_kill", Errno(rawValue: result)) }
    }

    // MARK: descriptors and threads

    /// `close(2)`. Errors are ignored: the descriptor is gone either way on Linux.
    static func close(_ fd: Int32) {
        _ = CReactor.close(fd)
    }

    /// `pthread_self()` as a number, for cheap atomic comparisons.
    @inline(__always)
    static func currentThread() -> UInt {
        UInt(pthread_self())
    }

    /// `pthread_create`: runs `body` on a new thread.
    static func spawnThread(name: String, _ body: @escaping @Sendable () -> Void) throws(ReactorError) -> pthread_t {
        final class Box { let body: @Sendable () -> Void; init(_ body: @escaping @Sendable () -> Void) { self.body = body } }
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            Unmanaged<Box>.fromOpaque(raw).takeRetainedValue().body()
            return nil
        }, context)
        if result != 0 {
            Unmanaged<Box>.fromOpaque(context).release()
            throw .systemCall("pthread_create", Errno(rawValue: result))
        }
        // Thread names are limited to 15 bytes; a longer one is simply not set.
        _ = pthread_setname_np(thread, String(name.utf8.prefix(15)) ?? "reactor")
        return thread
    }

    /// `pthread_join`.
    static func joinThread(_ thread: pthread_t) {
        _ = pthread_join(thread, nil)
    }
}

/// A counting semaphore (`sem_t`), used to hand results between threads.
final class Semaphore: @unchecked Sendable {
    private let raw: UnsafeMutablePointer<sem_t>

    /// `sem_init`.
    init(value: UInt32 = 0) {
        raw = .allocate(capacity: 1)
        sem_init(raw, 0, value)
    }

    deinit {
        sem_destroy(raw)
        raw.deallocate()
    }

    /// `sem_post`.
    func signal() {
        sem_post(raw)
    }

    /// `sem_wait`, retried on `EINTR`.
    func wait() {
        while sem_wait(raw) == -1 && Errno(rawValue: errno) == .interrupted {}
    }
}

/// A mutex (`pthread_mutex_t`) guarding a value.
///
/// Used instead of `Synchronization.Mutex` because ThreadSanitizer
/// understands pthread locks, so the loop's cross-thread queue can be
/// checked for races.
final class MutexBox<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    /// `pthread_mutex_init`.
    init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, under `pthread_mutex_lock`.
    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
