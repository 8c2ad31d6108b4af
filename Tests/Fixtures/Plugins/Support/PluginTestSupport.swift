// Helpers for the plugin tests: where the built plugins are, plugin directories
// made of copies of them, subprocesses, and sample contexts.
import FlowKit
import Foundation
import Glibc
import PluginHost

/// A failure inside a test helper, with a message that says what went wrong.
package struct TestSetupError: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// The directory SwiftPM built into (`.build/<triple>/<config>`): the test
/// bundle, the plugin `.so` files and `plugin-host-probe` all live there.
package enum BuildProducts {
    /// The directory of `/proc/self/exe`.
    package static var directory: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return (exe as NSString).deletingLastPathComponent
    }

    /// The path of the dynamic library built for `product` (`lib<product>.so`).
    package static func library(_ product: String) -> String {
        directory + "/lib\(product).so"
    }

    /// The path of the built `plugin-host-probe`.
    package static var probe: String { directory + "/plugin-host-probe" }

    /// The repository's root, from the build directory's location
    /// (`<root>/.build/<triple>/<config>`).
    package static var packageRoot: String {
        var url = URL(fileURLWithPath: directory)
        while url.path != "/" {
            if url.lastPathComponent == ".build" { return url.deletingLastPathComponent().path }
            url = url.deletingLastPathComponent()
        }
        return FileManager.default.currentDirectoryPath
    }
}

/// A directory under /tmp, mode 0700, removed with its contents when the
/// object goes away.
package final class TemporaryDirectory: @unchecked Sendable {
    package let path: String

    package init(prefix: String = "flowd-plugin-test") throws {
        var template = Array("/tmp/\(prefix).XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw TestSetupError("mkdtemp failed: errno \(errno)") }
        path = String(cString: made)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// `path/name`.
    package func appending(_ name: String) -> String { path + "/" + name }

    /// Makes a subdirectory with `mode` and returns its path.
    @discardableResult
    package func makeDirectory(_ name: String, mode: mode_t = 0o700) throws -> String {
        let p = appending(name)
        guard mkdir(p, mode) == 0 || errno == EEXIST else { throw TestSetupError("mkdir \(p): errno \(errno)") }
        guard chmod(p, mode) == 0 else { throw TestSetupError("chmod \(p): errno \(errno)") }
        return p
    }
}

/// Builds plugin directories out of copies of the built `.so` files.
package enum PluginFiles {
    /// Copies the library of `product` to `directory/fileName` with `mode`.
    @discardableResult
    package static func install(_ product: String, into directory: String, as fileName: String? = nil,
                               mode: mode_t = 0o755) throws -> String {
        let source = BuildProducts.library(product)
        guard FileManager.default.fileExists(atPath: source) else {
            throw TestSetupError("\(source) is missing: build with `swift build --build-tests` first")
        }
        let target = directory + "/" + (fileName ?? "\(product).so")
        try? FileManager.default.removeItem(atPath: target)
        try FileManager.default.copyItem(atPath: source, toPath: target)
        guard chmod(target, mode) == 0 else { throw TestSetupError("chmod \(target): errno \(errno)") }
        return target
    }

    /// A fresh plugin directory inside `temp` holding copies of `products`.
    package static func directory(_ products: [String], in temp: TemporaryDirectory, name: String = "plugins")
        throws -> String
    {
        let dir = try temp.makeDirectory(name)
        for p in products { try install(p, into: dir) }
        return dir
    }

    /// Loads a fresh directory holding copies of `products`, with an in-memory
    /// crash guard, and returns the report with a caller over it. The caller
    /// gets an executor of its own: tests all call as one uid, and on the
    /// shared executor one test's slow calls would fill that uid's share and
    /// queue another test's.
    package static func load(
        _ products: [String], in temp: TemporaryDirectory, crashGuard: MemoryCrashGuard = MemoryCrashGuard(),
        executor: PluginExecutor = PluginExecutor(), configuration: PluginCaller.Configuration = .init()
    ) throws -> (report: PluginLoadReport, caller: PluginCaller) {
        let dir = try directory(products, in: temp)
        let report = PluginLoader(configuration: .init(directories: [dir])).load(crashGuard: crashGuard)
        let caller = PluginCaller(
            registry: report.registry, crashGuard: crashGuard, executor: executor, configuration: configuration)
        return (report, caller)
    }
}

extension PluginRegistry {
    /// The record of the plugin whose file is `fileName` (`Foo.so`).
    package func record(file fileName: String) -> PluginRecord? {
        records.first { $0.path.hasSuffix("/" + fileName) }
    }
}

/// Sample values for calls.
package enum Samples {
    /// A context for the calling uid, English, no answers.
    package static func context(
        flow: String = "sample", locale: String = "en", options: [String: JSONValue] = [:],
        answers: [String: AnswerValue] = [:], uid: UInt32 = UInt32(getuid()), stateDirectory: String = "/tmp"
    ) -> PluginContext {
        PluginContext(
            flowID: flow, sessionID: "0123456789abcdef0123456789abcdef", locale: locale, callerUID: uid,
            answers: answers, options: options, stateDirectory: stateDirectory)
    }

    package static func field(_ id: String = "value", type: String = "text", label: String = "Value") -> FieldInfo {
        FieldInfo(id: id, type: type, label: label)
    }

    package static func submission(
        id: String = "fedcba9876543210fedcba9876543210", flow: String = "sample", locale: String = "en",
        answers: [String: AnswerValue] = ["name": .text("Ada")], secure: [String: String] = [:]
    ) -> Submission {
        Submission(
            id: id, flowID: flow, sessionID: "0123456789abcdef0123456789abcdef", ownerUID: UInt32(getuid()),
            locale: locale, answers: answers, secureAnswers: secure, submittedAt: 1_717_000_000_000_000)
    }
}

/// The outcome of a finished child process.
package struct ProcessOutcome: Sendable {
    /// The exit status, or nil when a signal ended it.
    package var exitCode: Int32?
    /// The signal that ended it, or nil.
    package var signal: Int32?
    package var standardOutput: String
    package var standardError: String

    /// The lines of standard output.
    package var lines: [String] { standardOutput.split(separator: "\n").map(String.init) }
}

/// Runs child processes for the tests.
package enum Subprocess {
    /// Runs `path` with `arguments` and waits for it (at most `timeout`
    /// seconds, then it is killed and the call throws). The child gets this
    /// process's environment plus `environment`, and Swift's crash backtracer
    /// off (a crash is expected in some tests and symbolication is slow).
    package static func run(
        _ path: String, _ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 120
    ) throws -> ProcessOutcome {
        try start(path, arguments, environment: environment).wait(timeout: timeout)
    }

    /// Starts `path` with `arguments` (environment as for ``run(_:_:environment:timeout:)``)
    /// and returns at once; ``RunningProcess/wait(timeout:)`` collects the outcome.
    package static func start(
        _ path: String, _ arguments: [String], environment: [String: String] = [:]
    ) throws -> RunningProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["SWIFT_BACKTRACE"] = "enable=no"
        env.merge(environment) { _, new in new }
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read both pipes to the end (on other threads) so the child never blocks.
        return RunningProcess(
            process: process, description: "\(path) \(arguments)", output: ReadAll(out.fileHandleForReading),
            errors: ReadAll(err.fileHandleForReading))
    }

    /// A child process started by ``start(_:_:environment:)``.
    package final class RunningProcess: @unchecked Sendable {
        private let process: Process
        private let description: String
        private let output: ReadAll
        private let errors: ReadAll

        fileprivate init(process: Process, description: String, output: ReadAll, errors: ReadAll) {
            self.process = process
            self.description = description
            self.output = output
            self.errors = errors
        }

        /// The child's process id.
        package var pid: Int32 { process.processIdentifier }

        /// Waits for the child to end (at most `timeout` seconds, then it is
        /// killed and the call throws) and returns how it ended.
        package func wait(timeout: TimeInterval = 120) throws -> ProcessOutcome {
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning && Date() < deadline {
                usleep(10_000)
            }
            if process.isRunning {
                process.terminate()
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                throw TestSetupError("\(description) did not finish within \(timeout) s")
            }
            process.waitUntilExit()
            let byUncaughtSignal = process.terminationReason == .uncaughtSignal
            return ProcessOutcome(
                exitCode: byUncaughtSignal ? nil : process.terminationStatus,
                signal: byUncaughtSignal ? process.terminationStatus : nil,
                standardOutput: output.wait(), standardError: errors.wait())
        }

        /// Kills the child if it still runs (for a test that fails half-way).
        deinit {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
    }

    /// Reads a pipe to its end on a thread of its own.
    fileprivate final class ReadAll: @unchecked Sendable {
        private var data = Data()
        private let done = DispatchSemaphore(value: 0)

        init(_ handle: FileHandle) {
            Thread.detachNewThread { [self] in
                self.data = handle.readDataToEndOfFile()
                self.done.signal()
            }
        }

        func wait() -> String {
            done.wait()
            return String(decoding: data, as: UTF8.self)
        }
    }
}

/// Polls `condition` every 10 ms until it holds or `seconds` pass; returns
/// whether it held. For conditions another thread makes true.
package func waitUntil(seconds: Double = 30, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

/// Waits (polling every 10 ms, at most `seconds`) until the file at `path`
/// exists and is not empty; returns its text, or nil when it never came.
package func waitForFile(_ path: String, seconds: Double = 60) -> String? {
    let deadline = Date().addingTimeInterval(seconds)
    repeat {
        if let data = FileManager.default.contents(atPath: path), !data.isEmpty {
            return String(decoding: data, as: UTF8.self)
        }
        usleep(10_000)
    } while Date() < deadline
    return nil
}

/// Sends signals to one thread of another process.
package enum ThreadSignal {
    private typealias TgKill = @convention(c) (Int32, Int32, Int32) -> Int32
    /// glibc declares `tgkill` only under `_GNU_SOURCE`, which Swift's Glibc
    /// module does not set, so it is looked up by name.
    private static let tgkill: TgKill? = dlsym(nil, "tgkill").map { unsafeBitCast($0, to: TgKill.self) }

    /// `tgkill(2)`: sends `signal` to thread `tid` of process `pid`, as the
    /// watchdog or an administrator might hit whichever thread. Throws when it fails.
    package static func send(_ signal: Int32, toThread tid: Int32, ofProcess pid: Int32) throws {
        guard let tgkill else { throw TestSetupError("tgkill is not available") }
        guard tgkill(pid, tid, signal) == 0 else { throw TestSetupError("tgkill(\(pid), \(tid), \(signal)): errno \(errno)") }
    }
}
