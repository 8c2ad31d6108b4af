import Glibc

/// A process the benchmark started (`posix_spawnp`): stdin from `/dev/null`,
/// stdout and stderr to files, an empty signal mask. Killed on deinit if
/// still running.
final class ChildProcess {
    let pid: pid_t
    let name: String
    private var reaped = false
    private(set) var exitDescription: String?

    /// Starts `argv[0]` (looked up in `PATH` when it has no slash).
    /// `environment` is added to (and overrides) this process's.
    init(
        _ argv: [String], environment: [String: String] = [:], stdout: String, stderr: String
    ) throws(BenchError) {
        guard let executable = argv.first else { throw .setup("no command to run") }
        name = (executable as String).split(separator: "/").last.map(String.init) ?? executable
        var env: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let eq = text.firstIndex(of: "=") { env[String(text[..<eq])] = String(text[text.index(after: eq)...]) }
            pointer += 1
        }
        env.merge(environment) { _, new in new }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))

        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            cArgs.forEach { free($0) }
            cEnv.forEach { free($0) }
        }
        var child: pid_t = 0
        let rc = posix_spawnp(&child, executable, &actions, &attributes, cArgs, cEnv)
        guard rc == 0 else { throw .process("cannot start \(executable): \(String(cString: strerror(rc)))") }
        pid = child
    }

    deinit {
        if !reaped {
            kill(pid, SIGKILL)
            _ = waitFor(milliseconds: 5000)
        }
    }

    /// True while the process has not ended.
    var isRunning: Bool {
        if reaped { return false }
        return !waitFor(milliseconds: 0)
    }

    /// Waits up to `milliseconds` for the process to end (`waitpid`); true when it ended.
    @discardableResult
    func waitFor(milliseconds: Int) -> Bool {
        if reaped { return true }
        let deadline = Posix.monotonicNanoseconds() + UInt64(milliseconds) * 1_000_000
        while true {
            var status: Int32 = 0
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid {
                reaped = true
                // WIFEXITED / WEXITSTATUS / WTERMSIG are macros; decode by hand.
                exitDescription = status & 0x7f == 0
                    ? "exited with status \((status >> 8) & 0xff)" : "killed by signal \(status & 0x7f)"
                return true
            }
            if r < 0 && errno != EINTR {
                reaped = true
                exitDescription = "gone"
                return true
            }
            if Posix.monotonicNanoseconds() >= deadline { return false }
            Posix.sleep(milliseconds: 5)
        }
    }

    /// SIGTERM, then SIGKILL after `grace` milliseconds; waits for the end.
    func terminate(graceMilliseconds: Int = 10_000) {
        guard !reaped else { return }
        kill(pid, SIGTERM)
        if waitFor(milliseconds: graceMilliseconds) { return }
        kill(pid, SIGKILL)
        waitFor(milliseconds: 10_000)
    }
}
