@testable import FlowCLI
import FlowdSystem

/// A text sink that keeps what it is given, for tests.
final class BufferSink: TextSink {
    private let buffer = LockedValue("")

    /// An empty buffer.
    init() {}

    func write(_ text: String) {
        buffer.withLock { $0 += text }
    }

    /// Everything written so far.
    var text: String { buffer.withLock { $0 } }
}

/// Scripted input lines, for tests: each `readLine` returns the next one.
final class ScriptedSource: LineSource {
    private let lines: LockedValue<[String]>
    /// Whether to behave as a terminal would (the wizard's prompts are written either way).
    let isTerminal: Bool
    /// The `echo` argument of every read so far, to check secrets were asked for without echo.
    private let echoes = LockedValue<[Bool]>([])

    /// A source that answers `lines` in order, then reports the end of input.
    init(_ lines: [String], isTerminal: Bool = true) {
        self.lines = LockedValue(lines)
        self.isTerminal = isTerminal
    }

    /// The next scripted line; the `echo` asked for is recorded.
    func readLine(echo: Bool, prompt: () -> Void) throws(CLIError) -> String? {
        prompt()
        echoes.withLock { $0.append(echo) }
        return lines.withLock { $0.isEmpty ? nil : $0.removeFirst() }
    }

    /// Scripted input is never read while something runs: waits for `wake`.
    func waitForLine(echo: Bool, waking wake: Int32, prompt: () -> Void) throws(CLIError) -> LineWait {
        prompt()
        return try LineWaits.until(readable: wake)
    }

    /// The lines not read yet.
    var remaining: [String] { lines.withLock { $0 } }
    /// For each read so far, whether it echoed.
    var echoFlags: [Bool] { echoes.withLock { $0 } }
}
