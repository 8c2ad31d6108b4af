// The process side of flowd.command: feed, read, time out. Spawning, waiting
// and signalling are FlowdSystem's ChildProcess.
import FlowdSystem

/// How a program run ended.
enum ChildEnding: Equatable {
    case exited(Int32)
    case signalled(Int32)
    /// Killed by us after the timeout.
    case timedOut
    /// Killed by us because the submit was cancelled.
    case cancelled
}

/// A finished program: how it ended and (the tail of) what it wrote.
struct ChildRun {
    var ending: ChildEnding
    var pid: Int32
    var standardOutput: [UInt8]
    var standardError: [UInt8]
}

/// Runs one program to its end.
enum CommandRun {
    /// The most output kept per stream; older bytes are dropped.
    static let outputLimit = 64 * 1024
    /// Between SIGTERM and SIGKILL.
    static let gracePeriod = Duration.seconds(2)

    /// Spawns `path` with exactly `arguments` and `environment` in a process
    /// group of its own, writes `input` to its standard input, collects its
    /// output, and waits until it exits, `timeout` seconds pass, or the
    /// calling task is cancelled. In the last two cases its process group gets
    /// SIGTERM, then SIGKILL after ``gracePeriod``. Whatever it left running in
    /// its group is killed when it ends, and it is always reaped before this
    /// returns.
    static func run(
        path: String, arguments: [String], environment: [String: String], input: [UInt8], timeout: Double
    ) async throws(CommandError) -> ChildRun {
        let wake: (read: FileDescriptor, write: FileDescriptor)
        do {
            wake = try FileDescriptor.pipe()
        } catch {
            throw CommandError("\(error)")
        }
        let writeEnd = wake.write
        let result = await withTaskCancellationHandler {
            Result { () throws(CommandError) -> ChildRun in
                try runBlocking(
                    path: path, arguments: arguments, environment: environment, input: input, timeout: timeout,
                    wake: wake.read)
            }
        } onCancel: {
            _ = try? writeEnd.writeAll([1])
        }
        return try result.get()
    }

    private static func runBlocking(
        path: String, arguments: [String], environment: [String: String], input: [UInt8], timeout: Double,
        wake: FileDescriptor
    ) throws(CommandError) -> ChildRun {
        var options = ChildProcess.Options(path, arguments, environment: environment)
        options.standardInput = .pipe
        options.standardOutput = .pipe
        options.standardError = .pipe
        options.newProcessGroup = true
        let child: ChildProcess
        do {
            child = try ChildProcess(options)
        } catch {
            throw CommandError("\(error)")
        }
        // A program that exits without reading all its input makes our write
        // raise SIGPIPE, whose default action would kill the daemon.
        return try Signal.withBrokenPipeBlocked { () throws(CommandError) -> ChildRun in
            try exchange(with: child, input: input, timeout: timeout, wake: wake)
        }
    }

    private static func exchange(
        with child: ChildProcess, input: [UInt8], timeout: Double, wake: FileDescriptor
    ) throws(CommandError) -> ChildRun {
        let deadline = MonotonicClock.now().advanced(by: .milliseconds(Int64(timeout * 1000)))
        var streams = Streams(child: child)
        do {
            try streams.setNonBlocking()
        } catch {
            throw CommandError("\(error)")
        }
        if input.isEmpty { streams.input?.close() }
        var written = 0
        var ending: ChildEnding?
        while ending == nil {
            if child.hasExited {
                // Done. If something it started still holds the pipes, take
                // what is there now and stop waiting for end of file.
                streams.drain()
                break
            }
            let now = MonotonicClock.now()
            if now >= deadline {
                ending = .timedOut
                break
            }
            // Wake at least every 20 ms to notice the exit of a child whose
            // pipes stay open.
            let wait = min(deadline.duration(since: now), .milliseconds(20))
            let ready: [PollEvents]
            do {
                ready = try Poll.wait([(descriptor: wake.rawValue, events: .readable)] + streams.pollRequests, timeout: wait)
            } catch {
                throw CommandError("\(error)")
            }
            if !ready[0].isEmpty {
                ending = .cancelled
                break
            }
            written = streams.feed(input, from: written)
            streams.drain()
        }
        streams.input?.close()
        if ending != nil {
            // Timed out or cancelled: ask nicely, then insist.
            child.terminate(grace: gracePeriod)
        }
        let termination = child.wait(timeout: nil) ?? .exited(255)
        streams.drain()
        let finalEnding: ChildEnding
        switch (ending, termination) {
        case (let ending?, _): finalEnding = ending
        case (nil, .exited(let status)): finalEnding = .exited(status)
        case (nil, .signaled(let signal)): finalEnding = .signalled(signal.rawValue)
        }
        return ChildRun(
            ending: finalEnding, pid: child.pid, standardOutput: streams.output.bytes, standardError: streams.error.bytes)
    }
}

/// This process's ends of the child's standard streams, and what came out.
private struct Streams {
    var input: FileDescriptor?
    let outputPipe: FileDescriptor?
    let errorPipe: FileDescriptor?
    var output = OutputTail(limit: CommandRun.outputLimit)
    var error = OutputTail(limit: CommandRun.outputLimit)

    init(child: ChildProcess) {
        input = child.standardInputPipe
        outputPipe = child.standardOutputPipe
        errorPipe = child.standardErrorPipe
    }

    func setNonBlocking() throws(SystemCallError) {
        for fd in [input, outputPipe, errorPipe].compactMap({ $0 }) { try fd.setNonBlocking() }
    }

    /// What to wait for: output to read, room in the input pipe.
    var pollRequests: [(descriptor: Int32, events: PollEvents)] {
        var requests: [(descriptor: Int32, events: PollEvents)] = []
        for fd in [outputPipe, errorPipe].compactMap({ $0 }) where fd.isOpen { requests.append((fd.rawValue, .readable)) }
        if let input, input.isOpen { requests.append((input.rawValue, .writable)) }
        return requests
    }

    /// Writes what the pipe takes without blocking; closes it when done or
    /// when the reader has gone (`EPIPE`: the program does not read its input).
    func feed(_ input: [UInt8], from offset: Int) -> Int {
        guard let pipe = self.input, pipe.isOpen else { return offset }
        var offset = offset
        while offset < input.count {
            do {
                offset += try pipe.write(someOf: input[offset..<min(input.count, offset + 65536)])
            } catch where error.errno == .wouldBlock {
                return offset
            } catch {
                pipe.close()
                return offset
            }
        }
        pipe.close()
        return offset
    }

    /// Reads what is there without blocking; closes a pipe at end of file.
    mutating func drain() {
        Self.drain(outputPipe, into: &output)
        Self.drain(errorPipe, into: &error)
    }

    private static func drain(_ fd: FileDescriptor?, into tail: inout OutputTail) {
        guard let fd, fd.isOpen else { return }
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            do {
                let count = try fd.read(into: &chunk)
                if count == 0 { break }
                tail.append(chunk[0..<count])
            } catch where error.errno == .wouldBlock {
                return
            } catch {
                break
            }
        }
        fd.close()
    }
}

/// The last `limit` bytes of a stream.
struct OutputTail {
    let limit: Int
    private(set) var bytes: [UInt8] = []

    init(limit: Int) { self.limit = limit }

    mutating func append(_ chunk: ArraySlice<UInt8>) {
        bytes.append(contentsOf: chunk)
        if bytes.count > limit { bytes.removeFirst(bytes.count - limit) }
    }
}
