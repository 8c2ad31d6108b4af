import DBus
import FlowClient
import FlowProtocol
import Foundation
import Testing
import TestSupport

/// Where flowd keeps its state, and what it refuses there: a symbolic link
/// among the directories is fine (a per-user flowd under a symlinked
/// `~/.local`), the database file as a symbolic link is not, and neither is
/// a state directory others may write to. Each refusal exits 73 (CANTCREAT)
/// with one line that says why.
@Suite("The state directory")
struct StateDirectoryTests {
    /// flowd with `arguments` and an unreachable bus: it gets as far as the
    /// bus (exit 69) when the state directory is usable.
    static func runToTheBus(_ arguments: [String], in directory: TemporaryDirectory) throws -> ChildProcess.Result {
        try ChildProcess.run(
            try FlowdBinary.require(), arguments + ["--address", "unix:path=\(directory.file("no-bus"))"],
            environment: FlowdBinary.baseEnvironment(), inheritEnvironment: false)
    }

    @Test("a per-user flowd under a symlinked ~/.local starts, and keeps its state through the link")
    func symlinkedLocalDirectory() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let directory = try TemporaryDirectory(prefix: "flowd-state")
        let home = directory.file("home")
        let elsewhere = directory.file("disk/dot-local")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: home + "/.local", withDestinationPath: elsewhere)
        let flows = directory.file("flows")
        try FileManager.default.createDirectory(atPath: flows, withIntermediateDirectories: false)
        try TestFlows.quick.write(toFile: flows + "/quick.json", atomically: true, encoding: .utf8)

        let daemon = try FlowdProcess(
            arguments: ["--address", bus.address, "--flows-dir", flows, "--plugin-dir", directory.file("no-plugins")],
            environment: ["HOME": home], notifyPath: directory.file("notify"))
        defer { if daemon.child.exitStatus == nil { daemon.child.terminate(grace: .zero) } }
        try await daemon.ready()
        let client = try FlowClient(bus: .address(bus.address))
        let session = try await client.start("quick")
        #expect(try await client.setAnswers(session, ["stars": .int64(4)]) == [:])
        #expect(await daemon.terminate() == .exited(0), "\(daemon.standardError)")
        // The database is where the link leads, private.
        let database = elsewhere + "/state/flowd/sessions.sqlite"
        #expect(FileManager.default.fileExists(atPath: database), "\(daemon.standardError)")
        let attributes = try FileManager.default.attributesOfItem(atPath: elsewhere + "/state/flowd")
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
    }

    @Test("a symbolic link as the state directory, or above it, is followed")
    func linkedStateDirectory() throws {
        let directory = try TemporaryDirectory(prefix: "flowd-state")
        try FileManager.default.createDirectory(atPath: directory.file("real"), withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: directory.file("link"), withDestinationPath: directory.file("real"))
        for state in [directory.file("link"), directory.file("link/below")] {
            let result = try Self.runToTheBus(["--state-dir", state], in: directory)
            #expect(result.status == .exited(69), "\(state): \(result.standardError)")
            #expect(!result.standardError.contains("database"), "\(result.standardError)")
        }
        #expect(FileManager.default.fileExists(atPath: directory.file("real/sessions.sqlite")))
        #expect(FileManager.default.fileExists(atPath: directory.file("real/below/sessions.sqlite")))
    }

    @Test("the database file as a symbolic link is refused: exit 73, and the line says why")
    func linkedDatabaseFile() throws {
        let directory = try TemporaryDirectory(prefix: "flowd-state")
        let state = directory.file("state")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false)
        chmod(state, 0o700)
        let target = try directory.write("elsewhere.sqlite", "")
        try FileManager.default.createSymbolicLink(atPath: state + "/sessions.sqlite", withDestinationPath: target)
        let result = try Self.runToTheBus(["--state-dir", state], in: directory)
        #expect(result.status == .exited(73), "\(result.standardError)")
        #expect(result.standardError.contains("\(state)/sessions.sqlite is a symbolic link"), "\(result.standardError)")
        #expect(result.standardError.contains("refuses a symbolic link as its database file"), "\(result.standardError)")
        #expect(try String(contentsOfFile: target, encoding: .utf8).isEmpty)
    }

    @Test("a state directory group or others may write to is refused: exit 73", arguments: [0o777, 0o770, 0o1777, 0o702])
    func looseStateDirectory(mode: Int) throws {
        let directory = try TemporaryDirectory(prefix: "flowd-state")
        let state = directory.file("state")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false)
        chmod(state, mode_t(mode))
        let result = try Self.runToTheBus(["--state-dir", state], in: directory)
        #expect(result.status == .exited(73), "\(result.standardError)")
        let octal = String(mode, radix: 8)
        let shown = String(repeating: "0", count: max(0, 4 - octal.count)) + octal
        #expect(
            result.standardError.contains("the state directory \(state) is writable by group or others (mode \(shown))"),
            "\(result.standardError)")
        #expect(result.standardError.contains("chmod 0700 \(state)"), "\(result.standardError)")
        // Nothing was created in it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: state).isEmpty)
    }
}
