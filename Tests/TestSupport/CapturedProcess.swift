/// A child process whose standard output and standard error threads of the
/// test read to their end, for tests that look at what a program printed.
/// Product code reads its children's pipes itself (the Command plugin) or
/// sends their output to files (the bench), so capture lives here.
package final class CapturedProcess: Sendable {
    /// The running child.
    package let process: ChildProcess
    private let captured: LockedValue<Captured>

    private struct Captured {
        var output: [UInt8] = []
        var error: [UInt8] = []
        /// Streams not yet read to their end.
        var open = 2
    }

    /// Starts `executable` with `arguments`, standard input `/dev/null` and
    /// both output streams captured. `environment` is added to this process's
    /// (and overrides it), or is the whole environment without
    /// `inheritEnvironment`.
    package init(
        _ executable: String, _ arguments: [String] = [], environment: [String: String] = [:],
        inheritEnvironment: Bool = true
    ) throws(SystemCallError) {
        var all = inheritEnvironment ? CurrentProcess.environment() : [:]
        all.merge(environment) { _, new in new }
        var options = ChildProcess.Options(executable, arguments, environment: all)
        options.standardOutput = .pipe
        options.standardError = .pipe
        process = try ChildProcess(options)
        let captured = LockedValue(Captured())
        self.captured = captured
        for (pipe, isError) in [(process.standardOutputPipe, false), (process.standardErrorPipe, true)] {
            guard let pipe else { continue }
            do {
                try SystemThread.detach(name: "test-capture") { Self.read(pipe, into: captured, isError: isError) }
            } catch {
                process.terminate(grace: .seconds(1))
                throw error
            }
        }
    }

    /// What the child wrote to standard output so far.
    package var standardOutput: String { captured.withLock { String(decoding: $0.output, as: UTF8.self) } }

    /// What the child wrote to standard error so far.
    package var standardError: String { captured.withLock { String(decoding: $0.error, as: UTF8.self) } }

    /// The child's process id.
    package var pid: Int32 { process.pid }

    /// How the child ended, without waiting; nil while it runs.
    package var exitStatus: Termination? { process.exitStatus }

    /// Sends `signal` to the child.
    package func send(_ signal: Signal) { process.send(signal) }

    /// Waits up to `timeout` until `predicate` holds for the standard output
    /// captured so far (for example "printed its address"). False on timeout,
    /// or when the output is complete without it.
    package func waitForOutput(timeout: Duration = .seconds(20), until predicate: (String) -> Bool) -> Bool {
        var matched = false
        captured.wait(timeout: timeout) { state in
            matched = predicate(String(decoding: state.output, as: UTF8.self))
            return matched || state.open == 0
        }
        return matched
    }

    /// Waits up to `timeout` (nil: as long as it takes) for the child to end
    /// and its output to be read to the end; how it ended, or nil when it is
    /// still running (or something it started still holds its output open).
    @discardableResult
    package func wait(timeout: Duration? = .seconds(30)) -> Termination? {
        let deadline = timeout.map { MonotonicClock.now().advanced(by: $0) }
        guard let termination = process.wait(timeout: timeout) else { return nil }
        let left = deadline.map { $0.duration(since: MonotonicClock.now()) }
        guard captured.wait(timeout: left, until: { $0.open == 0 }) else { return nil }
        return termination
    }

    /// SIGTERM, then SIGKILL after `grace`; how it ended (nil if it did not).
    @discardableResult
    package func terminate(grace: Duration = .seconds(5)) -> Termination? {
        process.terminate(grace: grace)
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
        let child = try CapturedProcess(
            executable, arguments, environment: environment, inheritEnvironment: inheritEnvironment)
        guard let status = child.wait(timeout: timeout) else {
            child.terminate(grace: .seconds(1))
            throw SystemCallError("wait for \(child.process.commandLine)", errno: .timedOut)
        }
        return Result(status: status, standardOutput: child.standardOutput, standardError: child.standardError)
    }

    private static func read(_ pipe: FileDescriptor, into captured: LockedValue<Captured>, isError: Bool) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = (try? pipe.read(into: &buffer)) ?? 0
            captured.withLockNotifying { state in
                if count <= 0 {
                    state.open -= 1
                } else if isError {
                    state.error += buffer[0..<count]
                } else {
                    state.output += buffer[0..<count]
                }
            }
            if count <= 0 { return }
        }
    }
}
