import Foundation
import Testing
import TestSupport

/// flowd-bench as built, end to end in its smallest run. Asserts that it
/// runs and prints its machine-readable lines, never what the numbers are:
/// the benchmark is for `make bench`, not for `make test`.
@Suite("flowd-bench")
struct FlowBenchTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The build directory holding flowd-bench, flowd and the plugins.
    static let buildDirectory = BuildProducts.directory(holding: "flowd-bench")

    static func bench(_ arguments: [String]) throws -> ChildProcess.Result {
        try ChildProcess.run(
            buildDirectory + "/flowd-bench",
            arguments + ["--build-dir", buildDirectory, "--flows-dir", repository.appendingPathComponent("flows").path],
            timeout: .seconds(600))
    }

    @Test("a quick run prints every machine-readable line, the SetAnswers ratio last")
    func quickRun() throws {
        let run = try Self.bench(["--quick", "--sessions", "100"])
        #expect(run.status == .exited(0), "\(run.standardError)")
        let lines = run.standardOutput.split(separator: "\n").map(String.init)
        for key in [
            "ratio Continue/Ping", "ratio GetStep/Ping", "ratio Back/Ping", "ratio Walk/Ping", "throughput8 SetAnswers/Ping",
            "throughput8 GetStep/Ping", "memory bytes/live session", "ratio SetAnswers/Ping",
        ] {
            let line = try #require(lines.first { $0.hasPrefix(key + ": ") }, "no \"\(key)\" line in:\n\(run.standardOutput)")
            #expect(Double(line.dropFirst(key.count + 2)) != nil, "\(line)")
        }
        #expect(lines.last?.hasPrefix("ratio SetAnswers/Ping: ") == true)
        #expect(run.standardOutput.contains("start-up: READY=1"))
    }

    @Test("--plugin-modes prints a validator call's cost in-process and isolated, and their ratio last")
    func pluginModes() throws {
        let run = try Self.bench(["--plugin-modes", "--quick"])
        #expect(run.status == .exited(0), "\(run.standardError)")
        let lines = run.standardOutput.split(separator: "\n").map(String.init)
        for key in ["plugin call in-process", "plugin call isolated"] {
            let line = try #require(lines.first { $0.hasPrefix(key + ": ") }, "no \"\(key)\" line in:\n\(run.standardOutput)")
            #expect(Double(line.dropFirst(key.count + 2).dropLast(3)) != nil, "\(line)")
        }
        let last = try #require(lines.last)
        #expect(last.hasPrefix("ratio isolated/in-process: ") && Double(last.dropFirst(27)) != nil, "\(last)")
    }

    @Test("a wrong command line is one line on stderr and status 64", arguments: [
        ["--sessions", "0"], ["--sessions"], ["--scaling", "10,x"], ["--frobnicate"], ["--clients", "-1"],
    ])
    func usageErrors(_ arguments: [String]) throws {
        let run = try Self.bench(arguments)
        #expect(run.status == .exited(64))
        #expect(run.standardOutput.isEmpty)
        #expect(run.standardError.split(separator: "\n").count == 1, "\(run.standardError)")
        #expect(run.standardError.hasPrefix("flowd-bench: "))
    }

    @Test("a build directory without flowd is refused with the reason")
    func missingFlowd() throws {
        let run = try ChildProcess.run(
            Self.buildDirectory + "/flowd-bench", ["--quick", "--build-dir", "/nonexistent"], timeout: .seconds(60))
        #expect(run.status == .exited(1))
        #expect(run.standardError.contains("no flowd at /nonexistent/flowd"))
    }
}
