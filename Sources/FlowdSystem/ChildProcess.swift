import CFlowdSystem
import Glibc

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
    /// A pipe; this process gets the other end (``ChildProcess/standardInputPipe``, …).
    case pipe
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

/// A process this process started, with `posix_spawn(3)`.
///
/// The child starts with an empty signal mask and every signal at its
/// default disposition, whatever this process blocks or ignores (the loop
/// thread blocks SIGTERM for its signalfd, and SIGPIPE is ignored), and with
/// no descriptor of this process other than its standard streams and the
/// ``Options/extraDescriptors`` (every descriptor the package opens is
/// close-on-exec, and the child closes whatever else is open).
///
/// Waiting is bounded (``wait(timeout:)``) and ends in SIGTERM, then SIGKILL
/// (``terminate(grace:)``). A child that leads a process group of its own
/// (``Options/newProcessGroup``) takes its group with it: signals go to the
/// whole group, and whatever it left running there is killed when it has
/// exited, before it is reaped (until then its zombie keeps the group id from
/// being reused). An object that goes away with its child still running kills
/// and reaps it.
///
/// How waiting works today: one thread per child blocks in `waitid(2)` with
/// `WNOWAIT` (it sees the exit without reaping) and wakes the waiters. The
/// API is shaped so that a later change can replace that thread with a
/// pidfd (`pidfd_open(2)`) the event loop watches, and ask the kernel to kill
/// the child when this process dies (`PR_SET_PDEATHSIG`, which needs a
/// spawn path other than `posix_spawn`), without changing any caller.
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
        /// Standard output; `/dev/null` unless said otherwise.
        package var standardOutput: ChildStream = .null
        /// Standard error; `/dev/null` unless said otherwise.
        package var standardError: ChildStream = .null
        /// More descriptors for the child, by the number they get there
        /// (for example a socket as descriptor 3).
        package var extraDescriptors: [Int32: FileDescriptor] = [:]
        /// The child leads a process group of its own (`setpgid(0, 0)`).
        package var newProcessGroup = false
        /// The child leads a session of its own (`setsid(2)`): no controlling
        /// terminal until it opens one.
        package var newSession = false

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
    /// This process's end of the child's standard input, for ``ChildStream/pipe``.
    package let standardInputPipe: FileDescriptor?
    /// This process's end of the child's standard output, for ``ChildStream/pipe``.
    package let standardOutputPipe: FileDescriptor?
    /// This process's end of the child's standard error, for ``ChildStream/pipe``.
    package let standardErrorPipe: FileDescriptor?

    private let leadsGroup: Bool
    private let state: LockedValue<State>

    private struct State {
        /// The reaper saw the exit (the child may not be reaped yet).
        var exited = false
        /// Set once reaped.
        var termination: Termination?
    }

    /// Starts a child as `options` say.
    package init(_ options: Options) throws(SystemCallError) {
        var spawner = Spawner()
        defer { spawner.destroy() }
        let stdin = try spawner.setUp(options.standardInput, as: 0, childReads: true)
        let stdout = try spawner.setUp(options.standardOutput, as: 1, childReads: false)
        let stderr = try spawner.setUp(options.standardError, as: 2, childReads: false)
        for (number, descriptor) in options.extraDescriptors.sorted(by: { $0.key < $1.key }) {
            spawner.duplicate(descriptor.rawValue, to: number)
        }
        spawner.closeFrom(max(3, (options.extraDescriptors.keys.max() ?? 2) + 1))
        let argv = [options.argument0 ?? options.executable] + options.arguments
        commandLine = ([options.executable] + options.arguments).joined(separator: " ")
        pid = try spawner.spawn(
            options.executable, argv: argv, environment: options.environment.map { "\($0.key)=\($0.value)" },
            newProcessGroup: options.newProcessGroup, newSession: options.newSession)
        spawner.closeChildEnds()
        leadsGroup = options.newProcessGroup

        standardInputPipe = stdin.kept
        standardOutputPipe = stdout.kept
        standardErrorPipe = stderr.kept
        let state = LockedValue(State())
        self.state = state
        do {
            let pid = self.pid
            try SystemThread.detach(name: "flowd-reaper") { Self.awaitExit(pid, state: state) }
        } catch {
            Signal.kill.send(to: pid, group: leadsGroup)
            _ = SystemCall.valueOrErrno { waitpid(pid, nil, 0) }
            state.withLock { $0.exited = true; $0.termination = .signaled(.kill) }
            throw error
        }
    }

    deinit {
        if state.withLock({ $0.termination == nil }) {
            Signal.kill.send(to: pid, group: leadsGroup)
            if state.wait(timeout: .seconds(5), until: \.exited) { _ = reap() }
        }
    }

    // MARK: waiting

    /// True once the child has ended (it may not be reaped yet).
    package var hasExited: Bool { state.withLock { $0.exited } }

    /// How the child ended, without waiting; nil while it runs.
    package var exitStatus: Termination? {
        guard hasExited else { return nil }
        return reap()
    }

    /// Waits up to `timeout` (nil: as long as it takes) for the child to end
    /// and reaps it (a group leader takes what it left in its group with it);
    /// how it ended, or nil when it is still running.
    @discardableResult
    package func wait(timeout: Duration? = .seconds(30)) -> Termination? {
        guard state.wait(timeout: timeout, until: \.exited) else { return nil }
        return reap()
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

    /// Reaps the child once it has exited; every later call returns the same.
    private func reap() -> Termination {
        state.withLockNotifying { state in
            if let termination = state.termination { return termination }
            // The zombie still holds the group id: nothing else can have it.
            if leadsGroup { Signal.kill.send(to: pid, group: true) }
            var status: Int32 = 0
            let reaped = SystemCall.valueOrErrno { waitpid(pid, &status, 0) }
            let termination: Termination
            if case .failure = reaped {
                termination = .exited(255)  // cannot happen for our own child
            } else if flowd_wait_signaled(status) != 0 {
                termination = .signaled(Signal(rawValue: flowd_wait_term_signal(status)))
            } else {
                termination = .exited(flowd_wait_exit_status(status))
            }
            state.exited = true
            state.termination = termination
            return termination
        }
    }

    // MARK: the reaper

    /// The reaper: `waitid(WEXITED | WNOWAIT)` sees the exit and leaves the
    /// zombie for ``reap()``.
    private static func awaitExit(_ pid: Int32, state: LockedValue<State>) {
        var info = siginfo_t()
        _ = SystemCall.valueOrErrno { waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) }
        state.withLockNotifying { $0.exited = true }
    }
}

/// The `posix_spawn` file actions and attributes of one spawn, and the pipe
/// ends made for it.
private struct Spawner {
    /// What ``setUp(_:as:childReads:)`` made for one stream.
    struct Stream {
        /// A ``ChildStream/pipe`` end this process keeps.
        var kept: FileDescriptor?
    }

    var actions = posix_spawn_file_actions_t()
    /// The pipe ends that belong to the child; closed here once it runs.
    var childEnds: [FileDescriptor] = []

    init() {
        posix_spawn_file_actions_init(&actions)
    }

    mutating func destroy() {
        posix_spawn_file_actions_destroy(&actions)
        closeChildEnds()
    }

    mutating func closeChildEnds() {
        for end in childEnds { end.close() }
        childEnds = []
    }

    mutating func duplicate(_ fd: Int32, to number: Int32) {
        posix_spawn_file_actions_adddup2(&actions, fd, number)
    }

    mutating func closeFrom(_ number: Int32) {
        posix_spawn_file_actions_addclosefrom_np(&actions, number)
    }

    mutating func setUp(_ stream: ChildStream, as number: Int32, childReads: Bool) throws(SystemCallError) -> Stream {
        switch stream {
        case .inherit:
            return Stream()
        case .null:
            posix_spawn_file_actions_addopen(&actions, number, "/dev/null", childReads ? O_RDONLY : O_WRONLY, 0)
            return Stream()
        case .path(let path, let flags, let mode):
            posix_spawn_file_actions_addopen(&actions, number, path, flags.rawValue, mode_t(mode))
            return Stream()
        case .descriptor(let fd):
            duplicate(fd.rawValue, to: number)
            return Stream()
        case .sameAs(let other):
            duplicate(other, to: number)
            return Stream()
        case .pipe:
            let (read, write) = try FileDescriptor.pipe()
            let (childEnd, ourEnd) = childReads ? (read, write) : (write, read)
            duplicate(childEnd.rawValue, to: number)
            childEnds.append(childEnd)
            return Stream(kept: ourEnd)
        }
    }

    /// `posix_spawn` (`posix_spawnp` for a bare name) with a clean signal
    /// state. `ETXTBSY` (a program file that was just written, or a moment-old
    /// descriptor of it in another thread's fork) is retried briefly.
    mutating func spawn(
        _ executable: String, argv: [String], environment: [String], newProcessGroup: Bool, newSession: Bool
    ) throws(SystemCallError) -> Int32 {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        if newProcessGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
        }
        if newSession { flags |= FLOWD_POSIX_SPAWN_SETSID }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let searchPath = !executable.contains("/")
        var pid: Int32 = 0
        var result: Int32 = 0
        for attempt in 0..<5 {
            result = Self.withCStrings(argv) { argv in
                Self.withCStrings(environment) { envp in
                    searchPath
                        ? posix_spawnp(&pid, executable, &actions, &attributes, argv, envp)
                        : posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
                }
            }
            if result != Errno.textFileBusy.rawValue { break }
            MonotonicClock.sleep(for: .milliseconds(10 * (attempt + 1)))
        }
        guard result == 0 else { throw SystemCallError("posix_spawn", path: executable, errno: Errno(rawValue: result)) }
        return pid
    }

    /// A NULL-terminated array of C strings that lives for the call of `body`.
    private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
        let copies: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) } + [nil]
        defer { copies.forEach { free($0) } }
        return body(copies)
    }
}
