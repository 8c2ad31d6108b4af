// The crash guard for real: plugins that kill the process, run in
// plugin-host-probe, and the next start that disables them and keeps serving.
import FlowKit
import Foundation
import Glibc
import PluginHost
import PluginTestSupport
import Testing

@Suite("Crash guard")
struct CrashGuardTests {
    @Test("GuardedCall survives its one-line text form, a path with tabs included")
    func encoding() throws {
        let call = GuardedCall(
            pluginPath: "/usr/lib/flowd/plugins/odd\tname.so", pluginName: "flowd.spool", capability: "flowd.spool",
            startedAt: 1_717_236_000_123_456)
        #expect(GuardedCall(encoded: call.encoded) == call)
        let loading = GuardedCall(pluginPath: "/p/x.so", pluginName: "x", capability: nil, startedAt: 5)
        #expect(GuardedCall(encoded: loading.encoded) == loading)
        for bad in ["", "v1", "v2\t1\tn\tc\t/p", "v1\tnot-a-number\tn\tc\t/p", "v1\t1\tn\tc\t"] {
            #expect(GuardedCall(encoded: bad) == nil, "\(bad)")
        }
    }

    @Test("FileCrashGuard: begin records, end forgets, pending lists, clear empties")
    func fileGuard() throws {
        let temp = try TemporaryDirectory()
        let crashGuard = try FileCrashGuard(directory: temp.appending("guard"))
        let a = GuardedCall(pluginPath: "/p/a.so", pluginName: "a", capability: "a.one", startedAt: 1)
        let b = GuardedCall(pluginPath: "/p/b.so", pluginName: "b", capability: nil, startedAt: 2)
        let ta = crashGuard.begin(a)
        let tb = crashGuard.begin(b)
        #expect(Set(crashGuard.pending()) == [a, b])
        crashGuard.end(ta)
        #expect(crashGuard.pending() == [b])
        crashGuard.end(tb)
        #expect(crashGuard.pending().isEmpty)
        _ = crashGuard.begin(a)
        // Another instance on the same directory (the next daemon) sees it.
        let next = try FileCrashGuard(directory: temp.appending("guard"))
        #expect(next.pending() == [a])
        next.clearPending()
        #expect(crashGuard.pending().isEmpty)
        // The directory is private.
        var st = stat()
        #expect(stat(temp.appending("guard"), &st) == 0)
        #expect(st.st_mode & 0o777 == 0o700)
    }

    @Test("FileCrashGuard refuses a directory others can write")
    func fileGuardRefusesOpenDirectory() throws {
        let temp = try TemporaryDirectory()
        let dir = try temp.makeDirectory("open", mode: 0o777)
        #expect(throws: CrashGuardError.self) { try FileCrashGuard(directory: dir) }
    }

    @Test(
        "a plugin that crashes the process during a call is disabled on the next start",
        arguments: [("submit-action", "crash.fatal"), ("field-validator", "crash.null")])
    func crashDuringCall(kind: String, capability: String) throws {
        let temp = try TemporaryDirectory()
        let dir = try PluginFiles.directory(["FixtureTestPlugin", "FixtureCrashPlugin"], in: temp)
        let guardDir = temp.appending("guard")

        // First run: the call kills the probe.
        let crashed = try Subprocess.run(
            BuildProducts.probe, ["call", "--dir", dir, "--guard", guardDir, "--kind", kind, "--name", capability])
        #expect(crashed.exitCode == nil || crashed.exitCode != 0, "the probe should have died")
        #expect(crashed.signal != nil || (crashed.exitCode ?? 0) >= 128)
        #expect(!crashed.lines.contains { $0.hasPrefix("result") })
        #expect(crashed.lines.contains("record\tcrash\tloaded\t"))

        // Second run: the crash guard found the call, the plugin is disabled, the others load.
        let restarted = try Subprocess.run(BuildProducts.probe, ["load", "--dir", dir, "--guard", guardDir])
        #expect(restarted.exitCode == 0)
        let crashLine = try #require(restarted.lines.first { $0.hasPrefix("record\tcrash\t") })
        let fields = crashLine.split(separator: "\t", omittingEmptySubsequences: false)
        #expect(fields.count == 4)
        #expect(fields[2] == "disabled")
        #expect(fields[3].hasPrefix("crashed the daemon during a call to \(capability) at "))
        #expect(fields[3].hasSuffix("; disabled until its file changes"))
        #expect(restarted.lines.contains("record\ttest\tloaded\t"))
        #expect(restarted.lines.contains { $0.hasPrefix("quarantine\tcrash\t") })

        // The leftover was cleared: a third start has nothing pending (the
        // daemon keeps the quarantine in its store, which the probe does not).
        let third = try Subprocess.run(BuildProducts.probe, ["load", "--dir", dir, "--guard", guardDir])
        #expect(third.lines.contains("record\tcrash\tloaded\t"))
        #expect(!third.lines.contains { $0.hasPrefix("quarantine") })
    }

    @Test("a plugin that crashes the process while loading is not loaded again")
    func crashDuringLoad() throws {
        let temp = try TemporaryDirectory()
        let dir = try PluginFiles.directory(["FixtureTestPlugin", "FixtureCrashOnLoadPlugin"], in: temp)
        let guardDir = temp.appending("guard")

        let crashed = try Subprocess.run(BuildProducts.probe, ["load", "--dir", dir, "--guard", guardDir])
        #expect(crashed.exitCode != 0)
        #expect(crashed.standardError.contains("crash-on-load registration"))

        let restarted = try Subprocess.run(BuildProducts.probe, ["load", "--dir", dir, "--guard", guardDir])
        #expect(restarted.exitCode == 0)
        let line = try #require(restarted.lines.first { $0.hasPrefix("record\tFixtureCrashOnLoadPlugin\t") })
        #expect(line.contains("\tdisabled\tcrashed the daemon during loading at "))
        #expect(restarted.lines.contains("record\ttest\tloaded\t"))
    }

    @Test("calls that end normally leave nothing behind for the next start")
    func cleanRunLeavesNothing() throws {
        let temp = try TemporaryDirectory()
        let dir = try PluginFiles.directory(["FixtureTestPlugin"], in: temp)
        let guardDir = temp.appending("guard")
        let run = try Subprocess.run(
            BuildProducts.probe,
            ["call", "--dir", dir, "--guard", guardDir, "--kind", "field-validator", "--name", "test.even"])
        #expect(run.exitCode == 0)
        #expect(run.lines.contains("result\tsuccess\tnil"))
        let crashGuard = try FileCrashGuard(directory: guardDir)
        #expect(crashGuard.pending().isEmpty)
    }
}
