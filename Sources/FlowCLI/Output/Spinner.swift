import FlowdSystem

/// A spinner on standard error while a blocking call runs (a submit). Only
/// on a terminal: piped or redirected output gets no spinner and no escape
/// codes. The first frame appears after a short delay, so quick calls do not
/// flicker.
package final class Spinner: Sendable {
    private let sink: any TextSink
    private let message: String
    private let fd: Int32?
    private let state = LockedValue<State>(.waiting)

    private enum State {
        case waiting, spinning, stopped
    }

    private static let frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

    private init(sink: any TextSink, message: String, fd: Int32?) {
        self.sink = sink
        self.message = message
        self.fd = fd
    }

    /// Runs `body`; while it runs and `enabled` is true, `message` spins on `sink`.
    /// `fd` is the descriptor behind `sink`, so an interrupt can erase the line.
    package static func during<T, E: Error>(
        _ message: String, enabled: Bool, sink: any TextSink, fd: Int32? = 2, _ body: () throws(E) -> T
    ) throws(E) -> T {
        guard enabled else { return try body() }
        let spinner = Spinner(sink: sink, message: message, fd: fd)
        spinner.start()
        defer { spinner.stop() }
        return try body()
    }

    private func start() {
        // Without a thread there is no spinner; the call runs all the same.
        try? SystemThread.detach(name: "flowctl-spinner") { [self] in
            MonotonicClock.sleep(for: .milliseconds(250))
            var frame = 0
            while true {
                let keepGoing = state.withLock { state -> Bool in
                    guard state != .stopped else { return false }
                    if state == .waiting {
                        state = .spinning
                        TerminalGuard.shared.noteSpinner(fd: fd)
                    }
                    sink.write("\r\u{1B}[K" + Self.frames[frame % Self.frames.count] + " " + message)
                    return true
                }
                guard keepGoing else { break }
                frame += 1
                MonotonicClock.sleep(for: .milliseconds(100))
            }
        }
    }

    private func stop() {
        state.withLock { state in
            if state == .spinning {
                sink.write("\r\u{1B}[K")
                TerminalGuard.shared.noteSpinner(fd: nil)
            }
            state = .stopped
        }
    }
}
