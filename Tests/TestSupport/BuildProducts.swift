import Foundation

/// Where the built executables are: next to the running test bundle (SwiftPM
/// puts both in the same bin directory), or `.build/debug` of the repository.
public enum BuildProducts {
    /// The repository's root.
    public static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The path of the built executable `name`.
    public static func executable(_ name: String) -> String {
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path
        for directory in [runner, repository.appendingPathComponent(".build/debug").path]
        where FileManager.default.isExecutableFile(atPath: directory + "/" + name) {
            return directory + "/" + name
        }
        return repository.appendingPathComponent(".build/debug/" + name).path
    }
}
