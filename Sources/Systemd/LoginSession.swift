import FlowdSystem

/// logind's session of this process: the one it runs in (a login, ssh,
/// `machinectl shell`); a process started with `runuser -u`, `setpriv` or
/// from a service has none.
package enum LoginSession {
    /// The session this process belongs to, nil when it is in none.
    package static func ofCurrentProcess() -> String? {
        LibSystemd.ownSession()
    }
}
