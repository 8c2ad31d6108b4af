import DBus
import FlowClient
import FlowProtocol
import Foundation
import Systemd
import Testing
import TestSupport

/// The built `flowd` executable: `$FLOWD_BINARY`, or `flowd` next to the test
/// bundle (SwiftPM puts both in `.build/<triple>/<configuration>/`).
enum FlowdBinary {
    /// The directory of the test bundle, where SwiftPM also puts `flowd` and
    /// the plugin libraries.
    static let buildDirectory: String = {
        let bundle = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return URL(fileURLWithPath: bundle).deletingLastPathComponent().path
    }()

    static let path: String = {
        if let given = ProcessInfo.processInfo.environment["FLOWD_BINARY"], !given.isEmpty { return given }
        return buildDirectory + "/flowd"
    }()

    /// The path, or an error that says how to build it.
    static func require() throws -> String {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw TestSupportError(
                "no flowd executable at \(path): build it first (swift build --build-tests builds it), or set FLOWD_BINARY")
        }
        return path
    }

    /// The environment flowd runs with: only what it needs to run, so that
    /// the host's `NOTIFY_SOCKET`, `JOURNAL_STREAM`, `HOME` or bus addresses
    /// never leak into a test.
    static func baseEnvironment() -> [String: String] {
        let host = ProcessInfo.processInfo.environment
        var environment: [String: String] = ["PATH": host["PATH"] ?? "/usr/bin:/bin", "LANG": "C.UTF-8"]
        if let libraries = host["LD_LIBRARY_PATH"] { environment["LD_LIBRARY_PATH"] = libraries }
        return environment
    }
}

/// How a test wants its daemon.
struct DaemonSettings: Sendable {
    /// Flow files: file name → contents, written to the flows directory.
    var flows: [String: String] = TestFlows.standard
    /// The contents of a configuration file given with `--config`; none when nil.
    var configuration: String?
    /// More uids the private bus admits (the daemon's own always may connect).
    var allowUsers: [UInt32] = []
    /// Adds `--verbose`.
    var verbose = false
    /// More environment for flowd (`WATCHDOG_USEC`, say).
    var environment: [String: String] = [:]
    /// Plugin libraries (SwiftPM product names such as `FixtureTestPlugin`)
    /// copied from the build directory into a plugin directory given with
    /// `--plugin-dir`. Without any, flowd gets an empty plugin directory.
    var plugins: [String] = []
    /// Runs flowd with `--system`, pointed at the private bus through
    /// `DBUS_SYSTEM_BUS_ADDRESS`, so that it behaves as the system service
    /// (signals go only to the session's callers). Otherwise `--address`.
    var systemMode = false
    /// Runs on the plugin directory after `plugins` were copied in and
    /// before flowd starts: for files `plugins` cannot make (other names,
    /// symlinks, loose modes, another owner).
    var preparePlugins: (@Sendable (_ directory: String) throws -> Void)?
    /// The account the private bus's daemon runs as (``PrivateBus``'s
    /// `user`): another user's bus, as the system bus is. Nil: the test's.
    var busUser: String?

    init(
        flows: [String: String] = TestFlows.standard, configuration: String? = nil, allowUsers: [UInt32] = [],
        verbose: Bool = false, environment: [String: String] = [:], plugins: [String] = [], systemMode: Bool = false,
        preparePlugins: (@Sendable (_ directory: String) throws -> Void)? = nil, busUser: String? = nil
    ) {
        self.busUser = busUser
        self.plugins = plugins
        self.preparePlugins = preparePlugins
        self.flows = flows
        self.configuration = configuration
        self.allowUsers = allowUsers
        self.verbose = verbose
        self.environment = environment
        self.systemMode = systemMode
    }
}

/// One `flowd` process with its own notification socket.
final class FlowdProcess: @unchecked Sendable {
    let child: ChildProcess
    let notify: NotifySocket

    init(arguments: [String], environment: [String: String], notifyPath: String) throws {
        notify = try NotifySocket(path: notifyPath)
        var env = FlowdBinary.baseEnvironment()
        env["NOTIFY_SOCKET"] = notifyPath
        env.merge(environment) { _, new in new }
        child = try ChildProcess(try FlowdBinary.require(), arguments, environment: env, inheritEnvironment: false)
    }

    /// What flowd wrote to stderr so far (its log, when not under the journal).
    var standardError: String { child.standardError }

    /// Waits for `READY=1` without holding a thread of the cooperative pool;
    /// throws with flowd's stderr when it exits first or does not get ready
    /// within `timeout`.
    func ready(timeout: Duration = .seconds(30)) async throws {
        try await offThePool { try self.waitUntilReady(timeout: timeout) }
    }

    private func waitUntilReady(timeout: Duration) throws {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while clock.now < deadline {
            // Short slices so that an early exit is seen at once.
            if notify.wait(timeout: .milliseconds(100), until: { $0.values(of: "READY").contains("1") }) { return }
            if let status = child.exitStatus {
                _ = child.wait(timeout: .seconds(5))
                throw TestSupportError("flowd \(status) before READY=1; its stderr:\n\(standardError)")
            }
        }
        throw TestSupportError("flowd sent no READY=1 within \(timeout); its stderr:\n\(standardError)")
    }

    /// SIGTERM, then waits up to `timeout` for the exit (nil when it did not
    /// end); no thread waits meanwhile.
    func terminate(timeout: Duration = .seconds(20)) async -> Termination? {
        child.send(.terminate)
        return await ended(timeout: timeout)
    }

    /// SIGKILL, and waits for the exit; no thread waits meanwhile.
    func kill() async {
        child.send(.kill)
        _ = await ended(timeout: .seconds(20))
    }

    /// How flowd ended, waiting up to `timeout` (nil when it still runs then).
    func ended(timeout: Duration) async -> Termination? {
        await child.ended(before: MonotonicClock.now().advanced(by: timeout), cancellable: false)
    }
}

/// A private bus, a temporary directory with `flows/`, `state/` and maybe a
/// configuration file, the built `flowd` started on them (ready: `READY=1`
/// arrived), and a client of it.
final class DaemonFixture: @unchecked Sendable {
    let bus: PrivateBus
    let directory: TemporaryDirectory
    let flowsDirectory: String
    let stateDirectory: String
    let pluginDirectory: String
    let configurationPath: String?
    let settings: DaemonSettings
    /// The client most tests use.
    let client: FlowClient
    private(set) var daemon: FlowdProcess
    /// stderr of the daemons this fixture started before the current one.
    private(set) var earlierStandardError = ""
    private var starts = 0

    init(_ settings: DaemonSettings = DaemonSettings()) async throws {
        self.settings = settings
        bus = try PrivateBus(allowUsers: settings.allowUsers, user: settings.busUser)
        let directory = try TemporaryDirectory(prefix: "flowd-daemon")
        self.directory = directory
        if !settings.allowUsers.isEmpty { chmod(directory.path, 0o755) }
        flowsDirectory = directory.file("flows")
        stateDirectory = directory.file("state")
        try FileManager.default.createDirectory(atPath: flowsDirectory, withIntermediateDirectories: false)
        for (name, contents) in settings.flows {
            try contents.write(toFile: flowsDirectory + "/" + name, atomically: true, encoding: .utf8)
        }
        pluginDirectory = directory.file("plugins")
        try FileManager.default.createDirectory(atPath: pluginDirectory, withIntermediateDirectories: false)
        for product in settings.plugins {
            let source = FlowdBinary.buildDirectory + "/lib\(product).so"
            let target = pluginDirectory + "/\(product).so"
            try FileManager.default.copyItem(atPath: source, toPath: target)
            // The loader wants the owner's file, not writable by others.
            chmod(target, 0o755)
        }
        try settings.preparePlugins?(pluginDirectory)
        if let configuration = settings.configuration {
            configurationPath = try directory.write("flowd.conf", configuration)
        } else {
            configurationPath = nil
        }
        daemon = try Self.start(
            index: 0, directory: directory, bus: bus, flows: flowsDirectory, plugins: pluginDirectory, state: stateDirectory,
            configuration: configurationPath, settings: settings, environment: [:])
        starts = 1
        do {
            try await daemon.ready()
            client = try FlowClient(bus: .address(bus.address))
        } catch {
            await daemon.kill()
            throw error
        }
    }

    deinit {
        if daemon.child.exitStatus == nil {
            daemon.child.send(.kill)
            _ = daemon.child.wait(timeout: .seconds(20))
        }
        bus.stop()
    }

    /// The command line flowd gets.
    var arguments: [String] {
        Self.arguments(
            bus: bus, flows: flowsDirectory, plugins: pluginDirectory, state: stateDirectory,
            configuration: configurationPath, settings: settings)
    }

    private static func arguments(
        bus: PrivateBus, flows: String, plugins: String, state: String, configuration: String?, settings: DaemonSettings
    ) -> [String] {
        var arguments = (settings.systemMode ? ["--system"] : ["--address", bus.address])
            + ["--flows-dir", flows, "--plugin-dir", plugins, "--state-dir", state]
        if let configuration { arguments += ["--config", configuration] }
        if settings.verbose { arguments.append("--verbose") }
        return arguments
    }

    private static func start(
        index: Int, directory: TemporaryDirectory, bus: PrivateBus, flows: String, plugins: String, state: String,
        configuration: String?, settings: DaemonSettings, environment: [String: String]
    ) throws -> FlowdProcess {
        var extra = settings.environment.merging(environment) { _, new in new }
        if settings.systemMode { extra["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address }
        return try FlowdProcess(
            arguments: arguments(
                bus: bus, flows: flows, plugins: plugins, state: state, configuration: configuration, settings: settings),
            environment: extra,
            notifyPath: directory.file("notify-\(index)"))
    }

    /// Everything every daemon of this fixture wrote to stderr.
    var allStandardError: String { earlierStandardError + daemon.standardError }

    /// Starts a new daemon on the same bus, flows and state once the current
    /// one has ended, and waits for `READY=1`.
    func startAgain(environment: [String: String] = [:]) async throws {
        precondition(daemon.child.exitStatus != nil, "stop or kill the running daemon first")
        earlierStandardError += daemon.standardError
        daemon = try Self.start(
            index: starts, directory: directory, bus: bus, flows: flowsDirectory, plugins: pluginDirectory,
            state: stateDirectory, configuration: configurationPath, settings: settings, environment: environment)
        starts += 1
        try await daemon.ready()
    }

    /// SIGTERM and wait; the exit status (nil if it did not end).
    @discardableResult
    func stop() async -> Termination? {
        await daemon.terminate()
    }

    /// Writes (or replaces) a flow file in the flows directory.
    func writeFlow(_ name: String, _ contents: String) throws {
        try contents.write(toFile: flowsDirectory + "/" + name, atomically: true, encoding: .utf8)
    }

    /// Another client, with a connection of its own, on the same bus.
    func connect() throws -> FlowClient {
        try FlowClient(bus: .address(bus.address))
    }

    /// A plain connection to the same bus, for calls no well-behaved client
    /// makes (wrong signatures, unknown members and objects).
    func raw() throws -> RawFlowd {
        try RawFlowd(address: bus.address)
    }

    /// The bytes of every file in the state directory (the database, its
    /// WAL and shared-memory files), by name.
    func stateFiles() throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: stateDirectory) {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: stateDirectory + "/" + name))
        }
        return files
    }
}

/// Runs `body` with a fresh bus and daemon. On a thrown error, flowd's stderr
/// is recorded with the failure; at the end the daemon must stop on SIGTERM
/// with status 0. Set `FLOWD_TEST_LOG=1` to print flowd's stderr always.
@discardableResult
func withDaemon<T>(
    _ settings: DaemonSettings = DaemonSettings(), sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (DaemonFixture) async throws -> T
) async throws -> T {
    let fixture = try await DaemonFixture(settings)
    let result: T
    do {
        result = try await body(fixture)
    } catch {
        Issue.record("flowd's stderr:\n\(fixture.allStandardError)", sourceLocation: sourceLocation)
        throw error
    }
    if fixture.daemon.child.exitStatus == nil {
        let status = await fixture.stop()
        #expect(status == .exited(0), "flowd did not stop cleanly; its stderr:\n\(fixture.allStandardError)",
                sourceLocation: sourceLocation)
    }
    if ProcessInfo.processInfo.environment["FLOWD_TEST_LOG"] == "1" {
        print("flowd's stderr:\n\(fixture.allStandardError)")
    }
    return result
}

/// Expects `body` to throw the D-Bus error `name` (from flowd through the
/// client, or from a raw call); returns the error's message.
@discardableResult
func expectDBusError(
    _ name: String, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Void
) async -> String? {
    let note = comment.map { "(\($0))" } ?? ""
    do {
        try await body()
        Issue.record("expected \(name), but the call succeeded \(note)", sourceLocation: sourceLocation)
        return nil
    } catch let error as FlowClientError {
        #expect(error.name?.rawValue == name, "\(error) \(note)", sourceLocation: sourceLocation)
        return error.message
    } catch let error as DBusError {
        #expect(error.name.rawValue == name, "\(error) \(note)", sourceLocation: sourceLocation)
        return error.message
    } catch {
        Issue.record("expected \(name), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// The contract's error names.
enum FlowdErrorName {
    static let notFound = "org.flowd.Flow1.Error.NotFound"
    static let invalidArgs = "org.flowd.Flow1.Error.InvalidArgs"
    static let accessDenied = "org.flowd.Flow1.Error.AccessDenied"
    static let invalidState = "org.flowd.Flow1.Error.InvalidState"
    static let validationFailed = "org.flowd.Flow1.Error.ValidationFailed"
    static let limitExceeded = "org.flowd.Flow1.Error.LimitExceeded"
    /// The bus-level refusal of a message with the wrong signature.
    static let dbusInvalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
}
