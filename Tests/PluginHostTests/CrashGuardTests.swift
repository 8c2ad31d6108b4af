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

    @Test("FileCrashGuard: calls in progress when the process goes away are pending for the next one")
    func fileGuard() throws {
        let temp = try TemporaryDirectory()
        let path = temp.appending("plugin-calls")
        let a = GuardedCall(pluginPath: "/p/a.so", pluginName: "a", capability: "a.one", startedAt: 1)
        let b = GuardedCall(pluginPath: "/p/b.so", pluginName: "b", capability: nil, startedAt: 2)
        let c = GuardedCall(pluginPath: "/p/c.so", pluginName: "c", capability: "c.x", startedAt: 3)
        do {
            let first = try FileCrashGuard(path: path, slots: 4)
            #expect(first.pending().isEmpty)
            let ta = first.begin(a)
            _ = first.begin(b)
            let tc = first.begin(c)
            #expect(ta.rawValue != 0 && tc.rawValue != 0)
            first.end(ta)
            first.end(tc)
            // The process's own calls are not "pending": that is for leftovers.
            #expect(first.pending().isEmpty)
        }
        // The next process (the guard was closed without ending b) finds b.
        let second = try FileCrashGuard(path: path, slots: 4)
        #expect(second.pending() == [LeftoverCall(call: b, ending: .interrupted)])
        // New calls do not disturb the leftover until it is cleared.
        let td = second.begin(a)
        #expect(second.pending() == [LeftoverCall(call: b, ending: .interrupted)])
        second.clearPending()
        #expect(second.pending().isEmpty)
        second.end(td)
        // The file is private.
        var st = stat()
        #expect(stat(path, &st) == 0)
        #expect(st.st_mode & 0o777 == 0o600)
    }

    @Test("FileCrashGuard: more calls than slots run unrecorded, and slots are reused")
    func fileGuardSlots() throws {
        let temp = try TemporaryDirectory()
        let crashGuard = try FileCrashGuard(path: temp.appending("plugin-calls"), slots: 2)
        let call = GuardedCall(pluginPath: "/p/a.so", pluginName: "a", capability: "a.one", startedAt: 1)
        let t1 = crashGuard.begin(call)
        let t2 = crashGuard.begin(call)
        let t3 = crashGuard.begin(call)
        #expect(t1.rawValue != 0 && t2.rawValue != 0)
        #expect(t3.rawValue == 0)
        crashGuard.end(t3)  // harmless
        crashGuard.end(t1)
        #expect(crashGuard.begin(call).rawValue == t1.rawValue)
        // A record too long for a slot is not written.
        let long = GuardedCall(pluginPath: "/" + String(repeating: "p", count: 4000), pluginName: "a",
            capability: nil, startedAt: 1)
        crashGuard.end(t2)
        #expect(crashGuard.begin(long).rawValue == 0)
    }

    @Test("FileCrashGuard refuses a file others can write, a symlink, and a file another guard holds")
    func fileGuardRefuses() throws {
        let temp = try TemporaryDirectory()
        let open = temp.appending("open")
        #expect(FileManager.default.createFile(atPath: open, contents: nil))
        chmod(open, 0o666)
        #expect(throws: CrashGuardError.self) { try FileCrashGuard(path: open) }

        let target = temp.appending("target")
        #expect(FileManager.default.createFile(atPath: target, contents: nil))
        chmod(target, 0o600)
        #expect(Glibc.symlink(target, temp.appending("link")) == 0)
        #expect(throws: CrashGuardError.self) { try FileCrashGuard(path: temp.appending("link")) }

        let held = try FileCrashGuard(path: temp.appending("held"))
        #expect(throws: CrashGuardError.self) { try FileCrashGuard(path: temp.appending("held")) }
        _ = held.pending()
    }

    @Test("FileCrashGuard starts empty over a file of another layout")
    func fileGuardResetsForeignFile() throws {
        let temp = try TemporaryDirectory()
        let path = temp.appending("plugin-calls")
        try Data(repeating: 1, count: 100_000).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
        let crashGuard = try FileCrashGuard(path: path, slots: 8)
        #expect(crashGuard.pending().isEmpty)
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
        let crashGuard = try FileCrashGuard(path: guardDir)
        #expect(crashGuard.pending().isEmpty)
    }
}
