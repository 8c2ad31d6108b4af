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

    /// `--callgrind`'s two `SetAnswers` phases are each one case on every
    /// call (docs/performance.md, the seventh round): no change of a session
    /// written at the fill moves its idle-period index entry, and every
    /// change of a session filled as an hour idle does. Read back from the
    /// kept run's database with `sqlite3`; a debug flowd is over the
    /// budgets, which this test does not judge.
    @Test("--callgrind changes recent sessions without moving their index entries, idle ones moving them")
    func callgrindPhasesAreEachOneCase() throws {
        let dir = try TemporaryDirectory(prefix: "flowd-bench-test")
        let rounds = 8
        let run = try Self.bench(["--callgrind", "--sessions", "60", "--rounds", "\(rounds)", "--keep", "--dir", dir.path])
        let overBudget = run.standardError.contains("cost more instructions than their budget")
        #expect(run.status == .exited(0) || (run.status == .exited(1) && overBudget), "\(run.standardError)")
        let lines = run.standardOutput.split(separator: "\n").map(String.init)
        for key in ["instructions SetAnswers", "instructions SetAnswersAfterIdle"] {
            let line = try #require(lines.first { $0.hasPrefix(key + ": ") }, "no \"\(key)\" line in:\n\(run.standardOutput)")
            #expect(Int(line.dropFirst(key.count + 2)) != nil, "\(line)")
        }
        #expect(!run.standardOutput.contains("note: the phases ended"))
        let kept = try #require(try FileManager.default.contentsOfDirectory(atPath: dir.path).first { $0.hasPrefix("flowd-bench") })
        let database = "\(dir.path)/\(kept)/state/sessions.sqlite"
        // Filled as idle: created (and last written) an hour before the fill.
        let idle = "updated_at - created_at > 3600000000"
        let query = """
            SELECT count(*) FROM sessions WHERE \(idle);
            SELECT count(*) FROM sessions WHERE \(idle) AND idle_period = updated_at >> 26;
            SELECT count(*) FROM sessions WHERE NOT (\(idle)) AND updated_at > created_at;
            SELECT count(*) FROM sessions WHERE NOT (\(idle)) AND idle_period != created_at >> 26;
            """
        let counts = try ChildProcess.run("/usr/bin/sqlite3", [database, query])
        #expect(counts.status == .exited(0), "\(counts.standardError)")
        let values = counts.standardOutput.split(separator: "\n").compactMap { Int($0) }
        try #require(values.count == 4, "\(counts.standardOutput)")
        #expect(values[0] == rounds, "sessions changed after an hour idle")
        #expect(values[1] == rounds, "of them, entries moved to their change's period")
        #expect(values[2] >= rounds, "recent sessions changed")
        #expect(values[3] == 0, "recent sessions whose entries moved")
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
