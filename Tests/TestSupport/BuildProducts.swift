import Foundation

/// Where the built executables are: next to the running test bundle (SwiftPM
/// puts both in the same bin directory), or `.build/debug` of the repository.
package enum BuildProducts {
    /// The repository's root.
    package static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The build directory that holds the executable `name`: the test bundle's
    /// own, else `.build/debug`.
    package static func directory(holding name: String) -> String {
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path
        let fallback = repository.appendingPathComponent(".build/debug").path
        return FileManager.default.isExecutableFile(atPath: runner + "/" + name) ? runner : fallback
    }

    /// The path of the built executable `name`.
    package static func executable(_ name: String) -> String {
        directory(holding: name) + "/" + name
    }
}
