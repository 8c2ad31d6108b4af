// The POSIX side of flowd.command: spawn, feed, read, time out, reap. Every C
// call of the plugin goes through here.
import Glibc
import Synchronization

/// A C call that failed, with errno.
struct SystemCallError: Error, CustomStringConvertible {
    var call: String
    var code: Int32

    var description: String {
        var buffer = [CChar](repeating: 0, count: 256)
        let text = strerror_r(code, &buffer, buffer.count) == 0
            ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            : "errno \(code)"
        return "\(CommandAction.name): \(call): \(text)"
    }
}

/// How a child process ended.
enum ChildEnding: Equatable {
    case exited(Int32)
    case signalled(Int32)
    /// Killed by us after the timeout.
    case timedOut
    /// Killed by us because the submit was cancelled.
    case cancelled
}

/// A finished child: how it ended and (the tail of) what it wrote.
struct ChildRun {
    var ending: ChildEnding
    var pid: pid_t
    var standardOutput: [UInt8]
    var standardError: [UInt8]
}

/// An owned file descriptor; `close()` is idempotent.
final class Descriptor {
    private(set) var raw: Int32

    init(_ raw: Int32) { self.raw = raw }
    deinit { close() }

    /// `close(2)`.
    func close() {
        if raw >= 0 { _ = Glibc.close(raw) }
        raw = -1
    }
}

/// Runs one program to its end.
enum ChildProcess {
    /// The most output kept per stream; older bytes are dropped.
    static let outputLimit = 64 * 1024
    /// Between SIGTERM and SIGKILL.
    static let gracePeriod = 2.0

    /// Spawns `path` with exactly `arguments` and `environment`, writes `input`
    /// to its standard input, collects its output, and waits until it exits,
    /// `timeout` seconds pass, or the calling task is cancelled. In the last
    /// two cases its process group gets SIGTERM, then SIGKILL after
    /// ``gracePeriod``. The child is always reaped before this returns.
    static func run(
        path: String, arguments: [String], environment: [String], input: [UInt8], timeout: Double
    ) async throws(SystemCallError) -> ChildRun {
        let wake = try makePipe()
        let state = CancelSignal(writeEnd: wake.write.raw)
        let result = await withTaskCancellationHandler {
            Result { () throws(SystemCallError) -> ChildRun in
                try runBlocking(
                    path: path, arguments: arguments, environment: environment, input: input, timeout: timeout,
                    wake: wake.read)
            }
        } onCancel: {
            state.fire()
        }
        return try result.get()
    }

    /// Writes one byte to the wake-up pipe when the task is cancelled.
    private final class CancelSignal: Sendable {
        private let writeEnd: Int32
        init(writeEnd: Int32) { self.writeEnd = writeEnd }
        func fire() {
            var byte: UInt8 = 1
            _ = Glibc.write(writeEnd, &byte, 1)
        }
    }

    private static func runBlocking(
        path: String, arguments: [String], environment: [String], input: [UInt8], timeout: Double, wake: Descriptor
    ) throws(SystemCallError) -> ChildRun {
        // A program that exits without reading all its input makes our write
        // raise SIGPIPE, whose default action would kill the daemon.
        let restore = blockBrokenPipeSignal()
        defer { restore() }
        let stdin = try makePipe()
        let stdout = try makePipe()
        let stderr = try makePipe()
        let pid = try spawn(
            path: path, arguments: arguments, environment: environment,
            stdin: stdin.read.raw, stdout: stdout.write.raw, stderr: stderr.write.raw)
        stdin.read.close()
        stdout.write.close()
        stderr.write.close()
        try setNonBlocking(stdin.write.raw)
        try setNonBlocking(stdout.read.raw)
        try setNonBlocking(stderr.read.raw)

        let deadline = monotonicNow() + timeout
        var out = OutputTail(limit: outputLimit)
        var err = OutputTail(limit: outputLimit)
        var written = 0
        if input.isEmpty { stdin.write.close() }
        var exited = false
        var ending: ChildEnding?

        while ending == nil {
            if !exited { exited = hasExited(pid) }
            if exited {
                // Done. If something it started still holds the pipes, take
                // what is there now and stop waiting for end of file.
                drain(stdout.read, into: &out)
                drain(stderr.read, into: &err)
                break
            }
            let remaining = deadline - monotonicNow()
            if remaining <= 0 {
                ending = .timedOut
                break
            }
            var fds = [pollfd(fd: wake.raw, events: Int16(POLLIN), revents: 0)]
            if stdout.read.raw >= 0 { fds.append(pollfd(fd: stdout.read.raw, events: Int16(POLLIN), revents: 0)) }
            if stderr.read.raw >= 0 { fds.append(pollfd(fd: stderr.read.raw, events: Int16(POLLIN), revents: 0)) }
            if stdin.write.raw >= 0 { fds.append(pollfd(fd: stdin.write.raw, events: Int16(POLLOUT), revents: 0)) }
            // Wake at least every 20 ms to notice the exit of a child whose
            // pipes stay open.
            let wait = Int32(min(remaining, 0.02) * 1000) + 1
            let n = poll(&fds, nfds_t(fds.count), wait)
            if n < 0 && errno != EINTR { throw SystemCallError(call: "poll", code: errno) }
            if fds[0].revents != 0 {
                ending = .cancelled
                break
            }
            if stdin.write.raw >= 0 {
                written = feed(stdin.write, input, from: written)
            }
            drain(stdout.read, into: &out)
            drain(stderr.read, into: &err)
        }
        stdin.write.close()

        if ending != nil {
            // Timed out or cancelled: ask nicely, then insist.
            _ = kill(-pid, SIGTERM)
            let until = monotonicNow() + gracePeriod
            while !hasExited(pid) && monotonicNow() < until {
                usleep(10_000)
            }
        }
        // The leader is alive or a zombie, so its process group id is still
        // ours: whatever the program left running in its group goes too.
        _ = kill(-pid, SIGKILL)
        let status = reap(pid)
        drain(stdout.read, into: &out)
        drain(stderr.read, into: &err)
        return ChildRun(
            ending: ending ?? decode(status), pid: pid, standardOutput: out.bytes, standardError: err.bytes)
    }

    /// `waitid(2)` with `WNOHANG|WNOWAIT`: true once `pid` has exited, without
    /// reaping it (the zombie keeps its process group id from being reused).
    private static func hasExited(_ pid: pid_t) -> Bool {
        var info = siginfo_t()
        while true {
            if waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 {
                return info._sifields._kill.si_pid == pid
            }
            if errno == EINTR { continue }
            return true  // ECHILD: nothing left to wait for
        }
    }

    /// `waitpid(2)`, blocking: reaps `pid` and returns its raw status.
    private static func reap(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return 0xff00 }  // cannot happen for our own child; report exit 255
        }
        return status
    }

    /// `WIFEXITED`/`WEXITSTATUS`/`WTERMSIG` by hand: the macros are not
    /// imported into Swift.
    private static func decode(_ status: Int32) -> ChildEnding {
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
    }

    /// Blocks SIGPIPE in this thread (`pthread_sigmask(3)`) and returns what
    /// undoes that: it first consumes a SIGPIPE our writes left pending
    /// (`sigtimedwait(2)` with a zero timeout; a broken pipe's SIGPIPE goes to
    /// the writing thread), then restores the old mask. The write itself
    /// sees EPIPE.
    private static func blockBrokenPipeSignal() -> () -> Void {
        var pipeOnly = sigset_t()
        sigemptyset(&pipeOnly)
        sigaddset(&pipeOnly, SIGPIPE)
        var old = sigset_t()
        pthread_sigmask(SIG_BLOCK, &pipeOnly, &old)
        let wasBlocked = sigismember(&old, SIGPIPE) == 1
        return {
            var set = pipeOnly
            var noWait = timespec(tv_sec: 0, tv_nsec: 0)
            while sigtimedwait(&set, nil, &noWait) == SIGPIPE {}
            if !wasBlocked {
                var unblock = pipeOnly
                pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
            }
        }
    }

    /// Writes what the pipe takes without blocking; closes it when done or when
    /// the reader has gone.
    private static func feed(_ fd: Descriptor, _ input: [UInt8], from offset: Int) -> Int {
        var offset = offset
        while offset < input.count {
            let n = input.withUnsafeBytes { raw in
                Glibc.write(fd.raw, raw.baseAddress.map { $0 + offset }, min(input.count - offset, 65536))
            }
            if n > 0 {
                offset += n
                continue
            }
            if n < 0 && (errno == EAGAIN || errno == EINTR) { return offset }
            fd.close()  // EPIPE: the program does not read its input
            return offset
        }
        fd.close()
        return offset
    }

    /// Reads what is there without blocking; closes the descriptor at end of file.
    private static func drain(_ fd: Descriptor, into tail: inout OutputTail) {
        guard fd.raw >= 0 else { return }
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd.raw, $0.baseAddress, $0.count) }
            if n > 0 {
                tail.append(chunk[0..<n])
                continue
            }
            if n < 0 && (errno == EAGAIN || errno == EINTR) { return }
            fd.close()
            return
        }
    }

    // MARK: spawning

    /// `posix_spawn(3)` with the child's stdio on the given descriptors, every
    /// other descriptor closed, default signal dispositions, an empty signal
    /// mask and a process group of its own.
    private static func spawn(
        path: String, arguments: [String], environment: [String], stdin: Int32, stdout: Int32, stderr: Int32
    ) throws(SystemCallError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr, 2)
        if let closeFrom = GNU.addCloseFrom {
            _ = closeFrom(&actions, 3)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        var pid: pid_t = 0
        var rc: Int32 = 0
        // ETXTBSY: a file being written is in use; in a threaded process that
        // can also be another thread's fork holding a moment-old descriptor
        // of it. Try again briefly.
        for attempt in 0..<5 {
            rc = withCStrings(arguments) { argv in
                withCStrings(environment) { envp in
                    guard let argv, let envp else { return EINVAL }
                    return posix_spawn(&pid, path, &actions, &attributes, argv, envp)
                }
            }
            if rc != ETXTBSY { break }
            usleep(useconds_t(10_000 * (attempt + 1)))
        }
        guard rc == 0 else { throw SystemCallError(call: "posix_spawn \(path)", code: rc) }
        return pid
    }

    /// A NULL-terminated array of C strings that lives for the call of `body`.
    private static func withCStrings<R>(
        _ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>?) -> R
    ) -> R {
        let copies: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) } + [nil]
        defer { copies.forEach { free($0) } }
        return copies.withUnsafeBufferPointer { body($0.baseAddress) }
    }

    // MARK: descriptors

    /// `pipe2(2)` with `O_CLOEXEC` (so no other child spawned at the same time
    /// inherits it); falls back to `pipe(2)` + `fcntl(2)`.
    private static func makePipe() throws(SystemCallError) -> (read: Descriptor, write: Descriptor) {
        var fds: [Int32] = [-1, -1]
        if let pipe2 = GNU.pipe2 {
            guard pipe2(&fds, O_CLOEXEC) == 0 else { throw SystemCallError(call: "pipe2", code: errno) }
        } else {
            guard pipe(&fds) == 0 else { throw SystemCallError(call: "pipe", code: errno) }
            _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        }
        return (Descriptor(fds[0]), Descriptor(fds[1]))
    }

    /// `fcntl(2)` `O_NONBLOCK` on.
    private static func setNonBlocking(_ fd: Int32) throws(SystemCallError) {
        guard fd >= 0 else { return }
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else {
            throw SystemCallError(call: "fcntl", code: errno)
        }
    }

    /// `clock_gettime(CLOCK_MONOTONIC)` in seconds.
    private static func monotonicNow() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// The last `limit` bytes of a stream, and whether it has ended.
struct OutputTail {
    let limit: Int
    private(set) var bytes: [UInt8] = []

    init(limit: Int) { self.limit = limit }

    mutating func append(_ chunk: ArraySlice<UInt8>) {
        bytes.append(contentsOf: chunk)
        if bytes.count > limit { bytes.removeFirst(bytes.count - limit) }
    }

    /// True once the descriptor it reads from has been closed at end of file.
    func closed(_ fd: Descriptor) -> Bool { fd.raw < 0 }
}

/// glibc functions declared only under `_GNU_SOURCE`, which Swift's Glibc
/// module does not define: looked up once with `dlsym(RTLD_DEFAULT)`.
enum GNU {
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32

    /// `posix_spawn_file_actions_addclosefrom_np(3)` (glibc 2.34+).
    static let addCloseFrom: AddCloseFrom? = {
        dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map { unsafeBitCast($0, to: AddCloseFrom.self) }
    }()

    /// `pipe2(2)`.
    static let pipe2: Pipe2? = {
        dlsym(nil, "pipe2").map { unsafeBitCast($0, to: Pipe2.self) }
    }()
}
