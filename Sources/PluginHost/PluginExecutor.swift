import FlowdSystem
import Synchronization

/// The threads plugin code runs on: a `TaskExecutor` backed by a pool of
/// threads of its own that grows on demand up to a bound.
///
/// Why not Swift's global executor: its cooperative pool has one thread per
/// core (two here). A plugin that blocks its thread — `sleep()`, a blocking
/// read, a busy loop — would take a core's worth of *every* async task in the
/// daemon with it. Here a blocked plugin holds one pool thread; the next call
/// gets another (a new one if no thread is idle), and the daemon's own tasks
/// never run here.
///
/// **Fair between users.** Each plugin call's jobs are queued under the uid
/// the call is for (``CallExecutor/uid``, the session owner's). A free thread
/// takes the next job round-robin over the uids that have jobs waiting, and
/// one uid has at most ``maximumThreadsPerUser`` jobs running at once: a uid
/// whose plugin calls block their threads queues behind its own calls, never
/// in front of another uid's. Within a uid, jobs of calls that have already
/// started (a resumption after an `await`) go before calls that have not.
/// Work not made for a call (the pool as an ordinary executor preference)
/// has a queue of its own, without that cap.
///
/// Every pool thread has an alternate signal stack, so that the crash guard's
/// handlers still run when a plugin overflows its stack. The jobs of one
/// plugin call come through a ``CallExecutor`` and, for a guarded call, run
/// with their thread marked as inside that call (see ``FileCrashGuard``).
package final class PluginExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: every mutable field is guarded by `lock`.
    private let lock = Lock()
    private var queue: FairQueue
    private var threadCount = 0
    private var idleCount = 0
    /// Threads started that have not yet looked at the queue.
    private var startingCount = 0
    private var peakThreadCount = 0

    /// The most threads the pool will have.
    package let maximumThreads: Int
    /// The most jobs of one uid's calls that run at once.
    package let maximumThreadsPerUser: Int
    /// How long an idle thread waits for work before it exits.
    package let idleTimeout: Duration
    private let threadName: String

    /// Makes an empty pool; threads start as calls arrive. One uid's calls
    /// get at most `maximumThreadsPerUser` threads (a quarter of the pool
    /// when not given).
    package init(
        maximumThreads: Int = 32, maximumThreadsPerUser: Int? = nil, idleTimeout: Duration = .seconds(30),
        threadName: String = "flowd-plugin"
    ) {
        self.maximumThreads = max(1, maximumThreads)
        let perUser = min(self.maximumThreads, max(1, maximumThreadsPerUser ?? self.maximumThreads / 4))
        self.maximumThreadsPerUser = perUser
        self.idleTimeout = idleTimeout
        self.threadName = String(threadName.utf8.prefix(15)) ?? "flowd-plugin"
        queue = FairQueue(capPerUser: perUser)
    }

    /// The shared pool the daemon uses.
    package static let shared = PluginExecutor()

    /// Called by the Swift runtime to run `job` on one of the pool's threads
    /// (work that is not a plugin call's: its own queue, no per-uid cap).
    package func enqueue(_ job: consuming ExecutorJob) {
        enqueue(QueuedJob(job: UnownedJob(job), call: nil), lane: .unattributed, continuing: true)
    }

    /// Queues a job of a plugin call (from ``CallExecutor``) under its uid.
    func enqueue(_ job: UnownedJob, call: CallExecutor, continuing: Bool) {
        enqueue(QueuedJob(job: job, call: call), lane: call.uid.map(Lane.uid) ?? .unattributed, continuing: continuing)
    }

    private func enqueue(_ item: QueuedJob, lane: Lane, continuing: Bool) {
        var spawn = false
        lock.withLock {
            queue.push(item, lane: lane, continuing: continuing)
            // Every job that may run now needs a thread of its own that is
            // free to take it; an idle thread that was signalled but has not
            // woken yet still counts as idle, and so does one still starting,
            // so compare with the number of runnable jobs.
            if queue.runnableCount > idleCount + startingCount && threadCount < maximumThreads {
                threadCount += 1
                startingCount += 1
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

    /// Jobs of `uid`'s calls running now and waiting for a thread (for tests).
    package func jobCounts(uid: UInt32) -> (running: Int, waiting: Int) {
        lock.withLock { queue.counts(lane: .uid(uid)) }
    }

    private func startThread() {
        do {
            try SystemThread.detach(name: threadName) { [self] in self.work() }
        } catch {
            // No thread: the job stays queued for a thread that frees up.
            lock.withLock {
                threadCount -= 1
                startingCount -= 1
            }
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
        startingCount -= 1
        while true {
            if let (item, lane) = queue.popRunnable() {
                lock.unlock()
                if let call = item.call {
                    // The call's code runs on this thread now, whichever
                    // thread ran it before its last suspension.
                    let previous = call.marker.map { LibPluginHost.enterCall($0) }
                    item.job.runSynchronously(on: call.asUnownedTaskExecutor())
                    if let previous { LibPluginHost.leaveCall(previous) }
                } else {
                    item.job.runSynchronously(on: executor)
                }
                lock.lock()
                queue.finished(lane: lane)
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

/// The executor of one plugin call: the shared pool's threads, taking the
/// call's jobs in the queue of the uid the call is for and, for a guarded
/// call, marked as inside that call while they run its jobs.
///
/// The caller makes one per call and starts the call's task with it as the
/// executor preference, so every job of that task and of its child tasks
/// (`async let`, task groups) comes through here, also after each suspension,
/// when the task may resume on another pool thread. The marker's word only
/// matches while the call is recorded as running, so a job that outlives the
/// call (an unstructured task that inherited the preference) marks nothing.
final class CallExecutor: TaskExecutor {
    /// The pool that runs the jobs.
    let pool: PluginExecutor
    /// What the running thread is marked with; nil for a crash guard that
    /// hands out no markers.
    let marker: FaultMarker?
    /// The crash guard whose mapping `marker` points into: kept alive for as
    /// long as any job of the call can run.
    let owner: any CrashGuard
    /// The uid the call is for: its jobs wait in that uid's queue.
    let uid: UInt32?
    /// Set once the call's first job was queued: later jobs continue a call
    /// that has started.
    private let started = Atomic<Bool>(false)

    init(pool: PluginExecutor, marker: FaultMarker?, owner: any CrashGuard, uid: UInt32?) {
        self.pool = pool
        self.marker = marker
        self.owner = owner
        self.uid = uid
    }

    /// Hands `job` to the pool, to run with its thread marked.
    func enqueue(_ job: consuming ExecutorJob) {
        let continuing = started.exchange(true, ordering: .relaxed)
        pool.enqueue(UnownedJob(job), call: self, continuing: continuing)
    }
}

/// A job in the pool's queue, and the call it belongs to (which the queue
/// keeps alive until the job has run).
private struct QueuedJob {
    var job: UnownedJob
    var call: CallExecutor?
}

/// Whose queue a job waits in.
private enum Lane: Hashable {
    /// A plugin call for this uid.
    case uid(UInt32)
    /// Work that is not a plugin call's.
    case unattributed
}

/// The pool's queue: one queue per uid (and one for other work), taken
/// round-robin, with at most `capPerUser` jobs of one uid running at once.
private struct FairQueue {
    private struct LaneQueue {
        /// Jobs of calls that have started.
        var continuing = JobQueue()
        /// First jobs of calls.
        var fresh = JobQueue()
        var running = 0
        var waiting: Int { continuing.count + fresh.count }
    }

    let capPerUser: Int
    private var lanes: [Lane: LaneQueue] = [:]
    /// The lanes with waiting jobs, in the order the round goes.
    private var ring: [Lane] = []
    private var next = 0
    /// Jobs waiting in all lanes.
    private(set) var count = 0

    init(capPerUser: Int) {
        self.capPerUser = capPerUser
    }

    private func cap(_ lane: Lane) -> Int {
        lane == .unattributed ? Int.max : capPerUser
    }

    mutating func push(_ job: QueuedJob, lane: Lane, continuing: Bool) {
        var queue = lanes[lane] ?? LaneQueue()
        if queue.waiting == 0 { ring.append(lane) }
        if continuing { queue.continuing.push(job) } else { queue.fresh.push(job) }
        lanes[lane] = queue
        count += 1
    }

    /// The next job that may run, round-robin over the lanes under their cap.
    mutating func popRunnable() -> (QueuedJob, Lane)? {
        guard !ring.isEmpty else { return nil }
        for step in 0..<ring.count {
            let index = (next + step) % ring.count
            let lane = ring[index]
            guard var queue = lanes[lane], queue.running < cap(lane),
                let job = queue.continuing.pop() ?? queue.fresh.pop()
            else { continue }
            queue.running += 1
            lanes[lane] = queue
            count -= 1
            if queue.waiting == 0 {
                ring.remove(at: index)
                next = ring.isEmpty ? 0 : index % ring.count
            } else {
                next = (index + 1) % ring.count
            }
            return (job, lane)
        }
        return nil
    }

    /// A job of `lane` finished running.
    mutating func finished(lane: Lane) {
        guard var queue = lanes[lane] else { return }
        queue.running -= 1
        lanes[lane] = queue.running == 0 && queue.waiting == 0 ? nil : queue
    }

    /// The jobs that could start now if there were threads.
    var runnableCount: Int {
        var total = 0
        for lane in ring {
            guard let queue = lanes[lane] else { continue }
            total += min(queue.waiting, max(0, cap(lane) - queue.running))
        }
        return total
    }

    func counts(lane: Lane) -> (running: Int, waiting: Int) {
        guard let queue = lanes[lane] else { return (0, 0) }
        return (queue.running, queue.waiting)
    }
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
