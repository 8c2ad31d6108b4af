// The process side of flowd.command: start, feed, read, time out. Spawning,
// waiting and signalling are FlowdSystem's ChildProcess, whose one watcher
// thread feeds the program's input and reads its output: a running program
// holds none of the daemon's plugin threads.
import FlowdSystem

/// How a program run ended.
enum ChildEnding: Equatable {
    /// By itself: an exit, or a signal we did not send.
    case ended(Termination)
    /// Killed by us after the timeout.
    case timedOut
    /// Killed by us because the submit was cancelled.
    case cancelled
}

/// Runs one program to its end.
enum CommandRun {
    /// The most output kept per stream; older bytes are dropped.
    static let outputLimit = 64 * 1024
    /// Between SIGTERM and SIGKILL.
    static let gracePeriod = Duration.seconds(2)

    /// Spawns `path` with exactly `arguments` and `environment` in a process
    /// group of its own, gives it `input` on its standard input, collects its
    /// output, and suspends (holding no thread) until it exits, `timeout`
    /// seconds pass, or the calling task is cancelled. In the last two cases
    /// its process group gets SIGTERM, then SIGKILL after ``gracePeriod``.
    /// Whatever it left running in its group is killed when it ends, and it is
    /// always reaped before this returns. It dies with the daemon. How it
    /// ended, and the child, whose (captured tail of) output is complete.
    static func run(
        path: String, arguments: [String], environment: [String: String], input: [UInt8], timeout: Double
    ) async throws(CommandError) -> (ending: ChildEnding, child: ChildProcess) {
        var options = ChildProcess.Options(path, arguments, environment: environment)
        options.standardInput = .bytes(input)
        options.standardOutput = .capture
        options.standardError = .capture
        options.captureLimit = outputLimit
        options.newProcessGroup = true
        let child: ChildProcess
        do {
            child = try ChildProcess(options)
        } catch {
            throw CommandError("\(error)")
        }
        let deadline = MonotonicClock.now().advanced(by: .milliseconds(Int64(timeout * 1000)))
        if let termination = await child.ended(before: deadline) { return (.ended(termination), child) }
        // Timed out or cancelled: ask nicely, then insist.
        let ending: ChildEnding = Task.isCancelled ? .cancelled : .timedOut
        await child.terminated(grace: gracePeriod)
        return (ending, child)
    }
}
