// The loader through real dlopen of real .so files: what it loads, what it
// refuses and why, and that a refused plugin never stops the others.
import FlowKit
import Foundation
import Glibc
import PluginHost
import PluginTestSupport
import Testing

@Suite("PluginLoader")
struct LoaderTests {
    @Test("a well-behaved plugin loads with its name, version, kinds and capabilities")
    func loadsFixture() throws {
        let temp = try TemporaryDirectory()
        let (report, _) = try PluginFiles.load(["FixtureTestPlugin"], in: temp)
        let record = try #require(report.registry.record(file: "FixtureTestPlugin.so"))
        #expect(record.status == .loaded)
        #expect(record.error == nil)
        #expect(record.name == "test")
        #expect(record.version == "1.0")
        #expect(record.kinds == CapabilityKind.allCases)
        #expect(record.capabilities.contains(CapabilityID(kind: .fieldValidator, name: "test.even")))
        #expect(record.file != nil)
        #expect(report.registry.catalog.contains(CapabilityID(kind: .submitAction, name: "test.slow-submit")))
        #expect(report.registry.capability(.fieldValidator, named: "test.even")?.plugin.name == "test")
        // Looking a name up under the wrong kind finds nothing.
        #expect(report.registry.capability(.submitAction, named: "test.even") == nil)
        #expect(report.directoryProblems.isEmpty)
    }

    @Test("a plugin built against another FlowKit ABI is refused before its registration runs")
    func wrongABI() throws {
        let temp = try TemporaryDirectory()
        // The fixture's registration calls fatalError: reaching it would crash this test.
        let (report, _) = try PluginFiles.load(["FixtureWrongABIPlugin", "FixtureTestPlugin"], in: temp)
        let record = try #require(report.registry.record(file: "FixtureWrongABIPlugin.so"))
        #expect(record.status == .failed)
        #expect(
            record.error == "built against FlowKit ABI 7, this flowd has ABI \(abiText(FlowKitABI.version)) "
                + "(the plugin's SDK is older than 1.1): rebuild it with this flowd's SDK")
        #expect(report.registry.record(file: "FixtureTestPlugin.so")?.status == .loaded)
    }

    @Test("a plugin built against a FlowKit with other sources (another interface fingerprint) is refused before its registration runs")
    func otherInterface() throws {
        let temp = try TemporaryDirectory()
        // The fixture's registration calls fatalError: reaching it would crash this test.
        let (report, _) = try PluginFiles.load(["FixtureOtherFlowKitPlugin", "FixtureTestPlugin"], in: temp)
        let record = try #require(report.registry.record(file: "FixtureOtherFlowKitPlugin.so"))
        #expect(record.status == .failed)
        let theirs = FlowKitABI.version(ofFingerprint: FlowKitABI.interfaceFingerprint ^ 0x5a5a)
        #expect(theirs != FlowKitABI.version)
        #expect(
            record.error == "built against FlowKit ABI \(abiText(theirs)), this flowd has ABI "
                + "\(abiText(FlowKitABI.version)) (another FlowKit interface): rebuild it with this flowd's SDK and toolchain")
        #expect(report.registry.record(file: "FixtureTestPlugin.so")?.status == .loaded)
    }

    @Test("a shared library without the entry symbols is refused")
    func missingEntry() throws {
        let temp = try TemporaryDirectory()
        let (report, _) = try PluginFiles.load(["FixtureNoEntryPlugin", "FixtureTestPlugin"], in: temp)
        let record = try #require(report.registry.record(file: "FixtureNoEntryPlugin.so"))
        #expect(record.status == .failed)
        #expect(record.error?.contains("missing entry symbol flowd_plugin_abi_version") == true)
        #expect(record.name == "FixtureNoEntryPlugin")
        #expect(report.registry.record(file: "FixtureTestPlugin.so")?.status == .loaded)
    }

    @Test("a file that is not a library at all is refused with dlopen's reason")
    func notALibrary() throws {
        let temp = try TemporaryDirectory()
        let dir = try PluginFiles.directory(["FixtureTestPlugin"], in: temp)
        try Data("not an ELF file".utf8).write(to: URL(fileURLWithPath: dir + "/garbage.so"))
        chmod(dir + "/garbage.so", 0o644)
        let report = PluginLoader(configuration: .init(directories: [dir])).load(crashGuard: MemoryCrashGuard())
        let record = try #require(report.registry.record(file: "garbage.so"))
        #expect(record.status == .failed)
        #expect(record.error?.hasPrefix("cannot be loaded: ") == true)
        #expect(report.registry.record(file: "FixtureTestPlugin.so")?.status == .loaded)
    }

    @Test(
        "a file writable by group or others is refused",
        arguments: [0o757 as mode_t, 0o775, 0o666, 0o722])
    func writableFile(mode: mode_t) throws {
        let temp = try TemporaryDirectory()
        let dir = try temp.makeDirectory("plugins")
        try PluginFiles.install("FixtureTestPlugin", into: dir, mode: mode)
        let report = PluginLoader(configuration: .init(directories: [dir])).load(crashGuard: MemoryCrashGuard())
        let record = try #require(report.registry.record(file: "FixtureTestPlugin.so"))
        #expect(record.status == .failed)
        #expect(record.error?.contains("is writable by group or others") == true)
        #expect(record.error?.contains(String(mode, radix: 8)) == true)
        #expect(report.registry.catalog.isEmpty)
    }

    @Test("a symlink is refused even when it points at a good plugin")
    func symlink() throws {
        let temp = try TemporaryDirectory()
        let dir = try temp.makeDirectory("plugins")
        let elsewhere = try temp.makeDirectory("elsewhere")
        let target = try PluginFiles.install("FixtureTestPlugin", into: elsewhere)
        #expect(Glibc.symlink(target, dir + "/linked.so") == 0)
        let report = PluginLoader(configuration: .init(directories: [dir])).load(crashGuard: MemoryCrashGuard())
        let record = try #require(report.registry.record(file: "linked.so"))
        #expect(record.status == .failed)
        #expect(record.error == "is a symlink")
        #expect(report.registry.catalog.isEmpty)
    }

    @Test("a file owned by another user is refused", .enabled(if: geteuid() == 0, "needs root to chown"))
    func foreignOwner() throws {
        let temp = try TemporaryDirectory()
        let dir = try temp.makeDirectory("plugins")
        let path = try PluginFiles.install("FixtureTestPlugin", into: dir)
        #expect(chown(path, 65534, 65534) == 0)
        let report = PluginLoader(configuration: .init(directories: [dir])).load(crashGuard: MemoryCrashGuard())
        let record = try #require(report.registry.record(file: "FixtureTestPlugin.so"))
        #expect(record.status == .failed)
        #expect(record.error?.hasPrefix("is owned by uid 65534; plugins must be owned by root") == true)
    }

    @Test("the owner may also be the daemon's own uid, when configured so")
    func trustedOwners() throws {
        let temp = try TemporaryDirectory()
        let dir = try PluginFiles.directory(["FixtureTestPlugin"], in: temp)
        // Trust nobody this file and directory belong to: refused at the directory.
        let strict = PluginLoader(configuration: .init(directories: [dir], trustedOwners: [4_000_000]))
            .load(crashGuard: MemoryCrashGuard())
        #expect(strict.registry.records.isEmpty)
        #expect(strict.directoryProblems.first?.reason.contains("is owned by uid \(geteuid())") == true)
        // The default trusts root and the euid.
        #expect(PluginLoader.Configuration(directories: []).trustedOwners == [0, UInt32(geteuid())])
    }

    @Test("a FIFO or a directory named .so is refused without hanging")
    func notRegular() throws {
        let temp = try TemporaryDirectory()
        let dir = try temp.makeDirectory("plugins")
        #expect(mkfifo(dir + "/fifo.so", 0o600) == 0)
        #expect(mkdir(dir + "/dir.so", 0o700) == 0)
        let report = PluginLoader(configuration: .init(directories: [dir])).load(crashGuard: MemoryCrashGuard())
        #expect(report.registry.record(file: "fifo.so")?.error == "is not a regular file")
        #expect(report.registry.record(file: "dir.so")?.error == "is not a regular file")
    }

    @Test("a later plugin with a capability name already taken is refused, naming the owner")
    func duplicateCapability() throws {
        let temp = try TemporaryDirectory()
        let dir = try temp.makeDirectory("plugins")
        // Names decide the order: a-… loads before b-….
        try PluginFiles.install("FixtureTestPlugin", into: dir, as: "a-test.so")
        try PluginFiles.install("FixtureDuplicatePlugin", into: dir, as: "b-duplicate.so")
        let report = PluginLoader(configuration: .init(directories: [dir])).load(crashGuard: MemoryCrashGuard())
        let dup = try #require(report.registry.record(file: "b-duplicate.so"))
        #expect(dup.status == .failed)
        #expect(dup.error == "capability test.even is already provided by plugin test (\(dir)/a-test.so)")
        #expect(dup.name == "duplicate")
        // None of the refused plugin's capabilities are used, not even the unique one.
        #expect(report.registry.capability(.fieldValidator, named: "duplicate.fine") == nil)
        #expect(report.registry.capability(.fieldValidator, named: "test.even")?.plugin.name == "test")
    }

    @Test("the same plugin in two directories: the second copy is refused by name")
    func duplicatePluginName() throws {
        let temp = try TemporaryDirectory()
        let first = try PluginFiles.directory(["FixtureTestPlugin"], in: temp, name: "one")
        let second = try PluginFiles.directory(["FixtureTestPlugin"], in: temp, name: "two")
        let report = PluginLoader(configuration: .init(directories: [first, second])).load(
            crashGuard: MemoryCrashGuard())
        #expect(report.registry.records.count == 2)
        #expect(report.registry.records[0].status == .loaded)
        #expect(report.registry.records[1].status == .failed)
        #expect(report.registry.records[1].error == "another plugin named test is already loaded from \(first)/FixtureTestPlugin.so")
    }

    @Test("invalid names in a registration are refused")
    func badNames() throws {
        let temp = try TemporaryDirectory()
        let (report, _) = try PluginFiles.load(["FixtureBadNamesPlugin"], in: temp)
        let record = try #require(report.registry.record(file: "FixtureBadNamesPlugin.so"))
        #expect(record.status == .failed)
        #expect(record.error?.hasPrefix("invalid capability name \"Undotted\"") == true)
        #expect(report.registry.catalog.isEmpty)
    }

    @Test("a capability whose option declaration is ambiguous is refused; one that declares nothing records none")
    func badOptionDeclaration() throws {
        let temp = try TemporaryDirectory()
        let (report, _) = try PluginFiles.load(["FixtureBadOptionsPlugin", "FixtureTestPlugin"], in: temp)
        let record = try #require(report.registry.record(file: "FixtureBadOptionsPlugin.so"))
        #expect(record.status == .failed)
        #expect(record.error == "capability bad-options.twice declares the option \"path\" twice")
        #expect(report.registry.capability(.submitAction, named: "bad-options.twice") == nil)
        // The test plugin declares no options: loaded, and its options go unchecked.
        #expect(report.registry.capability(.submitAction, named: "test.echo-submit")?.declaredOptions == nil)
        #expect(report.registry.declaredOptions.isEmpty)
    }

    @Test("the administrator can disable a plugin by file name, stem or plugin name")
    func administratorDisabled() throws {
        for entry in ["FixtureTestPlugin.so", "FixtureTestPlugin", "test"] {
            let temp = try TemporaryDirectory()
            let dir = try PluginFiles.directory(["FixtureTestPlugin", "FixtureThrowingPlugin"], in: temp)
            let report = PluginLoader(configuration: .init(directories: [dir], disabled: [entry]))
                .load(crashGuard: MemoryCrashGuard())
            let record = try #require(report.registry.record(file: "FixtureTestPlugin.so"))
            #expect(record.status == .disabled, "disabled: \(entry)")
            #expect(record.error == "disabled by the administrator")
            #expect(report.registry.capability(.fieldValidator, named: "test.even") == nil)
            #expect(report.registry.record(file: "FixtureThrowingPlugin.so")?.status == .loaded)
        }
    }

    @Test("only *.so files directly in the directory, in name order, dot files skipped")
    func scanRules() throws {
        let temp = try TemporaryDirectory()
        let dir = try temp.makeDirectory("plugins")
        try PluginFiles.install("FixtureThrowingPlugin", into: dir, as: "b.so")
        try PluginFiles.install("FixtureTestPlugin", into: dir, as: "a.so")
        try PluginFiles.install("FixtureHangPlugin", into: dir, as: "c.so.disabled")
        try PluginFiles.install("FixtureHangPlugin", into: dir, as: ".hidden.so")
        let sub = try temp.makeDirectory("plugins/sub")
        try PluginFiles.install("FixtureHangPlugin", into: sub, as: "nested.so")
        let report = PluginLoader(configuration: .init(directories: [dir])).load(crashGuard: MemoryCrashGuard())
        #expect(report.registry.records.map { ($0.path as NSString).lastPathComponent } == ["a.so", "b.so"])
        #expect(report.registry.capability(.fieldValidator, named: "hang.blocking") == nil)
    }

    @Test("unusable directories are reported and skipped; the others still load")
    func directoryProblems() throws {
        let temp = try TemporaryDirectory()
        let good = try PluginFiles.directory(["FixtureTestPlugin"], in: temp, name: "good")
        let open = try PluginFiles.directory(["FixtureThrowingPlugin"], in: temp, name: "open")
        #expect(chmod(open, 0o777) == 0)
        let missing = temp.appending("missing")
        let report = PluginLoader(configuration: .init(directories: [missing, open, "relative/dir", good]))
            .load(crashGuard: MemoryCrashGuard())
        #expect(report.registry.records.count == 1)
        #expect(report.registry.records.first?.status == .loaded)
        let problems = Dictionary(uniqueKeysWithValues: report.directoryProblems.map { ($0.path, $0.reason) })
        #expect(problems[missing] == "does not exist")
        #expect(problems[open]?.hasPrefix("is writable by group or others (mode 0777)") == true)
        #expect(problems["relative/dir"] == "is not an absolute path")
    }

    @Test("two plugins loaded one after the other are really two libraries")
    func descriptorsAreNotReused() throws {
        // glibc remembers a library by the name it was opened with; if the
        // loader closed /proc/self/fd/N, the next plugin would get N again and
        // dlopen would hand back the first library.
        let temp = try TemporaryDirectory()
        let (report, _) = try PluginFiles.load(
            ["FixtureTestPlugin", "FixtureThrowingPlugin", "FixtureHangPlugin"], in: temp)
        #expect(Set(report.registry.records.map(\.name)) == ["test", "throwing", "hang"])
        #expect(report.registry.records.allSatisfy { $0.status == .loaded })
    }

    @Test("a plugin's descriptor closed behind the loader's back does not make the next plugin the old one")
    func descriptorClosedBehindOurBack() throws {
        let temp = try TemporaryDirectory()
        let first = try PluginFiles.directory(["FixtureTestPlugin"], in: temp, name: "one")
        let report = PluginLoader(configuration: .init(directories: [first])).load(crashGuard: MemoryCrashGuard())
        #expect(report.registry.records.first?.name == "test")
        // Find the descriptor the loader keeps for it, and close it.
        let target = first + "/FixtureTestPlugin.so"
        let fds = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap(Int32.init)
        let held = try #require(fds.first {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == target
        })
        close(held)
        // The next file opened most likely gets that number; it must still load as itself.
        let second = try PluginFiles.directory(["FixtureThrowingPlugin"], in: temp, name: "two")
        let next = PluginLoader(configuration: .init(directories: [second])).load(crashGuard: MemoryCrashGuard())
        #expect(next.registry.records.first?.name == "throwing")
        #expect(next.registry.records.first?.status == .loaded)
    }

    @Test("a quarantined plugin stays disabled until its file changes")
    func quarantine() throws {
        let temp = try TemporaryDirectory()
        let dir = try PluginFiles.directory(["FixtureTestPlugin", "FixtureThrowingPlugin"], in: temp)
        let path = dir + "/FixtureTestPlugin.so"
        let first = PluginLoader(configuration: .init(directories: [dir])).load(crashGuard: MemoryCrashGuard())
        let identity = try #require(first.registry.record(file: "FixtureTestPlugin.so")?.file)
        let q = PluginQuarantine(path: path, name: "test", reason: "crashed the daemon (test)", file: identity)

        let kept = PluginLoader(configuration: .init(directories: [dir], quarantined: [q]))
            .load(crashGuard: MemoryCrashGuard())
        let record = try #require(kept.registry.record(file: "FixtureTestPlugin.so"))
        #expect(record.status == .disabled)
        #expect(record.error == "crashed the daemon (test)")
        #expect(record.name == "test")
        #expect(kept.registry.capability(.fieldValidator, named: "test.even") == nil)
        #expect(kept.liftedQuarantines.isEmpty)
        #expect(kept.registry.record(file: "FixtureThrowingPlugin.so")?.status == .loaded)

        // A new build of the plugin (a different file) lifts it.
        try PluginFiles.install("FixtureTestPlugin", into: dir)
        let lifted = PluginLoader(configuration: .init(directories: [dir], quarantined: [q]))
            .load(crashGuard: MemoryCrashGuard())
        #expect(lifted.registry.record(file: "FixtureTestPlugin.so")?.status == .loaded)
        #expect(lifted.liftedQuarantines == [q])

        // So does removing it.
        #expect(unlink(path) == 0)
        let gone = PluginLoader(configuration: .init(directories: [dir], quarantined: [q]))
            .load(crashGuard: MemoryCrashGuard())
        #expect(gone.liftedQuarantines == [q])
    }

    @Test("a call left crashed disables that plugin with the reason, and is cleared")
    func crashedCallDisables() throws {
        let temp = try TemporaryDirectory()
        let dir = try PluginFiles.directory(["FixtureTestPlugin", "FixtureThrowingPlugin"], in: temp)
        let crashGuard = MemoryCrashGuard()
        let token = crashGuard.begin(
            GuardedCall(
                pluginPath: dir + "/FixtureTestPlugin.so", pluginName: "test", capability: "test.slow-submit",
                startedAt: 1_717_236_000_000_000))
        crashGuard.recordCrash(token, signal: SIGSEGV)
        let report = PluginLoader(configuration: .init(directories: [dir])).load(crashGuard: crashGuard)
        let record = try #require(report.registry.record(file: "FixtureTestPlugin.so"))
        #expect(record.status == .disabled)
        #expect(
            record.error
                == "crashed the daemon during a call to test.slow-submit at 2024-06-01T10:00:00Z (SIGSEGV); "
                + "disabled until its file changes")
        #expect(report.newQuarantines.map(\.path) == [dir + "/FixtureTestPlugin.so"])
        #expect(report.newQuarantines.first?.file == record.file)
        #expect(report.interruptedCalls.isEmpty)
        #expect(crashGuard.pending().isEmpty)
        #expect(report.registry.record(file: "FixtureThrowingPlugin.so")?.status == .loaded)
    }

    @Test("new quarantines are handed over before any plugin loads; the leftovers stay until they are kept")
    func quarantinesRecordedBeforeLoading() throws {
        let temp = try TemporaryDirectory()
        let dir = try PluginFiles.directory(["FixtureTestPlugin", "FixtureThrowingPlugin"], in: temp)
        for keeps in [false, true] {
            let crashGuard = MemoryCrashGuard()
            let token = crashGuard.begin(
                GuardedCall(
                    pluginPath: dir + "/FixtureTestPlugin.so", pluginName: "test", capability: nil,
                    startedAt: 1_717_236_000_000_000))
            crashGuard.recordCrash(token, signal: SIGSEGV)
            let begunBefore = crashGuard.begunCalls.count
            var handed: [PluginQuarantine] = []
            var loadsBeforeRecord = -1
            let report = PluginLoader(configuration: .init(directories: [dir])).load(crashGuard: crashGuard) { new in
                handed = new
                loadsBeforeRecord = crashGuard.begunCalls.count - begunBefore
                return keeps
            }
            #expect(handed.map(\.path) == [dir + "/FixtureTestPlugin.so"])
            #expect(handed == report.newQuarantines)
            // No plugin had started loading when they were handed over.
            #expect(loadsBeforeRecord == 0)
            #expect(report.registry.record(file: "FixtureTestPlugin.so")?.status == .disabled)
            #expect(report.registry.record(file: "FixtureThrowingPlugin.so")?.status == .loaded)
            // Not kept: the crash stays on record for the next start.
            #expect(crashGuard.pending().map(\.ending) == (keeps ? [] : [.crashed(signal: SIGSEGV)]), "keeps: \(keeps)")
        }
    }

    @Test("a call left merely interrupted (killed from outside) is reported, not blamed, and cleared")
    func interruptedCallIsNotBlamed() throws {
        let temp = try TemporaryDirectory()
        let dir = try PluginFiles.directory(["FixtureTestPlugin"], in: temp)
        let crashGuard = MemoryCrashGuard()
        let call = GuardedCall(
            pluginPath: dir + "/FixtureTestPlugin.so", pluginName: "test", capability: "test.slow-submit",
            startedAt: 1_717_236_000_000_000)
        _ = crashGuard.begin(call)
        let report = PluginLoader(configuration: .init(directories: [dir])).load(crashGuard: crashGuard)
        #expect(report.registry.record(file: "FixtureTestPlugin.so")?.status == .loaded)
        #expect(report.newQuarantines.isEmpty)
        #expect(report.interruptedCalls == [call])
        #expect(
            call.interruptionNotice
                == "flowd stopped during a call to test.slow-submit (plugin test, \(dir)/FixtureTestPlugin.so, "
                + "started 2024-06-01T10:00:00Z); not blamed: nothing crashed in the plugin")
        #expect(crashGuard.pending().isEmpty)
    }

    @Test("the loader brackets dlopen and registration with the crash guard")
    func guardsLoading() throws {
        let temp = try TemporaryDirectory()
        let crashGuard = MemoryCrashGuard()
        let (report, _) = try PluginFiles.load(["FixtureTestPlugin"], in: temp, crashGuard: crashGuard)
        #expect(report.registry.records.first?.status == .loaded)
        let begun = crashGuard.begunCalls
        #expect(begun.count == 1)
        #expect(begun.first?.capability == nil)
        #expect(begun.first?.pluginPath.hasSuffix("/FixtureTestPlugin.so") == true)
        #expect(crashGuard.activeCalls.isEmpty)
    }
}
