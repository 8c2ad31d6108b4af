import CFlowdSystem
import Glibc
import Synchronization

/// How a child process ended.
package enum Termination: Hashable, Sendable, CustomStringConvertible {
    /// It called `exit` with this status.
    case exited(Int32)
    /// A signal ended it.
    case signaled(Signal)

    package var description: String {
        switch self {
        case .exited(let status): return "exited with status \(status)"
        case .signaled(let signal): return "killed by \(signal)"
        }
    }
}

/// What a child's standard input, output or error is.
package enum ChildStream: Sendable {
    /// The same as this process's.
    case inherit
    /// `/dev/null`.
    case null
    /// Standard input only: these bytes, then end of file. The watcher
    /// thread writes them as the child reads; a child that exits without
    /// reading them all is no error.
    case bytes([UInt8])
    /// Standard output or error: a pipe that the watcher thread reads to
    /// its end, into ``ChildProcess/standardOutput`` or ``ChildProcess/standardError``.
    case capture
    /// The file at `path`, opened in the child with `flags` (and `mode` when
    /// it is created). A terminal opened this way after ``ChildProcess/Options/newSession``
    /// becomes the child's controlling terminal.
    case path(String, OpenFlags, mode: UInt32 = 0o600)
    /// A descriptor of this process.
    case descriptor(FileDescriptor)
    /// A copy of the child's own descriptor `number` (0, 1 or 2), already
    /// set up: `.sameAs(0)` for output to the terminal opened as input.
    case sameAs(Int32)
}

/// A process this process started.
///
/// The child starts with an empty signal mask and every signal at its
/// default disposition, whatever this process blocks or ignores (the loop
/// thread blocks SIGTERM for its signalfd, and SIGPIPE is ignored), and with
/// no descriptor of this process other than its standard streams and the
/// ``Options/extraDescriptors`` (every descriptor the package opens is
/// close-on-exec, and the child closes whatever else is open).
///
/// **It dies with this process.** The child gets `SIGKILL` when this process ends, however it ends — also
/// by `kill -9` (`PR_SET_PDEATHSIG`, set in the child before it executes the
/// program; see `spawn.c` for why that is not `posix_spawn`). The signal
/// reaches the child itself; what it started in turn is killed with it when
/// it leads its own process group and is reaped by this process, and under
/// systemd with the rest of the service's cgroup. The setting is dropped
/// when the program is set-user-ID or changes its credentials (`setpriv`).
///
/// **Waiting holds no thread.** One watcher thread (``ChildWatcher``) starts
/// every child, sees it end through a pidfd, feeds its standard input and
/// reads its captured output. ``ended(before:cancellable:)`` is an `async`
/// wait that suspends until then; ``wait(timeout:)`` blocks the calling
/// thread for code that is not `async`. Both are bounded, and
/// ``terminate(grace:)`` ends in SIGTERM, then SIGKILL.
///
/// A child that leads a process group of its own (``Options/newProcessGroup``)
/// takes its group with it: signals go to the whole group, and whatever it
/// left running there is killed as it is reaped (until then its zombie keeps
/// the group id from being reused). An object that goes away with its child
/// still running kills it.
package final class ChildProcess: Sendable {
    /// What to start and how.
    package struct Options: Sendable {
        /// The program: a path, or a name looked up in `PATH` when it has no `/`.
        package var executable: String
        /// The arguments after `argv[0]`.
        package var arguments: [String]
        /// `argv[0]`; the executable when nil.
        package var argument0: String?
        /// The child's whole environment.
        package var environment: [String: String]
        /// Standard input; `/dev/null` unless said otherwise.
        package var standardInput: ChildStream = .null
        /// Standard output.
        package var standardOutput: ChildStream = .capture
        /// Standard error.
        package var standardError: ChildStream = .capture
        /// More descriptors for the child, by the number they get there
        /// (for example a socket as descriptor 3).
        package var extraDescriptors: [Int32: FileDescriptor] = [:]
        /// The child leads a process group of its own (`setpgid(0, 0)`).
        package var newProcessGroup = false
        /// The child leads a session of its own (`setsid(2)`): no controlling
        /// terminal until it opens one.
        package var newSession = false
        /// For ``ChildStream/capture``: keep only the last this many bytes of
        /// each stream (nil: everything).
        package var captureLimit: Int?

        /// Runs `executable` with `arguments` in `environment`.
        package init(_ executable: String, _ arguments: [String] = [], environment: [String: String]) {
            self.executable = executable
            self.arguments = arguments
            self.environment = environment
        }
    }

    /// The child's process id.
    package let pid: Int32
    /// The command line, for messages.
    package let commandLine: String

    private let leadsGroup: Bool
    private let state: LockedValue<ChildState>
    private let watcher: ChildWatcher
    private static let nextWaiter = Atomic<UInt64>(1)

    /// Starts a child as `options` say.
    package init(_ options: Options) throws(SystemCallError) {
        let watcher = try ChildWatcher.shared.get()
        let plan = try SpawnPlan(options)
        let state = LockedValue(ChildState(limit: options.captureLimit))
        let leads = options.newProcessGroup
        let spawned = watcher.perform { () -> Swift.Result<Int32, SystemCallError> in
            Swift.Result { () throws(SystemCallError) -> Int32 in
                let pid = try plan.spawn()
                plan.closeChildEnds()
                do throws(SystemCallError) {
                    try ChildMonitor.start(pid: pid, leadsGroup: leads, plan: plan, state: state, watcher: watcher)
                } catch {
                    Signal.kill.send(to: pid, group: leads)
                    _ = SystemCall.valueOrErrno { waitpid(pid, nil, 0) }
                    throw error
                }
                return pid
            }
        }
        plan.closeChildEnds()
        pid = try spawned.get()
        commandLine = ([options.executable] + options.arguments).joined(separator: " ")
        leadsGroup = leads
        self.state = state
        self.watcher = watcher
    }

    /// Starts `executable` with `arguments`, standard input `/dev/null` and
    /// the output captured. `environment` is added to this process's (and
    /// overrides it), or is the whole environment without `inheritEnvironment`.
    package convenience init(
        _ executable: String, _ arguments: [String] = [], environment: [String: String] = [:],
        inheritEnvironment: Bool = true
    ) throws(SystemCallError) {
        var all = inheritEnvironment ? CurrentProcess.environment() : [:]
        all.merge(environment) { _, new in new }
        try self.init(Options(executable, arguments, environment: all))
    }

    deinit {
        if state.withLock({ $0.termination == nil }) {
            send(.kill)
            state.wait(timeout: .seconds(5)) { $0.termination != nil }
        }
    }

    // MARK: waiting, blocking

    /// True once the child has ended (and been reaped).
    package var hasExited: Bool { state.withLock { $0.termination != nil } }

    /// How the child ended, without waiting; nil while it runs.
    package var exitStatus: Termination? { state.withLock { $0.termination } }

    /// Waits up to `timeout` (nil: as long as it takes) for the child to end
    /// and its captured output to be read to the end; how it ended, or nil
    /// when it is still running (or something it started still holds its
    /// output open). Blocks the calling thread: `async` code uses
    /// ``ended(before:cancellable:)``.
    @discardableResult
    package func wait(timeout: Duration? = .seconds(30)) -> Termination? {
        let deadline = timeout.map { MonotonicClock.now().advanced(by: $0) }
        let leads = leadsGroup
        guard state.wait(timeout: timeout, until: { $0.hasEnded(leadingGroup: leads) }) else { return nil }
        let left = deadline.map { $0.duration(since: MonotonicClock.now()) }
        guard state.wait(timeout: left, until: { $0.openCaptures == 0 }) else { return nil }
        return exitStatus
    }

    /// Sends `signal` to the child (to its process group when it leads one);
    /// nothing once it has been reaped.
    package func send(_ signal: Signal) {
        state.withLock { state in
            if state.termination == nil { signal.send(to: pid, group: leadsGroup) }
        }
    }

    /// SIGTERM, then SIGKILL if it has not ended after `grace`; waits for the
    /// end (at most 10 seconds more). How it ended, nil if even SIGKILL did not
    /// end it in time.
    @discardableResult
    package func terminate(grace: Duration = .seconds(5)) -> Termination? {
        send(.terminate)
        if let ended = wait(timeout: grace) { return ended }
        send(.kill)
        return wait(timeout: .seconds(10))
    }

    // MARK: waiting, async

    /// Suspends until the child has ended and been reaped, with everything it
    /// wrote itself to a captured stream read (a process group leader: what
    /// it left running is killed; any other child: its captured streams are
    /// at their end), or until `deadline` passes, or — when `cancellable` —
    /// until the calling task is cancelled. How it ended, or nil for the
    /// deadline or the cancellation. No thread waits meanwhile.
    package func ended(before deadline: MonotonicClock.Instant?, cancellable: Bool = true) async -> Termination? {
        let id = Self.nextWaiter.wrappingAdd(1, ordering: .relaxed).oldValue
        let state = self.state
        let watcher = self.watcher
        let leads = leadsGroup
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waiting = state.withLock { s -> Bool in
                    if s.hasEnded(leadingGroup: leads) || s.abandoned.remove(id) != nil { return false }
                    s.waiters[id] = ChildState.Waiter(continuation: continuation, timer: nil)
                    return true
                }
                guard waiting else { return continuation.resume() }
                guard let deadline else { return }
                let timer = watcher.schedule(at: deadline) { ChildState.wake(id, in: state, abandoning: false) }
                let stillWaiting = state.withLock { s -> Bool in
                    guard s.waiters[id] != nil else { return false }
                    s.waiters[id]?.timer = timer
                    return true
                }
                if !stillWaiting { watcher.cancelTimer(timer) }
            }
        } onCancel: {
            if cancellable { ChildState.wake(id, in: state, abandoning: true) }
        }
        return state.withLock { $0.hasEnded(leadingGroup: leads) ? $0.termination : nil }
    }

    /// ``terminate(grace:)`` without holding a thread: SIGTERM, then SIGKILL
    /// after `grace`, then at most 10 seconds more. Not cancellable (it is
    /// what a cancelled task does to its child).
    @discardableResult
    package func terminated(grace: Duration = .seconds(5)) async -> Termination? {
        send(.terminate)
        if let ended = await ended(before: MonotonicClock.now().advanced(by: grace), cancellable: false) {
            return ended
        }
        send(.kill)
        return await ended(before: MonotonicClock.now().advanced(by: .seconds(10)), cancellable: false)
    }

    // MARK: captured output

    /// What the child wrote to a captured standard output so far.
    package var standardOutput: String {
        String(decoding: standardOutputBytes, as: UTF8.self)
    }

    /// What the child wrote to a captured standard error so far.
    package var standardError: String {
        String(decoding: standardErrorBytes, as: UTF8.self)
    }

    /// The bytes behind ``standardOutput``.
    package var standardOutputBytes: [UInt8] { state.withLock { $0.output.bytes } }

    /// The bytes behind ``standardError``.
    package var standardErrorBytes: [UInt8] { state.withLock { $0.error.bytes } }

    /// Waits up to `timeout` until `predicate` holds for the standard output
    /// captured so far (for example "printed its address"). False on timeout,
    /// or when the child ended and its output is complete without it.
    package func waitForOutput(timeout: Duration = .seconds(20), until predicate: (String) -> Bool) -> Bool {
        var matched = false
        state.wait(timeout: timeout) { state in
            matched = predicate(String(decoding: state.output.bytes, as: UTF8.self))
            return matched || (state.termination != nil && state.openCaptures == 0)
        }
        return matched
    }

    /// How ``run(_:_:environment:inheritEnvironment:timeout:)`` ended.
    package struct Result: Sendable {
        package let status: Termination
        package let standardOutput: String
        package let standardError: String
    }

    /// Runs a command to its end and returns its output. After `timeout` it
    /// is terminated and the call throws ``Errno/timedOut``.
    package static func run(
        _ executable: String, _ arguments: [String] = [], environment: [String: String] = [:],
        inheritEnvironment: Bool = true, timeout: Duration = .seconds(30)
    ) throws(SystemCallError) -> Result {
        let child = try ChildProcess(
            executable, arguments, environment: environment, inheritEnvironment: inheritEnvironment)
        guard let status = child.wait(timeout: timeout) else {
            child.terminate(grace: .seconds(1))
            throw SystemCallError("wait for \(child.commandLine)", errno: .timedOut)
        }
        return Result(status: status, standardOutput: child.standardOutput, standardError: child.standardError)
    }
}

/// What a child's object and the watcher thread share.
private struct ChildState {
    /// An `async` wait for the end.
    struct Waiter {
        var continuation: CheckedContinuation<Void, Never>
        /// Its deadline's timer on the watcher, once set.
        var timer: UInt64?
    }

    /// Set when the watcher has reaped the child.
    var termination: Termination?
    var output: CapturedBytes
    var error: CapturedBytes
    /// Captured streams not yet at their end.
    var openCaptures = 0
    var waiters: [UInt64: Waiter] = [:]
    /// Waits cancelled before they were registered.
    var abandoned: Set<UInt64> = []

    init(limit: Int?) {
        output = CapturedBytes(limit: limit)
        error = CapturedBytes(limit: limit)
    }

    /// Reaped, and its captured output complete (or, for a group leader,
    /// everything it wrote itself read).
    func hasEnded(leadingGroup: Bool) -> Bool {
        termination != nil && (openCaptures == 0 || leadingGroup)
    }

    /// Resumes the wait `id` if it is still waiting; `abandoning` (a
    /// cancellation) also marks a wait not registered yet as over.
    static func wake(_ id: UInt64, in state: LockedValue<ChildState>, abandoning: Bool) {
        let waiter = state.withLock { s -> Waiter? in
            if let waiter = s.waiters.removeValue(forKey: id) { return waiter }
            if abandoning { s.abandoned.insert(id) }
            return nil
        }
        waiter?.continuation.resume()
    }
}

/// The bytes of one captured stream, or their last `limit`.
private struct CapturedBytes {
    let limit: Int?
    var bytes: [UInt8] = []

    init(limit: Int?) {
        self.limit = limit
    }

    mutating func append(_ chunk: ArraySlice<UInt8>) {
        bytes.append(contentsOf: chunk)
        if let limit, bytes.count > limit { bytes.removeFirst(bytes.count - limit) }
    }
}

/// One running child as the watcher thread looks after it: its pidfd, the
/// pipes it feeds and reads, and the shared state it updates. Lives on the
/// watcher thread only, kept by its registrations until the child is reaped
/// and its pipes are at their end.
private final class ChildMonitor {
    let pid: Int32
    let leadsGroup: Bool
    let state: LockedValue<ChildState>
    let watcher: ChildWatcher
    private var pidfd: FileDescriptor?
    private var pidRegistration: UInt64?
    private var captures: [(fd: FileDescriptor, isError: Bool, registration: UInt64)] = []
    private var input: (fd: FileDescriptor, bytes: [UInt8], offset: Int, registration: UInt64)?

    private init(pid: Int32, leadsGroup: Bool, state: LockedValue<ChildState>, watcher: ChildWatcher) {
        self.pid = pid
        self.leadsGroup = leadsGroup
        self.state = state
        self.watcher = watcher
    }

    /// Watches the child `pid` that `plan` started. On the watcher thread.
    static func start(
        pid: Int32, leadsGroup: Bool, plan: SpawnPlan, state: LockedValue<ChildState>, watcher: ChildWatcher
    ) throws(SystemCallError) {
        let monitor = ChildMonitor(pid: pid, leadsGroup: leadsGroup, state: state, watcher: watcher)
        for (fd, isError) in plan.captures {
            try fd.setNonBlocking()
            let id = try watcher.watch(fd.rawValue, for: .readable) { _ in monitor.readCapture(fd) }
            monitor.captures.append((fd, isError, id))
        }
        state.withLock { $0.openCaptures = monitor.captures.count }
        if let (fd, bytes) = plan.input {
            try fd.setNonBlocking()
            let id = try watcher.watch(fd.rawValue, for: .writable) { _ in monitor.feed() }
            monitor.input = (fd, bytes, 0, id)
            if bytes.isEmpty { monitor.closeInput() }
        }
        switch SystemCall.valueOrErrno({ flowd_pidfd_open(pid) }) {
        case .success(let raw):
            let pidfd = FileDescriptor(owning: raw)
            monitor.pidfd = pidfd
            monitor.pidRegistration = try watcher.watch(raw, for: .readable) { _ in monitor.childEnded() }
        case .failure:
            // No pidfd (a kernel before 5.3, or a filter that refuses it): one
            // thread sees the exit without reaping and tells the watcher.
            let unchecked = UncheckedMonitor(monitor)
            try SystemThread.detach(name: "flowd-reaper") {
                var info = siginfo_t()
                _ = SystemCall.valueOrErrno { waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) }
                watcher.post { unchecked.monitor.childEnded() }
            }
        }
    }

    /// The child ended: read what it wrote, stop feeding it, kill what it
    /// left in its group, reap it, wake the waiters.
    func childEnded() {
        if let id = pidRegistration { watcher.unwatch(id) }
        pidRegistration = nil
        pidfd?.close()
        pidfd = nil
        for capture in captures { readCapture(capture.fd) }
        closeInput()
        let waiters = state.withLockNotifying { s -> [ChildState.Waiter] in
            guard s.termination == nil else { return [] }
            // The zombie still holds the group id: nothing else can have it.
            if leadsGroup { Signal.kill.send(to: pid, group: true) }
            var status: Int32 = 0
            if case .failure = SystemCall.valueOrErrno({ waitpid(pid, &status, 0) }) {
                s.termination = .exited(255)  // cannot happen for our own child
            } else if flowd_wait_signaled(status) != 0 {
                s.termination = .signaled(Signal(rawValue: flowd_wait_term_signal(status)))
            } else {
                s.termination = .exited(flowd_wait_exit_status(status))
            }
            return takeWaitersIfEnded(&s)
        }
        resume(waiters)
    }

    /// Reads what is there; at the end of the stream closes it.
    func readCapture(_ fd: FileDescriptor) {
        guard fd.isOpen else { return }
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count: Int
            do {
                count = try fd.read(into: &buffer)
            } catch where error.errno == .wouldBlock {
                return
            } catch {
                count = 0
            }
            if count > 0 {
                let isError = captures.first { $0.fd === fd }?.isError ?? false
                state.withLockNotifying { s in
                    if isError { s.error.append(buffer[0..<count]) } else { s.output.append(buffer[0..<count]) }
                }
                continue
            }
            if let index = captures.firstIndex(where: { $0.fd === fd }) { watcher.unwatch(captures[index].registration) }
            fd.close()
            let waiters = state.withLockNotifying { s -> [ChildState.Waiter] in
                s.openCaptures -= 1
                return takeWaitersIfEnded(&s)
            }
            resume(waiters)
            return
        }
    }

    /// Writes what the pipe takes now; closes it when all is written or
    /// the child stopped reading (`EPIPE`).
    func feed() {
        guard var current = input else { return }
        while current.offset < current.bytes.count {
            let end = min(current.bytes.count, current.offset + 65536)
            do {
                current.offset += try current.fd.write(someOf: current.bytes[current.offset..<end])
            } catch where error.errno == .wouldBlock {
                input = current
                return
            } catch {
                break
            }
        }
        input = current
        closeInput()
    }

    func closeInput() {
        guard let current = input else { return }
        watcher.unwatch(current.registration)
        current.fd.close()
        input = nil
    }

    private func takeWaitersIfEnded(_ s: inout ChildState) -> [ChildState.Waiter] {
        guard s.hasEnded(leadingGroup: leadsGroup) else { return [] }
        defer { s.waiters = [:] }
        return Array(s.waiters.values)
    }

    private func resume(_ waiters: [ChildState.Waiter]) {
        for waiter in waiters {
            if let timer = waiter.timer { watcher.cancelTimer(timer) }
            waiter.continuation.resume()
        }
    }
}

/// A monitor handed from the fallback reaper thread to the watcher thread,
/// which alone uses it.
private struct UncheckedMonitor: @unchecked Sendable {
    let monitor: ChildMonitor
    init(_ monitor: ChildMonitor) { self.monitor = monitor }
}

/// The C side of one spawn (`flowd_spawn` in `spawn.c`): the program, its
/// argument and environment vectors, the steps the child takes before exec,
/// and the pipe ends made for it. Made on the calling thread, used on the
/// watcher thread while the caller waits.
private final class SpawnPlan: @unchecked Sendable {
    // @unchecked: used by one thread at a time (the caller, then the watcher
    // while the caller waits for it).
    let executable: String
    private var argv: [UnsafeMutablePointer<CChar>?] = []
    private var envp: [UnsafeMutablePointer<CChar>?] = []
    private var actions: [flowd_spawn_action] = []
    /// The strings the actions point to.
    private var paths: [UnsafeMutablePointer<CChar>] = []
    private let newSession: Bool
    private let newProcessGroup: Bool
    /// The pipe ends that belong to the child; closed here once it runs.
    private var childEnds: [FileDescriptor] = []
    /// This process's read ends of captured streams.
    private(set) var captures: [(FileDescriptor, Bool)] = []
    /// This process's write end of standard input, and what to write.
    private(set) var input: (FileDescriptor, [UInt8])?

    init(_ options: ChildProcess.Options) throws(SystemCallError) {
        executable = options.executable
        newSession = options.newSession
        newProcessGroup = options.newProcessGroup
        try setUp(options.standardInput, as: 0)
        try setUp(options.standardOutput, as: 1)
        try setUp(options.standardError, as: 2)
        for (number, descriptor) in options.extraDescriptors.sorted(by: { $0.key < $1.key }) {
            add(kind: FLOWD_SPAWN_DUP2, fd: number, source: descriptor.rawValue)
        }
        add(kind: FLOWD_SPAWN_CLOSE_FROM, fd: max(3, (options.extraDescriptors.keys.max() ?? 2) + 1))
        argv = ([options.argument0 ?? options.executable] + options.arguments).map { strdup($0) } + [nil]
        envp = options.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    }

    deinit {
        argv.forEach { free($0) }
        envp.forEach { free($0) }
        paths.forEach { free($0) }
        closeChildEnds()
    }

    func closeChildEnds() {
        for end in childEnds { end.close() }
        childEnds = []
    }

    private func add(kind: Int32, fd: Int32, source: Int32 = -1, path: String? = nil, flags: Int32 = 0, mode: UInt32 = 0) {
        var action = flowd_spawn_action()
        action.kind = kind
        action.fd = fd
        action.source = source
        if let path, let copy = strdup(path) {
            paths.append(copy)
            action.path = UnsafePointer(copy)
        }
        action.flags = flags
        action.mode = mode
        actions.append(action)
    }

    private func setUp(_ stream: ChildStream, as number: Int32) throws(SystemCallError) {
        let childReads = number == 0
        switch stream {
        case .inherit:
            return
        case .null:
            add(kind: FLOWD_SPAWN_OPEN, fd: number, path: "/dev/null", flags: childReads ? O_RDONLY : O_WRONLY)
        case .path(let path, let flags, let mode):
            add(kind: FLOWD_SPAWN_OPEN, fd: number, path: path, flags: flags.rawValue, mode: mode)
        case .descriptor(let fd):
            add(kind: FLOWD_SPAWN_DUP2, fd: number, source: fd.rawValue)
        case .sameAs(let other):
            add(kind: FLOWD_SPAWN_DUP2, fd: number, source: other)
        case .bytes(let bytes):
            guard childReads else { throw SystemCallError("spawn: bytes for an output stream", errno: .invalidArgument) }
            let (read, write) = try FileDescriptor.pipe()
            add(kind: FLOWD_SPAWN_DUP2, fd: number, source: read.rawValue)
            childEnds.append(read)
            input = (write, bytes)
        case .capture:
            guard !childReads else { throw SystemCallError("spawn: capture of standard input", errno: .invalidArgument) }
            let (read, write) = try FileDescriptor.pipe()
            add(kind: FLOWD_SPAWN_DUP2, fd: number, source: write.rawValue)
            childEnds.append(write)
            captures.append((read, number == 2))
        }
    }

    /// Starts the child (on the watcher thread, which it is then the child
    /// of). `ETXTBSY` (a program file that was just written, or a moment-old
    /// descriptor of it in another thread's fork) is retried briefly.
    func spawn() throws(SystemCallError) -> Int32 {
        let searchPath = !executable.contains("/")
        var result: Int32 = 0
        var pid: Int32 = 0
        var step: Int32 = 0
        var failedAction: Int32 = -1
        for attempt in 0..<5 {
            result = argv.withUnsafeBufferPointer { argv in
                envp.withUnsafeBufferPointer { envp in
                    actions.withUnsafeBufferPointer { actions in
                        var request = flowd_spawn_request()
                        request.argv = argv.baseAddress
                        request.envp = envp.baseAddress
                        request.search_path = searchPath ? 1 : 0
                        request.actions = actions.baseAddress
                        request.action_count = Int32(actions.count)
                        request.new_session = newSession ? 1 : 0
                        request.new_process_group = newProcessGroup ? 1 : 0
                        request.death_signal = Signal.kill.rawValue
                        return executable.withCString { path in
                            request.path = path
                            return flowd_spawn(&request, &pid, &step, &failedAction)
                        }
                    }
                }
            }
            if result != Errno.textFileBusy.rawValue { break }
            MonotonicClock.sleep(for: .milliseconds(10 * (attempt + 1)))
        }
        guard result == 0 else {
            throw failure(step: step, action: Int(failedAction), errno: Errno(rawValue: result), searchPath: searchPath)
        }
        return pid
    }

    /// The failed step as a sentence: `execve /srv/hook: Permission denied`.
    private func failure(step: Int32, action: Int, errno: Errno, searchPath: Bool) -> SystemCallError {
        switch step {
        case FLOWD_SPAWN_STEP_SETSID: return SystemCallError("setsid", errno: errno)
        case FLOWD_SPAWN_STEP_SETPGID: return SystemCallError("setpgid", errno: errno)
        case FLOWD_SPAWN_STEP_PDEATHSIG: return SystemCallError("prctl(PR_SET_PDEATHSIG)", errno: errno)
        case FLOWD_SPAWN_STEP_OPEN:
            let path = actions.indices.contains(action) ? actions[action].path.map { String(cString: $0) } : nil
            return SystemCallError("open", path: path, errno: errno)
        case FLOWD_SPAWN_STEP_DUP2: return SystemCallError("dup2", errno: errno)
        case FLOWD_SPAWN_STEP_CLOSE_FROM: return SystemCallError("close_range", errno: errno)
        case FLOWD_SPAWN_STEP_EXEC: return SystemCallError(searchPath ? "execvpe" : "execve", path: executable, errno: errno)
        default: return SystemCallError("clone", path: executable, errno: errno)
        }
    }
}
