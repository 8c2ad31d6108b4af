import FlowdSystem

/// logind's session of this process, as polkitd finds it when it looks for
/// an authentication agent: the session the process runs in (a login, ssh,
/// `machinectl shell`), else its user's display session. A process started
/// with `runuser`, `setpriv` or from a service has neither.
package enum LoginSession {
    /// The session polkit attributes this process to, nil when there is none.
    package static func ofCurrentProcess() -> String? {
        LibSystemd.ownSession() ?? LibSystemd.displaySession(of: CurrentProcess.userID)
    }
}
