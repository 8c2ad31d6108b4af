import CFlowdSystem
import FlowdSystem
import Glibc

/// The one seam through which the Reactor calls C: epoll, eventfd, timerfd
/// and signalfd, which are the Reactor's own. Everything else (descriptors,
/// threads, locks, the clock, signal masks) comes from FlowdSystem.
///
/// Each wrapper names the C function it calls and turns `-1`/`errno` into a
/// typed ``ReactorError`` through FlowdSystem's ``SystemCall``, which retries
/// `EINTR` where a retry is the right answer.
enum Syscall {
    /// `body`'s result, or the failure of `call` with its `errno`.
    @inline(__always)
    private static func check(
        _ call: @autoclosure () -> String, retryOnInterrupt: Bool = true, _ body: () -> Int32
    ) throws(ReactorError) -> Int32 {
        switch SystemCall.valueOrErrno(retryOnInterrupt: retryOnInterrupt, body) {
        case .success(let value): return value
        case .failure(let error): throw .systemCall(call(), error)
        }
    }

    // MARK: epoll

    /// `epoll_create1(EPOLL_CLOEXEC)`.
    static func epollCreate() throws(ReactorError) -> FileDescriptor {
        FileDescriptor(owning: try check("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) })
    }

    /// `epoll_ctl(EPOLL_CTL_ADD/MOD)`: registers `fd` for `mask`, tagging events with `fd`.
    static func epollSet(_ epoll: FileDescriptor, fd: Int32, events: IOEvents, add: Bool) throws(ReactorError) {
        var event = epoll_event()
        event.events = events.epollMask
        event.data.fd = fd
        let op = add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD
        _ = try check("epoll_ctl(\(add ? "ADD" : "MOD"), fd \(fd))") { epoll_ctl(epoll.rawValue, op, fd, &event) }
    }

    /// `epoll_ctl(EPOLL_CTL_DEL)`. A descriptor that was already closed (and so
    /// left the epoll set by itself) is not an error.
    static func epollRemove(_ epoll: FileDescriptor, fd: Int32) throws(ReactorError) {
        var event = epoll_event()
        if case .failure(let error) = SystemCall.valueOrErrno({ epoll_ctl(epoll.rawValue, EPOLL_CTL_DEL, fd, &event) }) {
            if error == .badFileDescriptor || error == .noSuchFileOrDirectory { return }
            throw .systemCall("epoll_ctl(DEL, fd \(fd))", error)
        }
    }

    /// `epoll_wait`: blocks until an event or `timeout` milliseconds (-1:
    /// forever). An interrupted wait reports zero events (no retry: the loop
    /// looks at its queues before it waits again).
    static func epollWait(_ epoll: FileDescriptor, into buffer: EventBuffer, timeout: Int32) throws(ReactorError) -> Int {
        let events = buffer.events
        switch SystemCall.valueOrErrno(retryOnInterrupt: false, { epoll_wait(epoll.rawValue, events.baseAddress, Int32(events.count), timeout) }) {
        case .success(let count): return Int(count)
        case .failure(let error) where error == .interrupted: return 0
        case .failure(let error): throw .systemCall("epoll_wait", error)
        }
    }

    /// Room for the results of one `epoll_wait`.
    struct EventBuffer {
        fileprivate let events: UnsafeMutableBufferPointer<epoll_event>

        /// Room for `capacity` results; ``deallocate()`` it when done.
        init(capacity: Int) {
            events = .allocate(capacity: capacity)
        }

        func deallocate() {
            events.deallocate()
        }

        /// The descriptor and events of result `index`.
        subscript(index: Int) -> (fd: Int32, events: IOEvents) {
            (events[index].data.fd, IOEvents(epoll: events[index].events))
        }
    }

    // MARK: eventfd

    /// `eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)`.
    static func eventFD() throws(ReactorError) -> FileDescriptor {
        FileDescriptor(owning: try check("eventfd") { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) })
    }

    /// `write(2)` of 1 to an eventfd. A full counter (`EAGAIN`) already means
    /// "readable", so it is not an error.
    static func eventFDSignal(_ fd: Int32) {
        var one: UInt64 = 1
        _ = SystemCall.valueOrErrno { write(fd, &one, MemoryLayout<UInt64>.size) }
    }

    /// `read(2)` of an eventfd or timerfd counter, resetting it. Returns 0 when
    /// nothing was pending.
    static func readCounter(_ fd: FileDescriptor) -> UInt64 {
        var value: UInt64 = 0
        guard case .success = SystemCall.valueOrErrno({ read(fd.rawValue, &value, MemoryLayout<UInt64>.size) }) else { return 0 }
        return value
    }

    // MARK: timerfd

    /// `timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)`: the same
    /// clock as FlowdSystem's `MonotonicClock`.
    static func timerFD() throws(ReactorError) -> FileDescriptor {
        FileDescriptor(owning: try check("timerfd_create") {
            timerfd_create(CLOCK_MONOTONIC, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
        })
    }

    /// `timerfd_settime(TFD_TIMER_ABSTIME)`: fire once at `deadline` nanoseconds
    /// on the monotonic clock; `nil` disarms.
    static func timerFDArm(_ timer: FileDescriptor, deadline: UInt64?) throws(ReactorError) {
        var spec = itimerspec()
        if let deadline {
            // A zero it_value would disarm; a deadline is never zero on a booted system.
            let at = max(deadline, 1)
            spec.it_value.tv_sec = Int(at / 1_000_000_000)
            spec.it_value.tv_nsec = Int(at % 1_000_000_000)
        }
        _ = try check("timerfd_settime") { timerfd_settime(timer.rawValue, Int32(TFD_TIMER_ABSTIME), &spec, nil) }
    }

    // MARK: signalfd

    /// `signalfd`: creates a descriptor (`current == nil`) or changes the mask of one.
    static func signalFD(_ current: FileDescriptor?, mask signals: Set<Signal>) throws(ReactorError) -> FileDescriptor {
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in signals { sigaddset(&mask, signal.rawValue) }
        let fd = try check("signalfd") { signalfd(current?.rawValue ?? -1, &mask, Int32(SFD_CLOEXEC | SFD_NONBLOCK)) }
        return current ?? FileDescriptor(owning: fd)
    }

    /// `read(2)` of one `signalfd_siginfo`; nil when none is pending.
    static func readSignal(_ fd: FileDescriptor) -> Signal? {
        var info = signalfd_siginfo()
        let size = MemoryLayout<signalfd_siginfo>.size
        guard case .success(let count) = SystemCall.valueOrErrno({ read(fd.rawValue, &info, size) }), count == size
        else { return nil }
        return Signal(rawValue: Int32(bitPattern: info.ssi_signo))
    }
}

extension IOEvents {
    /// The `epoll` mask to register for these interests.
    var epollMask: UInt32 {
        var mask: UInt32 = 0
        if contains(.read) { mask |= EPOLLIN.rawValue }
        if contains(.write) { mask |= EPOLLOUT.rawValue }
        return mask
    }

    /// The events `epoll_wait` reported.
    init(epoll mask: UInt32) {
        var events: IOEvents = []
        if mask & (EPOLLIN.rawValue | EPOLLPRI.rawValue | EPOLLRDHUP.rawValue) != 0 { events.insert(.read) }
        if mask & EPOLLOUT.rawValue != 0 { events.insert(.write) }
        if mask & EPOLLHUP.rawValue != 0 { events.insert(.hangUp) }
        if mask & EPOLLERR.rawValue != 0 { events.insert(.error) }
        self = events
    }
}
