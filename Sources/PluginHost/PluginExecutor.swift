import FlowdSystem

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
package final class PluginExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: every mutable field is guarded by `lock`.
    private let lock = Lock()
    private var queue = JobQueue()
    private var threadCount = 0
    private var idleCount = 0
    private var peakThreadCount = 0

    /// The most threads the pool will have.
    package let maximumThreads: Int
    /// How long an idle thread waits for work before it exits.
    package let idleTimeout: Duration
    private let threadName: String

    /// Makes an empty pool; threads start as calls arrive.
    package init(maximumThreads: Int = 32, idleTimeout: Duration = .seconds(30), threadName: String = "flowd-plugin") {
        self.maximumThreads = max(1, maximumThreads)
        self.idleTimeout = idleTimeout
        self.threadName = String(threadName.utf8.prefix(15)) ?? "flowd-plugin"
    }

    /// The shared pool the daemon uses.
    package static let shared = PluginExecutor()

    /// Called by the Swift runtime to run `job` on one of the pool's threads.
    package func enqueue(_ job: consuming ExecutorJob) {
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
    package var threadCounts: (current: Int, peak: Int) {
        lock.withLock { (threadCount, peakThreadCount) }
    }

    private func startThread() {
        do {
            try SystemThread.detach(name: threadName) { [self] in self.work() }
        } catch {
            // No thread: the job stays queued for a thread that frees up.
            lock.withLock { threadCount -= 1 }
            FileDescriptor.printError("flowd: plugin executor: cannot start a thread (\(error))")
        }
    }

    /// The signals a pool thread takes: the faults (a fault on a thread that
    /// blocks its signal kills the process without running any handler, so
    /// the crash guard would not see it), `SIGABRT` (abort(), and the
    /// watchdog's), and `SIGPROF`, which the Swift runtime's backtracer uses to
    /// pause threads while it reports a crash. Process-directed signals such as
    /// `SIGTERM` go to the daemon's own threads. Without this a pool thread
    /// would inherit whatever mask the thread that happened to start it had.
    static let unblockedSignals: [Signal] = [
        .segmentationFault, .busError, .illegalInstruction, .floatingPointError, .trap, .badSystemCall, .abort,
        .profilingTimer,
    ]

    private func work() {
        do {
            try Signal.blockAll(except: Self.unblockedSignals)
        } catch {
            FileDescriptor.printError("flowd: plugin executor: cannot set the signal mask (\(error))")
        }
        // A stack for signal handlers: a plugin that overflows this thread's
        // stack must still be caught by the crash guard.
        var hasSignalStack = true
        do {
            try LibPluginHost.acquireAlternateSignalStack()
        } catch {
            hasSignalStack = false
            FileDescriptor.printError("flowd: plugin executor: no alternate signal stack (\(error))")
        }
        defer { if hasSignalStack { LibPluginHost.releaseAlternateSignalStack() } }
        let executor = asUnownedTaskExecutor()
        lock.lock()
        while true {
            if let item = queue.pop() {
                lock.unlock()
                if let call = item.call {
                    // The call's code runs on this thread now, whichever
                    // thread ran it before its last suspension.
                    let previous = LibPluginHost.enterCall(call.marker)
                    item.job.runSynchronously(on: call.asUnownedTaskExecutor())
                    LibPluginHost.leaveCall(previous)
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
