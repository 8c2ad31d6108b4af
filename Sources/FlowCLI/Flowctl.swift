import FlowClient
import FlowEngine
import FlowdSystem

/// What a flowctl run is connected to: its streams, environment and daemon.
/// ``process()`` is the real process; tests build one with buffers and a fake
/// service.
package struct FlowctlContext: Sendable {
    /// Standard output.
    package var stdout: any TextSink
    /// Standard error.
    package var stderr: any TextSink
    /// Standard input (the wizard's answers, `set FIELD=-`).
    package var stdin: any LineSource
    /// Standard output is a terminal (colour, hints).
    package var stdoutIsTerminal: Bool
    /// Standard error is a terminal (spinner).
    package var stderrIsTerminal: Bool
    /// The descriptor behind standard error, for the spinner's clean-up; nil in tests.
    package var stderrFD: Int32?
    /// The width of the terminal on standard output, asked each time (the
    /// window may change); nil when it is not a terminal (then text is not wrapped).
    package var stdoutColumns: @Sendable () -> Int?
    /// The environment (`NO_COLOR`, `TERM`, `LANG`, …).
    package var environment: [String: String]
    /// Makes the service for the chosen bus.
    package var makeService: @Sendable (BusChoice) throws(CLIError) -> any FlowService
    /// Handles Ctrl-C (the real process); tests leave it off.
    package var handlesInterrupts: Bool

    /// A context; every part is given.
    package init(
        stdout: any TextSink, stderr: any TextSink, stdin: any LineSource, stdoutIsTerminal: Bool = false,
        stderrIsTerminal: Bool = false, stderrFD: Int32? = nil, stdoutColumns: @escaping @Sendable () -> Int? = { nil },
        environment: [String: String] = [:], handlesInterrupts: Bool = false,
        makeService: @escaping @Sendable (BusChoice) throws(CLIError) -> any FlowService
    ) {
        self.stdout = stdout
        self.stderr = stderr
        self.stdin = stdin
        self.stdoutIsTerminal = stdoutIsTerminal
        self.stderrIsTerminal = stderrIsTerminal
        self.stderrFD = stderrFD
        self.stdoutColumns = stdoutColumns
        self.environment = environment
        self.handlesInterrupts = handlesInterrupts
        self.makeService = makeService
    }

    /// The running process: file descriptors 0, 1 and 2, the real environment, D-Bus.
    package static func process() -> FlowctlContext {
        FlowctlContext(
            stdout: FileDescriptorSink(fd: 1), stderr: FileDescriptorSink(fd: 2), stdin: FileDescriptorSource(fd: 0),
            stdoutIsTerminal: Terminal.isTerminal(1), stderrIsTerminal: Terminal.isTerminal(2), stderrFD: 2,
            stdoutColumns: { Terminal.columns(of: 1) },
            environment: CurrentProcess.environment(), handlesInterrupts: true,
            makeService: { (bus) throws(CLIError) in
                do throws(FlowClientError) {
                    return try FlowClient(bus: bus.connectionBus)
                } catch {
                    throw CLIError(.software, error.message)
                }
            })
    }
}

/// flowctl's entry point.
package enum Flowctl {
    /// Runs flowctl in this process with its real arguments and exits.
    package static func main() -> Never {
        Interrupts.install()
        let status = run(Array(CommandLine.arguments.dropFirst()), context: .process())
        CurrentProcess.exitImmediately(status)
    }

    /// Runs one command line and returns the exit status. Failures print one
    /// line, `flowctl: MESSAGE`, on standard error.
    package static func run(_ arguments: [String], context: FlowctlContext) -> Int32 {
        do throws(CLIError) {
            switch try FlowctlCommandLine.parse(arguments) {
            case .version:
                context.stdout.write("flowctl \(FlowdVersion.current)\n")
                return ExitCode.success.rawValue
            case .help(let topic):
                if let topic, let spec = FlowctlCommandLine.command(topic) {
                    context.stdout.write(FlowctlCommandLine.help(for: spec))
                } else {
                    context.stdout.write(FlowctlCommandLine.overview())
                }
                return ExitCode.success.rawValue
            case .run(let command):
                let runner = CommandRunner(command: command, context: context)
                return try runner.run().rawValue
            }
        } catch {
            context.stderr.write("flowctl: \(error.message)\n")
            return error.code.rawValue
        }
    }
}
