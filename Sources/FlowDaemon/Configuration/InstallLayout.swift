/// Where an installation keeps its files, derived from the install prefix.
///
/// The prefix is not compiled in: it is found from where the executable lives
/// (`/usr/libexec/flowd` → `/usr`), so the same build works for any
/// `make install PREFIX=…` and the built-in defaults follow the prefix.
package struct InstallLayout: Sendable, Equatable {
    package var prefix: String
    /// `/etc` for the `/usr` prefix, `<prefix>/etc` otherwise (the GNU convention).
    package var sysconfDirectory: String
    /// `<prefix>/share`.
    package var dataDirectory: String
    /// `<prefix>/lib`.
    package var libDirectory: String
    /// `/var` for the `/usr` prefix, `<prefix>/var` otherwise.
    package var localStateDirectory: String

    package init(prefix: String) {
        let p = prefix.count > 1 && prefix.hasSuffix("/") ? String(prefix.dropLast()) : prefix
        self.prefix = p
        let system = p == "/usr" || p == "/"
        sysconfDirectory = system ? "/etc" : p + "/etc"
        localStateDirectory = system ? "/var" : p + "/var"
        dataDirectory = (p == "/" ? "/usr" : p) + "/share"
        libDirectory = (p == "/" ? "/usr" : p) + "/lib"
    }

    /// The layout of an executable installed at `path` (`<prefix>/bin/x` or
    /// `<prefix>/libexec/x`).
    package static func derived(fromExecutable path: String) -> InstallLayout {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        let prefixParts = parts.dropLast(2)
        return InstallLayout(prefix: "/" + prefixParts.joined(separator: "/"))
    }
}
