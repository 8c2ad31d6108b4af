import FlowdSystem
import Synchronization

/// The job queue of an ``EventLoop`` and the identity of its thread.
///
/// Jobs enqueued on the loop thread go to a plain array (no lock, no wake-up
/// write); jobs from other threads go to a locked queue, and only the first of
/// a batch writes the eventfd.
final class LoopCore: @unchecked Sendable {
    enum Job: Sendable {
        case work(@Sendable () -> Void)
        case task(UnownedJob, UnownedSerialExecutor)

        func run() {
            switch self {
            case .work(let body): body()
            case .task(let job, let executor): job.runSynchronously(on: executor)
            }
        }
    }

    private struct Remote {
        var jobs: [Job] = []
        var wakePending = false
    }

    /// The eventfd that wakes `epoll_wait` (or -1 for a loop without one).
    let wakeFD: Int32
    /// `pthread_self()` of the thread inside `run()`, 0 when not running.
    private let thread = Atomic<UInt>(0)
    private let remote = LockedValue(Remote())
    /// Jobs for the loop thread; touched only by that thread.
    private var local: [Job] = []
    /// How many eventfd wake-ups were written (for tests of the cheap path).
    let wakeUpsWritten = Atomic<Int>(0)

    init(wakeFD: Int32) {
        self.wakeFD = wakeFD
    }

    /// True on the thread running the loop.
    @inline(__always)
    var inLoop: Bool {
        let owner = thread.load(ordering: .relaxed)
        return owner != 0 && owner == SystemThread.currentID
    }

    /// True on the loop thread, or anywhere while the loop is not running: the
    /// times when loop state may be touched directly.
    var mayTouchLoopState: Bool {
        let owner = thread.load(ordering: .relaxed)
        return owner == 0 || owner == SystemThread.currentID
    }

    var isRunning: Bool { thread.load(ordering: .relaxed) != 0 }

    /// Claims the loop for the calling thread; false if another thread runs it.
    func enter() -> Bool {
        thread.compareExchange(expected: 0, desired: SystemThread.currentID, ordering: .acquiringAndReleasing).exchanged
    }

    func leave() {
        thread.store(0, ordering: .releasing)
    }

    func enqueue(_ job: Job) {
        if inLoop {
            local.append(job)
            return
        }
        let mustWake = remote.withLock { remote in
            remote.jobs.append(job)
            if remote.wakePending { return false }
            remote.wakePending = true
            return true
        }
        if mustWake && wakeFD >= 0 {
            wakeUpsWritten.add(1, ordering: .relaxed)
            Syscall.eventFDSignal(wakeFD)
        }
    }

    /// True when jobs wait on the loop thread's own queue.
    var hasLocalJobs: Bool { !local.isEmpty }

    /// Moves jobs from other threads onto the loop queue, after those already there.
    func drainRemote() {
        let jobs = remote.withLock { remote in
            remote.wakePending = false
            let jobs = remote.jobs
            remote.jobs = []
            return jobs
        }
        if !jobs.isEmpty { local.append(contentsOf: jobs) }
    }

    /// Runs the jobs queued now; jobs they enqueue wait for the next round, so
    /// a job that re-enqueues itself cannot starve I/O.
    func runLocalJobs() {
        guard !local.isEmpty else { return }
        let batch = local
        local = []
        for job in batch { job.run() }
    }
}
