import Glibc

/// The threads plugin code runs on: a `TaskExecutor` backed by a pool of
/// threads of its own that grows on demand up to a bound.
///
/// Why not Swift's global executor: its cooperative pool has one thread per
/// core (two here). A plugin that blocks its thread — `sleep()`, a blocking
/// read, a busy loop — would take a core's worth of *every* async task in the
/// daemon with it. Here a blocked plugin holds one pool thread; the next call
/// gets another (a new one if no thread is idle), and the daemon's own tasks
/// never run here. When `maximumThreads` threads are all stuck, further calls
/// wait in the queue and their timeouts, which run elsewhere, still fire.
///
/// Every pool thread has an alternate signal stack, so that the crash guard's
/// handlers still run when a plugin overflows its stack. The jobs of one
/// guarded plugin call come through a ``GuardedCallExecutor`` and run with
/// their thread marked as inside that call (see ``FileCrashGuard``).
public final class PluginExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: every mutable field is guarded by `lock`.
    private let lock = ConditionLock()
    private var queue = JobQueue()
    private var threadCount = 0
    private var idleCount = 0
    private var peakThreadCount = 0

    /// The most threads the pool will have.
    public let maximumThreads: Int
    /// How long an idle thread waits for work before it exits.
    public let idleTimeout: Duration
    private let threadName: String

    /// Makes an empty pool; threads start as calls arrive.
    public init(maximumThreads: Int = 32, idleTimeout: Duration = .seconds(30), threadName: String = "flowd-plugin") {
        self.maximumThreads = max(1, maximumThreads)
        self.idleTimeout = idleTimeout
        self.threadName = String(threadName.utf8.prefix(15)) ?? "flowd-plugin"
    }

    /// The shared pool the daemon uses.
    public static let shared = PluginExecutor()

    /// Called by the Swift runtime to run `job` on one of the pool's threads.
    public func enqueue(_ job: consuming ExecutorJob) {
        enqueue(QueuedJob(job: UnownedJob(job), call: nil))
    }

    /// Queues a job of a guarded call (from ``GuardedCallExecutor``).
    func enqueue(_ job: UnownedJob, call: GuardedCallExecutor) {
        enqueue(QueuedJob(job: job, call: call))
    }

    private func enqueue(_ item: QueuedJob) {
        var spawn = false
        lock.withLock {
            queue.push(item)
            // Every queued job needs a thread of its own that is free to take
            // it; an idle thread that was signalled but has not woken yet still
            // counts as idle, so compare with the queue length.
            if queue.count > idleCount && threadCount < maximumThreads {
                threadCount += 1
                peakThreadCount = max(peakThreadCount, threadCount)
                spawn = true
            } else {
                lock.signal()
            }
        }
        if spawn {
            startThread()
        }
    }

    /// The number of threads alive now and the most there have been (for tests
    /// and the benchmark).
    public var threadCounts: (current: Int, peak: Int) {
        lock.withLock { (threadCount, peakThreadCount) }
    }

    private func startThread() {
        let started = ThreadStarter.start(name: threadName) { [self] in
            self.work()
        }
        if !started {
            // No thread: the job stays queued for a thread that frees up.
            lock.withLock { threadCount -= 1 }
            let line = "flowd: plugin executor: cannot start a thread\n"
            try? System.writeAll(2, Array(line.utf8))
        }
    }

    /// The signals a pool thread takes: the faults (a fault on a thread that
    /// blocks its signal kills the process without running any handler, so
    /// the crash guard would not see it), `SIGABRT` (abort(), and the
    /// watchdog's), and `SIGPROF`, which the Swift runtime's backtracer uses to
    /// pause threads while it reports a crash. Process-directed signals such as
    /// `SIGTERM` go to the daemon's own threads. Without this a pool thread
    /// would inherit whatever mask the thread that happened to start it had.
    static let unblockedSignals: [Int32] = [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS, SIGABRT, SIGPROF]

    private func work() {
        do {
            try System.blockSignals(except: Self.unblockedSignals)
        } catch {
            try? System.writeAll(2, Array("flowd: plugin executor: cannot set the signal mask (\(error))\n".utf8))
        }
        // A stack for signal handlers: a plugin that overflows this thread's
        // stack must still be caught by the crash guard.
        var hasSignalStack = true
        do {
            try System.acquireAlternateSignalStack()
        } catch {
            hasSignalStack = false
            let line = "flowd: plugin executor: no alternate signal stack (\(error))\n"
            try? System.writeAll(2, Array(line.utf8))
        }
        defer { if hasSignalStack { System.releaseAlternateSignalStack() } }
        let executor = asUnownedTaskExecutor()
        lock.lock()
        while true {
            if let item = queue.pop() {
                lock.unlock()
                if let call = item.call {
                    // The call's code runs on this thread now, whichever
                    // thread ran it before its last suspension.
                    let previous = System.enterCall(call.marker)
                    item.job.runSynchronously(on: call.asUnownedTaskExecutor())
                    System.leaveCall(previous)
                } else {
                    item.job.runSynchronously(on: executor)
                }
                lock.lock()
                continue
            }
            idleCount += 1
            let signalled = lock.wait(timeout: idleTimeout)
            idleCount -= 1
            if !signalled && queue.count == 0 {
                threadCount -= 1
                lock.unlock()
                return
            }
        }
    }
}

/// The executor of one guarded plugin call: the shared pool's threads, marked
/// as inside that call while they run its jobs.
///
/// The caller makes one per call and starts the call's task with it as the
/// executor preference, so every job of that task and of its child tasks
/// (`async let`, task groups) comes through here, also after each suspension,
/// when the task may resume on another pool thread. The marker's word only
/// matches while the call is recorded as running, so a job that outlives the
/// call (an unstructured task that inherited the preference) marks nothing.
final class GuardedCallExecutor: TaskExecutor {
    /// The pool that runs the jobs.
    let pool: PluginExecutor
    /// What the running thread is marked with.
    let marker: FaultMarker
    /// The crash guard whose mapping `marker` points into: kept alive for as
    /// long as any job of the call can run.
    let owner: any CrashGuard

    init(pool: PluginExecutor, marker: FaultMarker, owner: any CrashGuard) {
        self.pool = pool
        self.marker = marker
        self.owner = owner
    }

    /// Hands `job` to the pool, to run with its thread marked.
    func enqueue(_ job: consuming ExecutorJob) {
        pool.enqueue(UnownedJob(job), call: self)
    }
}

/// A job in the pool's queue, and the guarded call it belongs to (which the
/// queue keeps alive until the job has run).
private struct QueuedJob {
    var job: UnownedJob
    var call: GuardedCallExecutor?
}

/// A FIFO of jobs: an array with a moving head, compacted now and then.
private struct JobQueue {
    private var items: [QueuedJob] = []
    private var head = 0

    var count: Int { items.count - head }

    mutating func push(_ job: QueuedJob) {
        items.append(job)
    }

    mutating func pop() -> QueuedJob? {
        guard head < items.count else { return nil }
        let job = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        return job
    }
}

/// A `pthread_mutex_t` with a `pthread_cond_t` on `CLOCK_MONOTONIC`.
final class ConditionLock: @unchecked Sendable {
    // @unchecked: the pthread objects are what makes this safe to share.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// `pthread_mutex_lock(3)`.
    func lock() { pthread_mutex_lock(mutex) }
    /// `pthread_mutex_unlock(3)`.
    func unlock() { pthread_mutex_unlock(mutex) }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }

    /// `pthread_cond_signal(3)`: wakes one waiter. Call with the lock held.
    func signal() { pthread_cond_signal(condition) }

    /// `pthread_cond_timedwait(3)` with the lock held. Returns false when the
    /// time ran out (a spurious wake-up returns true: re-check the state).
    func wait(timeout: Duration) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let (seconds, attoseconds) = timeout.components
        var nanoseconds = Int64(deadline.tv_nsec) + attoseconds / 1_000_000_000
        var wholeSeconds = Int64(deadline.tv_sec) + seconds
        wholeSeconds += nanoseconds / 1_000_000_000
        nanoseconds %= 1_000_000_000
        deadline.tv_sec = time_t(wholeSeconds)
        deadline.tv_nsec = Int(nanoseconds)
        return pthread_cond_timedwait(condition, mutex, &deadline) != ETIMEDOUT
    }
}

/// Starts detached threads that run a closure (`pthread_create(3)`).
enum ThreadStarter {
    private final class Box {
        let body: () -> Void
        let name: String
        init(body: @escaping () -> Void, name: String) {
            self.body = body
            self.name = name
        }
    }

    /// Starts a detached thread named `name` (`pthread_setname_np(3)`) running
    /// `body`. Returns false when the thread could not be created.
    static func start(name: String, _ body: @escaping () -> Void) -> Bool {
        let box = Unmanaged.passRetained(Box(body: body, name: name))
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, &attributes,
            { raw in
                guard let raw else { return nil }
                let box = Unmanaged<Box>.fromOpaque(raw).takeRetainedValue()
                System.setCurrentThreadName(box.name)
                box.body()
                return nil
            }, box.toOpaque())
        if rc != 0 {
            box.release()
            return false
        }
        return true
    }
}
