import FlowClient
import FlowdSystem
import Systemd

/// polkit's text authentication agent (`pkttyagent`) for one flowctl run,
/// as systemctl and hostnamectl start it: when a call to the system service
/// needs an administrator's password, polkit asks for it on this terminal.
///
/// It registers for its parent process, flowctl, which is the process
/// polkitd finds behind flowctl's bus name. How polkitd then picks an agent
/// decides the options: an agent registered for the process itself is used
/// first, unless it registered as a fallback (`--fallback`); a fallback is
/// used only when polkitd also finds a logind session for the process and
/// that session has no agent of its own. So flowctl in a session of its own
/// (a login, ssh, `machinectl shell`) starts it with `--fallback`, and a
/// desktop's agent, when there is one, keeps asking; flowctl outside any
/// (`runuser -u`, `setpriv`) starts it without, since a fallback may never
/// be asked there. (Newer polkitd also take the user's graphical session
/// for a process outside one; a process's own agent works with every
/// version.)
///
/// flowctl waits until the agent has registered (it closes the descriptor
/// given with `--notify-fd`) before it calls, and stops it when it is done.
package final class AuthenticationAgent {
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
    /// about), polkit's agent is installed, and flowctl has a controlling
    /// terminal, which the agent asks on (`su -c` detaches from it).
    static func isWanted(interactive: Bool, bus: BusChoice, stdinIsTerminal: Bool) -> Bool {
        guard interactive, stdinIsTerminal, case .system = bus, CurrentProcess.userID != 0 else { return false }
        return FileSystem.isExecutableFile(executable) && Terminal.hasControllingTerminal()
    }

    /// Starts the agent and waits until it registered; nil when it could
    /// not be started (flowctl goes on: a call that needs a password is then
    /// refused with polkit's reason).
    static func start() -> AuthenticationAgent? {
        do throws(SystemCallError) {
            let (registered, notify) = try FileDescriptor.pipe()
            let arguments = Self.arguments(inLoginSession: LoginSession.ofCurrentProcess() != nil)
            var options = ChildProcess.Options(executable, arguments, environment: CurrentProcess.environment())
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

    /// pkttyagent's arguments: it closes descriptor 3 once registered; a
    /// fallback only where polkitd would ever ask one (see above).
    package static func arguments(inLoginSession: Bool) -> [String] {
        ["--notify-fd", "3"] + (inLoginSession ? ["--fallback"] : [])
    }

    /// Stops the agent (SIGTERM, which lets it restore the terminal).
    func stop() {
        process.terminate(grace: .seconds(1))
    }
}
