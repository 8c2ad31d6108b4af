import FlowClient
import FlowdSystem

/// polkit's text authentication agent (`pkttyagent`) for one flowctl run,
/// as systemctl and hostnamectl start it: when a call to the system service
/// needs an administrator's password, polkit asks for it on this terminal.
///
/// Started with `--fallback`, so a desktop's own agent, when there is one,
/// keeps asking; registered for its parent process (flowctl), which is the
/// process polkit finds behind flowctl's bus name. flowctl waits until the
/// agent has registered (it closes the descriptor given with `--notify-fd`)
/// before it calls, and stops it when it is done.
final class AuthenticationAgent {
    /// Where Debian's polkitd puts it.
    static let executable = "/usr/bin/pkttyagent"
    /// How long registering may take before flowctl calls anyway (polkit
    /// then answers as if there were no agent).
    static let registrationLimit: Duration = .seconds(10)

    private let process: ChildProcess

    private init(process: ChildProcess) {
        self.process = process
    }

    /// Whether a run should start one: it may ask (the interactive flag is
    /// set), it talks to the system service, its standard input is a
    /// terminal to ask on, it is not root (whom flowd never asks polkit
    /// about), and polkit's agent is installed.
    static func isWanted(interactive: Bool, bus: BusChoice, stdinIsTerminal: Bool) -> Bool {
        guard interactive, stdinIsTerminal, case .system = bus, CurrentProcess.userID != 0 else { return false }
        return FileSystem.isExecutableFile(executable)
    }

    /// Starts the agent and waits until it registered; nil when it could
    /// not be started (flowctl goes on: a call that needs a password is then
    /// refused with polkit's reason).
    static func start() -> AuthenticationAgent? {
        do throws(SystemCallError) {
            let (registered, notify) = try FileDescriptor.pipe()
            var options = ChildProcess.Options(
                executable, ["--notify-fd", "3", "--fallback"], environment: CurrentProcess.environment())
            options.standardInput = .inherit
            options.standardOutput = .inherit
            // It talks to the person on the controlling terminal; its
            // standard error would only add polkit's diagnostics (no polkit
            // running, say) before flowctl's own sentence about the call.
            options.standardError = .null
            options.extraDescriptors = [3: notify]
            let process = try ChildProcess(options)
            notify.close()
            // Readable (end of file) or hung up once the agent closed its end:
            // registered, or gone (pkttyagent exits 127 when it cannot register).
            _ = try Poll.wait([(registered.rawValue, [.readable, .hangUp])], timeout: registrationLimit)
            return AuthenticationAgent(process: process)
        } catch {
            return nil
        }
    }

    /// Stops the agent (SIGTERM, which lets it restore the terminal).
    func stop() {
        process.terminate(grace: .seconds(1))
    }
}
