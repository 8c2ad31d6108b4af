import FlowdSystem

/// Where the flowd executable is, for the "Start it with" hint. flowd is not
/// on `PATH`: it is installed to `<prefix>/libexec/flowd` (docs/admin.md).
package enum FlowdLocation {
    /// The packaged daemon (`make install PREFIX=/usr`).
    package static let installed = "/usr/libexec/flowd"

    /// The daemon for a flowctl at `executable`: `flowd` in the same
    /// directory (a build tree), else `<prefix>/libexec/flowd` for a flowctl
    /// in `<prefix>/bin` (an installation), whichever `isExecutable` accepts
    /// first; else ``installed``.
    package static func find(executable: String?, isExecutable: (String) -> Bool) -> String {
        guard let executable, let slash = executable.lastIndex(of: "/") else { return installed }
        let directory = String(executable[..<slash])
        var candidates = [directory + "/flowd"]
        if directory.hasSuffix("/bin") { candidates.append(String(directory.dropLast(4)) + "/libexec/flowd") }
        return candidates.first(where: isExecutable) ?? installed
    }

    /// The daemon for this flowctl process (`/proc/self/exe`).
    package static func current() -> String {
        find(executable: CurrentProcess.executablePath(), isExecutable: FileSystem.isExecutableFile)
    }
}
