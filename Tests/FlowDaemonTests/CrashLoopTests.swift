import DBus
import FlowClient
import FlowProtocol
import Foundation
import Testing
import TestSupport

/// N plugins that crash flowd while it loads them are all disabled within
/// N + 1 starts: each start records the quarantine it found before it loads
/// any plugin, so the next crash cannot lose it (the second defect of the
/// hostile-client campaign: with two, every start crashed, forever).
@Suite("Plugins that crash while loading")
struct CrashLoopTests {
    /// The fixtures, each crashing its own way: a fault in a C library
    /// constructor (SIGSEGV), a trap in the registration (SIGILL or SIGTRAP),
    /// an abort() in the ABI entry point (SIGABRT).
    static let crashers = [
        ("FixtureCrashInConstructorPlugin", "30-constructor.so"),
        ("FixtureCrashOnLoadPlugin", "40-register.so"),
        ("FixtureCrashInABIPlugin", "50-abi.so"),
    ]

    @Test("every crashing plugin is disabled within N + 1 starts, and the rest serves", arguments: [2, 3])
    func allDisabledWithinNPlusOneStarts(count: Int) async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let directory = try TemporaryDirectory(prefix: "flowd-crashloop")
        let flows = directory.file("flows")
        let plugins = directory.file("plugins")
        for path in [flows, plugins] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false) }
        try TestFlows.minimal(id: "fine").write(toFile: flows + "/fine.json", atomically: true, encoding: .utf8)
        try RefusedPluginTests.install("FixtureTestPlugin", into: plugins, as: "10-test.so")
        let crashing = Self.crashers.prefix(count)
        for (product, file) in crashing { try RefusedPluginTests.install(product, into: plugins, as: file) }
        let arguments = [
            "--address", bus.address, "--flows-dir", flows, "--plugin-dir", plugins, "--state-dir", directory.file("state"),
        ]

        var logs: [String] = []
        var daemon: FlowdProcess?
        for start in 1...(count + 1) {
            let process = try FlowdProcess(
                arguments: arguments, environment: ["SWIFT_BACKTRACE": "enable=no"],
                notifyPath: directory.file("notify-\(start)"))
            do {
                try await process.ready()
                daemon = process
                logs.append(process.standardError)
                break
            } catch {
                // A start that crashed died by the plugin's signal, before READY=1.
                if case .signaled = await process.ended(timeout: .seconds(20)) {} else {
                    Issue.record("start \(start) did not crash: \(error)")
                }
                logs.append(process.standardError)
            }
        }
        let running = try #require(daemon, "no start of \(count + 1) got ready; the logs:\n\(logs.joined(separator: "\n--\n"))")
        defer { if running.child.exitStatus == nil { running.child.terminate(grace: .zero) } }
        // Exactly N crashes, then a start that serves.
        #expect(logs.count == count + 1)

        let client = try FlowClient(bus: .address(bus.address))
        let list = try await client.listPlugins()
        for (_, file) in crashing {
            let entry = try #require(list.first { $0.path == plugins + "/" + file }, "\(list)")
            #expect(entry.status == .disabled, "\(file): \(entry)")
            #expect(entry.error.hasPrefix("crashed the daemon during loading at "), "\(file): \(entry.error)")
            #expect(entry.error.hasSuffix("; disabled until its file changes"), "\(file): \(entry.error)")
        }
        let good = list.first { $0.path == plugins + "/10-test.so" }
        #expect(good?.status == .loaded)
        #expect(try await client.flowIDs() == ["fine"])

        // Each quarantine was logged once, by the start that found its crash.
        let all = logs.joined(separator: "\n")
        for (_, file) in crashing {
            let stem = String(file.dropLast(3))
            let lines = all.split(separator: "\n").filter { $0.contains("plugin \(stem) crashed the daemon during loading") }
            #expect(lines.count == 1, "\(file): \(lines)")
        }
        #expect(await running.terminate() == .exited(0))
    }
}
