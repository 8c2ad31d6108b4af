import Foundation

/// How a child process ended.
public enum ExitStatus: Equatable, Sendable, CustomStringConvertible {
    /// It called `exit` with this code.
    case exited(Int32)
    /// A signal ended it.
    case signaled(Int32)

    public var description: String {
        switch self {
        case .exited(let code): return "exited with \(code)"
        case .signaled(let signal): return "killed by signal \(signal)"
        }
    }
}

/// A child process started with `posix_spawnp`, its stdout and stderr captured.
///
/// The child gets `/dev/null` as stdin, an empty signal mask and default
/// signal dispositions (the test process may block signals for a Reactor loop).
/// Waiting is bounded by a timeout and never polls: reader threads and a
/// `waitpid` thread wake the waiters.
public final class ChildProcess: @unchecked Sendable {
    /// The child's process id.
    public let pid: pid_t
    /// The command line, for messages.
    public let commandLine: String

    private let condition = NSCondition()
    private var output = Data()
    private var errorOutput = Data()
    private var openStreams = 2
    private var status: ExitStatus?

    /// Starts `executable` (looked up in `PATH` when it has no slash) with
    /// `arguments`. `environment` is added to (and overrides) this process's.
    public init(
        _ executable: String, _ arguments: [String] = [], environment: [String: String] = [:],
        inheritEnvironment: Bool = true
    ) throws {
        commandLine = ([executable] + arguments).joined(separator: " ")
        var env = inheritEnvironment ? ProcessInfo.processInfo.environment : [:]
        env.merge(environment) { _, new in new }

        var outPipe: [Int32] = [-1, -1]
        var errPipe: [Int32] = [-1, -1]
        // Socket pairs instead of pipes: they can be created close-on-exec
        // atomically (pipe2 is not imported), so a child spawned concurrently by
        // another test never inherits them and holds our reader open.
        let streamType = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, streamType, 0, &outPipe) == 0,
              socketpair(AF_UNIX, streamType, 0, &errPipe) == 0 else {
            throw TestSupportError("socketpair failed: \(String(cString: strerror(errno)))")
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)

        var attributes = posix_spawnattr_t()
        initSpawnAttributes(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let result = posix_spawnp(&child, executable, &actions, &attributes, argv, envp)
        close(outPipe[1])
        close(errPipe[1])
        guard result == 0 else {
            close(outPipe[0])
            close(errPipe[0])
            throw TestSupportError("cannot start \(executable): \(String(cString: strerror(result)))")
        }
        pid = child
        let spawned = child
        startReader(fd: outPipe[0], isError: false)
        startReader(fd: errPipe[0], isError: true)
        let thread = Thread { [self] in
            var raw: Int32 = 0
            while waitpid(spawned, &raw, 0) == -1 && errno == EINTR {}
            // WIFEXITED / WEXITSTATUS / WTERMSIG are macros; decode by hand.
            let exited = raw & 0x7f == 0
            let ended: ExitStatus = exited ? .exited((raw >> 8) & 0xff) : .signaled(raw & 0x7f)
            condition.lock()
            status = ended
            condition.broadcast()
            condition.unlock()
        }
        thread.start()
    }

    deinit {
        if status == nil { kill(pid, SIGKILL) }
    }

    private func startReader(fd: Int32, isError: Bool) {
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = read(fd, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                condition.lock()
                if count > 0 {
                    if isError { errorOutput.append(contentsOf: buffer[0..<count]) } else { output.append(contentsOf: buffer[0..<count]) }
                } else {
                    openStreams -= 1
                }
                condition.broadcast()
                condition.unlock()
                if count <= 0 { break }
            }
            close(fd)
        }
        thread.start()
    }

    /// What the child wrote to stdout so far.
    public var standardOutput: String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: output, as: UTF8.self)
    }

    /// What the child wrote to stderr so far.
    public var standardError: String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: errorOutput, as: UTF8.self)
    }

    /// The exit status once the child ended, without waiting.
    public var exitStatus: ExitStatus? {
        condition.lock()
        defer { condition.unlock() }
        return status
    }

    /// Waits up to `timeout` for the child to end and its output to be read
    /// completely; nil if it is still running.
    public func wait(timeout: Duration = .seconds(30)) -> ExitStatus? {
        let deadline = Date().addingTimeInterval(timeout.timeInterval)
        condition.lock()
        defer { condition.unlock() }
        while status == nil || openStreams > 0 {
            if !condition.wait(until: deadline) { break }
        }
        return openStreams > 0 ? nil : status
    }

    /// Waits up to `timeout` until `predicate` holds for the stdout captured so
    /// far (for example "printed its address"). False on timeout or exit.
    public func waitForOutput(timeout: Duration = .seconds(20), until predicate: (String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout.timeInterval)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if predicate(String(decoding: output, as: UTF8.self)) { return true }
            if openStreams == 0 && status != nil { return false }
            if !condition.wait(until: deadline) { return predicate(String(decoding: output, as: UTF8.self)) }
        }
    }

    /// Sends `signal` to the child (ignored once it ended).
    public func send(signal: Int32) {
        condition.lock()
        defer { condition.unlock() }
        if status == nil { kill(pid, signal) }
    }

    /// SIGTERM, then SIGKILL if it has not ended after `grace`; waits for it.
    @discardableResult
    public func terminate(grace: Duration = .seconds(5)) -> ExitStatus? {
        send(signal: SIGTERM)
        if let ended = wait(timeout: grace) { return ended }
        send(signal: SIGKILL)
        return wait(timeout: .seconds(10))
    }

    /// The result of ``run(_:_:environment:timeout:)``.
    public struct Result: Sendable {
        public let status: ExitStatus
        public let standardOutput: String
        public let standardError: String
    }

    /// Runs a command to completion (killed after `timeout`) and returns its
    /// output. `environment` is added to this process's, or is the whole
    /// environment when `inheritEnvironment` is false.
    public static func run(
        _ executable: String, _ arguments: [String] = [], environment: [String: String] = [:],
        inheritEnvironment: Bool = true, timeout: Duration = .seconds(30)
    ) throws -> Result {
        let child = try ChildProcess(executable, arguments, environment: environment, inheritEnvironment: inheritEnvironment)
        guard let status = child.wait(timeout: timeout) else {
            child.terminate(grace: .seconds(1))
            throw TestSupportError("\(child.commandLine) did not finish within \(timeout)")
        }
        return Result(status: status, standardOutput: child.standardOutput, standardError: child.standardError)
    }
}

/// Initializes `attributes` so that the child starts with an empty signal
/// mask and every signal at its default disposition (the test process may
/// block signals for a Reactor loop), plus `extraFlags`. The caller destroys
/// them with `posix_spawnattr_destroy`.
public func initSpawnAttributes(_ attributes: inout posix_spawnattr_t, extraFlags: Int32 = 0) {
    posix_spawnattr_init(&attributes)
    var noSignals = sigset_t()
    sigemptyset(&noSignals)
    posix_spawnattr_setsigmask(&attributes, &noSignals)
    var allSignals = sigset_t()
    sigfillset(&allSignals)
    posix_spawnattr_setsigdefault(&attributes, &allSignals)
    posix_spawnattr_setflags(&attributes, Int16(Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF) | extraFlags))
}
