import DBus
import FlowClient
import FlowProtocol
import Foundation
import Testing
import TestSupport

/// The built `flowd` run from the command line: usage errors, help, version,
/// bad configuration and unusable resources each end with their exit status
/// (sysexits.h) and one clear line.
@Suite("flowd's command line, end to end")
struct CommandLineTests {
    static func run(_ arguments: [String]) throws -> ChildProcess.Result {
        try ChildProcess.run(
            try FlowdBinary.require(), arguments, environment: FlowdBinary.baseEnvironment(), inheritEnvironment: false)
    }

    /// The non-empty lines of `text`.
    static func lines(_ text: String) -> [String] {
        text.split(separator: "\n").map(String.init)
    }

    @Test("a bad option exits 64 with one line on stderr", arguments: [
        (["--bogus"], "--bogus"),
        (["--flows-dir"], "--flows-dir"),
        (["--system", "--session"], "conflicts"),
        (["serve"], "serve"),
        (["--state-dir="], "--state-dir"),
        (["--flows-dir", ""], "--flows-dir"),
        (["--state-dir", ""], "--state-dir"),
        (["--plugin-dir", ""], "--plugin-dir"),
        (["--address", "garbage"], "not a D-Bus address"),
        (["--address", "unix:path"], "not a D-Bus address"),
        (["--address="], "--address"),
    ])
    func usageErrors(arguments: [String], fragment: String) throws {
        let result = try Self.run(arguments)
        #expect(result.status == .exited(64))
        #expect(Self.lines(result.standardError).count == 1, "\(result.standardError)")
        #expect(result.standardError.contains(fragment), "\(result.standardError)")
        #expect(!result.standardError.contains("Usage:"), "never the whole help")
        #expect(result.standardOutput.isEmpty)
    }

    @Test("--help and --version exit 0 on stdout")
    func helpAndVersion() async throws {
        let help = try Self.run(["--help"])
        #expect(help.status == .exited(0))
        #expect(help.standardOutput.hasPrefix("Usage: flowd"))
        for option in ["--system", "--session", "--address", "--flows-dir", "--plugin-dir", "--state-dir", "--config", "--version"] {
            #expect(help.standardOutput.contains(option), "--help does not mention \(option)")
        }
        #expect(help.standardError.isEmpty)
        let version = try Self.run(["--version"])
        #expect(version.status == .exited(0))
        #expect(Self.lines(version.standardOutput).count == 1)
        #expect(version.standardOutput.hasPrefix("flowd 0."), "\(version.standardOutput)")
        #expect(version.standardError.isEmpty)
    }

    @Test("a bad configuration file exits 78 naming file and line", arguments: [
        ("[Limits]\nMaxStringLength=abc\n", 2),
        ("# comment\n[Daemon]\nVerbose=yes\n[Nonsense]\nKey=1\n", 5),
        ("[Limits]\nIdleTimeout=soon\n", 2),
        ("Key=before any section\n", 1),
        ("[Daemon]\nFlowsDirectory=relative/path\n", 2),
        // Isolated plugins: each bad value of a [Plugin NAME] section.
        ("[Plugin webhook]\nIsolated=yes\nMemoryLimit=lots\n", 3),
        ("[Plugin webhook]\nMemoryLimit=1M\n", 2),
        ("[Plugin webhook]\nIsolated=maybe\n", 2),
        ("[Plugin webhook]\nNetwork=sometimes\n", 2),
        ("[Plugin webhook]\nSandbox=strict\n", 2),
        ("[Plugin ../webhook]\nIsolated=yes\n", 2),
    ])
    func badConfiguration(text: String, line: Int) throws {
        let directory = try TemporaryDirectory(prefix: "flowd-cli")
        let path = try directory.write("flowd.conf", text)
        let result = try Self.run(["--config", path, "--state-dir", directory.file("state"), "--address", "unix:path=/nonexistent"])
        #expect(result.status == .exited(78))
        #expect(result.standardError.contains("\(path):\(line):"), "\(result.standardError)")
        #expect(Self.lines(result.standardError).count == 1, "\(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("state")), "nothing is created before the configuration is good")
    }

    @Test("a bad drop-in is named too, and a missing --config file exits 78")
    func dropInsAndMissingFile() async throws {
        let directory = try TemporaryDirectory(prefix: "flowd-cli")
        let path = try directory.write("flowd.conf", "[Limits]\nMaxSessions=10\n")
        try FileManager.default.createDirectory(atPath: path + ".d", withIntermediateDirectories: false)
        let dropIn = try directory.write("flowd.conf.d/20-local.conf", "[Limits]\n\nMaxSessions=-1\n")
        let result = try Self.run(["--config", path, "--state-dir", directory.file("state")])
        #expect(result.status == .exited(78))
        #expect(result.standardError.contains("\(dropIn):3:"), "\(result.standardError)")

        let missing = try Self.run(["--config", directory.file("absent.conf"), "--state-dir", directory.file("state")])
        #expect(missing.status == .exited(78))
        #expect(missing.standardError.contains("absent.conf"), "\(missing.standardError)")
    }

    @Test("--check-config prints the effective configuration, the plugins and flows, and writes nothing")
    func checkConfig() throws {
        let directory = try TemporaryDirectory(prefix: "flowd-cli")
        let path = try directory.write("flowd.conf", "# only comments\n")
        try FileManager.default.createDirectory(atPath: path + ".d", withIntermediateDirectories: false)
        let dropIn = try directory.write("flowd.conf.d/50-local.conf", "[Limits]\nMaxSessions=10\n")
        try FileManager.default.createDirectory(atPath: directory.file("flows"), withIntermediateDirectories: false)
        let flow = try directory.write("flows/quick.json", TestFlows.quick)
        try FileManager.default.createDirectory(atPath: directory.file("no-plugins"), withIntermediateDirectories: false)
        let arguments = [
            "--check-config", "--config", path, "--flows-dir", directory.file("flows"), "--plugin-dir",
            directory.file("no-plugins"), "--state-dir", directory.file("state"),
        ]
        let good = try Self.run(arguments)
        #expect(good.status == .exited(0), "\(good.standardError)")
        #expect(good.standardOutput.contains("# read: \(path) \(dropIn)\n"), "\(good.standardOutput)")
        #expect(good.standardOutput.contains("\nMaxSessions=10\n"))
        #expect(good.standardOutput.contains("\nFlowsDirectory=\(directory.file("flows"))\n"))
        #expect(good.standardOutput.contains("# flow quick: served (\(flow))"), "\(good.standardOutput)")
        #expect(good.standardError.isEmpty, "\(good.standardError)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("state")), "a check creates nothing")

        _ = try directory.write("flows/two.json", "{\"id\": \"two\"")
        let refused = try Self.run(arguments)
        #expect(refused.status == .exited(78))
        #expect(refused.standardError.contains("flow refused: \(directory.file("flows/two.json"))"), "\(refused.standardError)")

        _ = try directory.write("flowd.conf.d/60-typo.conf", "[Limits]\nMaxSesions=3\n")
        let bad = try Self.run(arguments)
        #expect(bad.status == .exited(78))
        #expect(bad.standardError.contains("60-typo.conf:2: unknown key \"MaxSesions\" in [Limits]"), "\(bad.standardError)")
        #expect(bad.standardOutput.isEmpty)
    }

    @Test("an unusable state directory exits 73; an unreachable bus exits 69")
    func unusableResources() async throws {
        let directory = try TemporaryDirectory(prefix: "flowd-cli")
        let file = try directory.write("not-a-directory", "x")
        let state = try Self.run(["--state-dir", file, "--address", "unix:path=\(directory.file("no-bus"))"])
        #expect(state.status == .exited(73), "\(state.standardError)")
        #expect(state.standardError.contains(file))

        let bus = try Self.run(["--state-dir", directory.file("state"), "--address", "unix:path=\(directory.file("no-bus"))"])
        #expect(bus.status == .exited(69), "\(bus.standardError)")
        #expect(bus.standardError.contains("no-bus"), "\(bus.standardError)")
    }

    @Test("a second flowd on the same bus exits 69 and the first keeps serving")
    func nameAlreadyOwned() async throws {
        try await withDaemon { fixture in
            let directory = try TemporaryDirectory(prefix: "flowd-cli")
            let second = try Self.run([
                "--address", fixture.bus.address, "--flows-dir", fixture.flowsDirectory, "--state-dir", directory.file("state"),
            ])
            #expect(second.status == .exited(69), "\(second.standardError)")
            #expect(second.standardError.contains("org.flowd.Flow1"), "\(second.standardError)")
            #expect(try await fixture.client.flowIDs() == ["durable", "quick", "trip"])
            // The Manager's Version is the version flowd --version prints.
            let printed = try Self.run(["--version"]).standardOutput.split(separator: " ")
            #expect(printed.count >= 2)
            #expect(try await fixture.client.version() == String(printed[1]))
            // No plugins are loaded by these tests' daemons.
            #expect(try await fixture.client.listPlugins().isEmpty)
        }
    }
}
