import FlowdSystem

/// Where flowctl writes text: standard output, standard error, or a buffer in tests.
package protocol TextSink: AnyObject, Sendable {
    /// Writes `text` as it is (no newline is added).
    func write(_ text: String)
}

/// Where the wizard and `set FIELD=-` read lines from.
package protocol LineSource: AnyObject, Sendable {
    /// True when the input is a terminal (prompts are shown, secrets are read without echo).
    var isTerminal: Bool { get }
    /// Reads one line without its newline; nil at the end of the input.
    /// With `echo: false` on a terminal, the typed characters are not shown.
    /// `prompt` runs just before the read, once echo is off, so nothing typed
    /// in answer to the prompt can be echoed.
    func readLine(echo: Bool, prompt: () -> Void) throws(CLIError) -> String?
    /// Waits for a line, or until `wake` (a descriptor) becomes readable,
    /// whichever comes first; the wizard waits so for a submit and a key.
    /// Only a terminal offers a line while it waits: other input is kept for
    /// what comes after.
    func waitForLine(echo: Bool, waking wake: Int32, prompt: () -> Void) throws(CLIError) -> LineWait
}

/// What a wait for a line ended with.
package enum LineWait: Sendable, Hashable {
    /// A line was typed.
    case line(String)
    /// The input ended.
    case ended
    /// The descriptor to wake on became readable first.
    case woken
}

/// Waits that do not read a line.
enum LineWaits {
    /// Waits until `fd` is readable: `.woken`.
    static func until(readable fd: Int32) throws(CLIError) -> LineWait {
        while true {
            do {
                _ = try Poll.wait([(descriptor: fd, events: .readable)], timeout: nil)
                return .woken
            } catch where error.errno == .interrupted {
                continue
            } catch {
                throw CLIError(.ioError, "cannot wait for flowd's answer: \(error.errno)")
            }
        }
    }
}

extension LineSource {
    /// Reads one line, with no prompt.
    package func readLine(echo: Bool) throws(CLIError) -> String? {
        try readLine(echo: echo, prompt: {})
    }
}

/// A text sink writing straight to a file descriptor with `write(2)`; no
/// buffering, so a prompt is on the screen before the read that follows it.
package final class FileDescriptorSink: TextSink {
    /// The descriptor written to.
    package let fd: Int32

    /// A sink for `fd` (1 for standard output, 2 for standard error).
    package init(fd: Int32) { self.fd = fd }

    package func write(_ text: String) {
        // A closed pipe: there is nobody left to tell.
        try? FileDescriptor.writeAll(fd, text.utf8)
    }
}

/// Lines from a file descriptor (standard input), read a byte at a time with
/// `read(2)` so nothing past the line is consumed.
package final class FileDescriptorSource: LineSource {
    /// The descriptor read from.
    package let fd: Int32
    /// `isatty(fd)`, read once.
    package let isTerminal: Bool

    /// A source for `fd` (0 for standard input).
    package init(fd: Int32) {
        self.fd = fd
        isTerminal = Terminal.isTerminal(fd)
    }

    /// Reads up to a newline; with `echo: false` on a terminal, switches echo
    /// off (`tcsetattr`) for the read and back on afterwards, even on Ctrl-C.
    package func readLine(echo: Bool, prompt: () -> Void) throws(CLIError) -> String? {
        // The newline the person typed without echo was not echoed either.
        try withEcho(echo, newlineAfter: true) { () throws(CLIError) in
            prompt()
            return try readRawLine()
        }
    }

    package func waitForLine(echo: Bool, waking wake: Int32, prompt: () -> Void) throws(CLIError) -> LineWait {
        guard isTerminal else { return try LineWaits.until(readable: wake) }
        return try withEcho(echo, newlineAfter: false) { () throws(CLIError) in
            prompt()
            while true {
                let ready: [PollEvents]
                do throws(SystemCallError) {
                    ready = try Poll.wait([(descriptor: wake, events: .readable), (descriptor: fd, events: .readable)], timeout: nil)
                } catch where error.errno == .interrupted {
                    continue
                } catch {
                    throw CLIError(.ioError, "cannot wait for standard input: \(error.errno)")
                }
                if !ready[0].isEmpty { return .woken }
                if !ready[1].isEmpty {
                    guard let line = try readRawLine() else { return .ended }
                    return .line(line)
                }
            }
        }
    }

    /// Runs `body` with echo off when `echo` is false and the input is a
    /// terminal, and echo back on afterwards, even on Ctrl-C (``TerminalGuard``).
    private func withEcho<T>(_ echo: Bool, newlineAfter: Bool, _ body: () throws(CLIError) -> T) throws(CLIError) -> T {
        guard !echo, isTerminal, let saved = Terminal.settings(of: fd) else { return try body() }
        TerminalGuard.shared.noteEchoOff(fd: fd, saved: saved)
        Terminal.apply(saved.withoutEcho, to: fd)
        defer {
            Terminal.apply(saved, to: fd)
            TerminalGuard.shared.noteEchoRestored()
            if newlineAfter { try? FileDescriptor.writeAll(fd, "\n".utf8) }
        }
        return try body()
    }

    private func readRawLine() throws(CLIError) -> String? {
        var bytes: [UInt8] = []
        var one: [UInt8] = [0]
        while true {
            let count: Int
            do {
                count = try FileDescriptor.read(from: fd, into: &one)
            } catch {
                throw CLIError(.ioError, "cannot read standard input: \(error.errno)")
            }
            guard count == 1 else { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            let byte = one[0]
            if byte == UInt8(ascii: "\n") { break }
            bytes.append(byte)
            if bytes.count > 1 << 20 { throw CLIError(.dataError, "an input line is longer than 1 MiB") }
        }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// What must be undone if flowctl is interrupted: a terminal left without echo
/// and a spinner line. The signal thread asks it to clean up before exiting.
final class TerminalGuard: Sendable {
    static let shared = TerminalGuard()

    private struct State {
        var echoOff: (fd: Int32, saved: TerminalSettings)?
        var spinnerFD: Int32?
    }

    private let state = LockedValue(State())

    func noteEchoOff(fd: Int32, saved: TerminalSettings) {
        state.withLock { $0.echoOff = (fd, saved) }
    }

    func noteEchoRestored() {
        state.withLock { $0.echoOff = nil }
    }

    func noteSpinner(fd: Int32?) {
        state.withLock { $0.spinnerFD = fd }
    }

    /// Restores echo and erases a spinner line; safe to call more than once.
    func restore() {
        let (echo, spinner) = state.withLock { state in
            defer {
                state.echoOff = nil
                state.spinnerFD = nil
            }
            return (state.echoOff, state.spinnerFD)
        }
        if let spinner { try? FileDescriptor.writeAll(spinner, "\r\u{1B}[K".utf8) }
        if let echo {
            Terminal.apply(echo.saved, to: echo.fd)
            try? FileDescriptor.writeAll(echo.fd, "\n".utf8)
        }
    }
}
