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

    /// A way a plugin crashes the process during a call, and the signals
    /// that may kill it (a trap is SIGILL on x86_64, SIGTRAP on arm64).
    struct CrashCase: Sendable, CustomTestStringConvertible {
        var kind: String
        var capability: String
        var signals: [Int32]
        var testDescription: String { capability }
    }

    static let crashCases = [
        CrashCase(kind: "submit-action", capability: "crash.fatal", signals: [SIGILL, SIGTRAP]),
        CrashCase(kind: "field-validator", capability: "crash.null", signals: [SIGSEGV]),
        CrashCase(kind: "submit-action", capability: "crash.abort", signals: [SIGABRT]),
        CrashCase(kind: "field-validator", capability: "crash.overflow", signals: [SIGSEGV, SIGBUS]),
        CrashCase(kind: "field-validator", capability: "crash.after-await", signals: [SIGSEGV]),
        CrashCase(kind: "field-validator", capability: "crash.in-child", signals: [SIGSEGV]),
    ]

    static let signalNames: [Int32: String] = [
        SIGSEGV: "SIGSEGV", SIGBUS: "SIGBUS", SIGILL: "SIGILL", SIGTRAP: "SIGTRAP", SIGABRT: "SIGABRT", SIGKILL: "SIGKILL",
    ]

    @Test("a plugin that crashes the process during a call is disabled on the next start", arguments: crashCases)
    func crashDuringCall(_ crash: CrashCase) throws {
        let temp = try TemporaryDirectory()
        let dir = try PluginFiles.directory(["FixtureTestPlugin", "FixtureCrashPlugin"], in: temp)
        let guardFile = temp.appending("guard")

        // First run: the call kills the probe, by the plugin's own signal
        // (the crash guard hands it on to the default action).
        let crashed = try Subprocess.run(
            BuildProducts.probe,
            ["call", "--dir", dir, "--guard", guardFile, "--kind", crash.kind, "--name", crash.capability])
        let signal = try #require(crashed.signal, "the probe should have died by a signal: \(crashed)")
        #expect(crash.signals.contains(signal), "died by signal \(signal)")
        #expect(!crashed.lines.contains { $0.hasPrefix("result") })
        #expect(crashed.lines.contains("record\tcrash\tloaded\t"))

        // Second run: the crash guard found the call crashed, the plugin is
        // disabled with the signal in its reason, the others load.
        let restarted = try Subprocess.run(BuildProducts.probe, ["load", "--dir", dir, "--guard", guardFile])
        #expect(restarted.exitCode == 0)
        let crashLine = try #require(restarted.lines.first { $0.hasPrefix("record\tcrash\t") })
        let fields = crashLine.split(separator: "\t", omittingEmptySubsequences: false)
        #expect(fields.count == 4)
        #expect(fields[2] == "disabled")
        #expect(fields[3].hasPrefix("crashed the daemon during a call to \(crash.capability) at "))
        #expect(fields[3].hasSuffix(" (\(Self.signalNames[signal] ?? "?")); disabled until its file changes"))
        #expect(restarted.lines.contains("record\ttest\tloaded\t"))
        #expect(restarted.lines.contains { $0.hasPrefix("quarantine\tcrash\t") })
        #expect(!restarted.lines.contains { $0.hasPrefix("interrupted") })

        // The leftover was cleared: a third start has nothing pending (the
        // daemon keeps the quarantine in its store, which the probe does not).
        let third = try Subprocess.run(BuildProducts.probe, ["load", "--dir", dir, "--guard", guardFile])
        #expect(third.lines.contains("record\tcrash\tloaded\t"))
        #expect(!third.lines.contains { $0.hasPrefix("quarantine") || $0.hasPrefix("interrupted") })
    }

    @Test("with Swift's backtracer on, a crash still gets its crash report, and the plugin is blamed")
    func crashWithBacktracer() throws {
        let temp = try TemporaryDirectory()
        let dir = try PluginFiles.directory(["FixtureCrashPlugin"], in: temp)
        let guardFile = temp.appending("guard")
        // Without symbols or colours: the report only has to happen.
        let crashed = try Subprocess.run(
            BuildProducts.probe,
            ["call", "--dir", dir, "--guard", guardFile, "--kind", "field-validator", "--name", "crash.overflow"],
            environment: ["SWIFT_BACKTRACE": "enable=yes,interactive=no,symbolicate=off,color=no,output-to=stderr"])
        #expect(crashed.signal == SIGSEGV, "\(crashed)")
        // The runtime's report names the fault and the crashed thread: a
        // plugin thread, whose overflowed stack the handlers did not need.
        #expect(crashed.standardError.contains("Program crashed: "), "\(crashed.standardError)")
        #expect(crashed.standardError.contains("\"flowd-plugin\" crashed"), "\(crashed.standardError)")

        let restarted = try Subprocess.run(BuildProducts.probe, ["load", "--dir", dir, "--guard", guardFile])
        let line = try #require(restarted.lines.first { $0.hasPrefix("record\tcrash\t") })
        #expect(line.contains("\tdisabled\tcrashed the daemon during a call to crash.overflow at "))
    }

    /// A way the process is stopped from outside while a healthy plugin is in
    /// a long call.
    struct OutsideSignal: Sendable, CustomTestStringConvertible {
        var signal: Int32
        /// Sent to the plugin's own thread (tgkill) rather than the process.
        var toPluginThread: Bool
        var testDescription: String {
            "\(signalNames[signal] ?? "signal \(signal)") to the \(toPluginThread ? "plugin thread" : "process")"
        }
    }

    static let outsideSignals = [
        // kill -9, the OOM killer.
        OutsideSignal(signal: SIGKILL, toPluginThread: false),
        // The watchdog's SIGABRT, and a SIGSEGV someone sends, landing on the
        // very thread that runs the plugin: still not the plugin's fault.
        OutsideSignal(signal: SIGABRT, toPluginThread: true),
        OutsideSignal(signal: SIGSEGV, toPluginThread: true),
        OutsideSignal(signal: SIGABRT, toPluginThread: false),
    ]

    @Test("a healthy plugin in a long call when the process is killed from outside is not blamed", arguments: outsideSignals)
    func killedFromOutside(_ outside: OutsideSignal) throws {
        let temp = try TemporaryDirectory()
        let dir = try PluginFiles.directory(["FixtureTestPlugin", "FixturePatientPlugin"], in: temp)
        let guardFile = temp.appending("guard")
        let ready = temp.appending("ready")

        let probe = try Subprocess.start(
            BuildProducts.probe,
            ["call", "--dir", dir, "--guard", guardFile, "--kind", "submit-action", "--name", "patient.wait",
             "--option", "ready=\(ready)"])
        let text = try #require(waitForFile(ready), "the plugin's call never started")
        let thread = try #require(Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)), "\(text)")
        if outside.toPluginThread {
            try ThreadSignal.send(outside.signal, toThread: thread, ofProcess: probe.pid)
        } else {
            #expect(kill(probe.pid, outside.signal) == 0)
        }
        let stopped = try probe.wait()
        #expect(stopped.signal == outside.signal, "\(stopped)")
        #expect(!stopped.lines.contains { $0.hasPrefix("result") })

        // Next start: the call is reported as interrupted, the plugin loads.
        let restarted = try Subprocess.run(BuildProducts.probe, ["load", "--dir", dir, "--guard", guardFile])
        #expect(restarted.exitCode == 0)
        #expect(restarted.lines.contains("record\tpatient\tloaded\t"), "\(restarted.lines)")
        #expect(!restarted.lines.contains { $0.hasPrefix("quarantine") })
        let notice = try #require(restarted.lines.first { $0.hasPrefix("interrupted\tpatient\tpatient.wait\t") })
        #expect(notice.contains("flowd stopped during a call to patient.wait (plugin patient, "))
        #expect(notice.hasSuffix("; not blamed: nothing crashed in the plugin"))

        // Reported once: the leftover is cleared.
        let third = try Subprocess.run(BuildProducts.probe, ["load", "--dir", dir, "--guard", guardFile])
        #expect(!third.lines.contains { $0.hasPrefix("interrupted") || $0.hasPrefix("quarantine") })
    }

    @Test("a crash on a thread of the host while a plugin call is in flight does not blame the plugin")
    func crashElsewhere() throws {
        let temp = try TemporaryDirectory()
        let dir = try PluginFiles.directory(["FixturePatientPlugin"], in: temp)
        let guardFile = temp.appending("guard")
        let ready = temp.appending("ready")
        // The probe crashes one of its own threads once the plugin says it runs.
        let crashed = try Subprocess.run(
            BuildProducts.probe,
            ["call", "--dir", dir, "--guard", guardFile, "--kind", "submit-action", "--name", "patient.wait",
             "--option", "ready=\(ready)", "--crash-when", ready])
        #expect(crashed.signal == SIGSEGV, "\(crashed)")
        #expect(crashed.lines.contains("crashing\telsewhere"))

        let restarted = try Subprocess.run(BuildProducts.probe, ["load", "--dir", dir, "--guard", guardFile])
        #expect(restarted.lines.contains("record\tpatient\tloaded\t"), "\(restarted.lines)")
        #expect(!restarted.lines.contains { $0.hasPrefix("quarantine") })
        #expect(restarted.lines.contains { $0.hasPrefix("interrupted\tpatient\tpatient.wait\t") })
    }

    @Test("a plugin that ends the process with exit() is not blamed: there is no signal to catch")
    func exitIsNotBlamed() throws {
        let temp = try TemporaryDirectory()
        let dir = try PluginFiles.directory(["FixtureCrashPlugin"], in: temp)
        let guardFile = temp.appending("guard")
        let exited = try Subprocess.run(
            BuildProducts.probe,
            ["call", "--dir", dir, "--guard", guardFile, "--kind", "submit-action", "--name", "crash.exit"])
        #expect(exited.exitCode == 3, "\(exited)")

        let restarted = try Subprocess.run(BuildProducts.probe, ["load", "--dir", dir, "--guard", guardFile])
        #expect(restarted.lines.contains("record\tcrash\tloaded\t"))
        #expect(restarted.lines.contains { $0.hasPrefix("interrupted\tcrash\tcrash.exit\t") })
    }

    /// A plugin that kills the process while it loads, and the output that shows it.
    struct LoadCrash: Sendable, CustomTestStringConvertible {
        var product: String
        var standardError: String?
        var testDescription: String { product }
    }

    @Test(
        "a plugin that crashes the process while loading is not loaded again",
        arguments: [
            // In its entry point (fatalError), and in its library constructor, inside dlopen.
            LoadCrash(product: "FixtureCrashOnLoadPlugin", standardError: "crash-on-load registration"),
            LoadCrash(product: "FixtureCrashInConstructorPlugin", standardError: nil),
        ])
    func crashDuringLoad(_ crash: LoadCrash) throws {
        let temp = try TemporaryDirectory()
        let dir = try PluginFiles.directory(["FixtureTestPlugin", crash.product], in: temp)
        let guardFile = temp.appending("guard")

        let crashed = try Subprocess.run(BuildProducts.probe, ["load", "--dir", dir, "--guard", guardFile])
        #expect(crashed.signal != nil, "\(crashed)")
        if let text = crash.standardError { #expect(crashed.standardError.contains(text)) }

        let restarted = try Subprocess.run(BuildProducts.probe, ["load", "--dir", dir, "--guard", guardFile])
        #expect(restarted.exitCode == 0)
        let line = try #require(restarted.lines.first { $0.hasPrefix("record\t\(crash.product)\t") })
        #expect(line.contains("\tdisabled\tcrashed the daemon during loading at "), "\(line)")
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
        #expect(run.lines.contains("result\tsuccess\taccepted"))
        let crashGuard = try FileCrashGuard(path: guardDir)
        #expect(crashGuard.pending().isEmpty)
    }
}
