import FlowKit
import FlowdSystem
import PluginHost

/// The cost of one validator call in each plugin mode (`--plugin-modes`):
/// the shipped `flowd.hostname` validator called through `PluginCaller`, as
/// flowd calls it, loaded in this process and isolated in a
/// `flowd-plugin-host` process of its own. No bus and no daemon: what is
/// measured is the plugin call path, which is all that isolation changes
/// (the bus round trip around it is the same in both modes; see the main
/// run's SetAnswers for it).
///
/// Prints, per mode, the median and 99th percentile wall time of a call and
/// the CPU time per call (both processes, for the isolated mode), then
/// `ratio isolated/in-process: …` of the medians.
enum PluginModes {
    static let validator = "flowd.hostname"

    static func run(options: BenchOptions, buildDirectory: String) throws(BenchError) {
        let calls = options.quick ? 200 : 5000
        let source = buildDirectory + "/libValidatorsPlugin.so"
        let helper = buildDirectory + "/flowd-plugin-host"
        for needed in [source, helper] where !FileSystem.exists(needed) {
            throw .setup("no \(needed): build it (swift build -c release --product \(needed.hasSuffix(".so") ? "ValidatorsPlugin" : "flowd-plugin-host"))")
        }
        let directory: String
        do {
            directory = try FileSystem.makeTemporaryDirectory(in: options.directory, prefix: "flowd-bench-plugins")
        } catch {
            throw .setup("cannot make a directory in \(options.directory): \(error)")
        }
        defer { FileSystem.removeTree(directory) }
        let path = directory + "/validators.so"
        do {
            try FileSystem.writeFile(path, try FileSystem.readFile(source, limit: 1 << 30), mode: 0o755)
        } catch {
            throw .setup("cannot stage the plugin in \(directory): \(error)")
        }

        let inProcess = PluginLoader(configuration: .init(directories: [directory])).load(crashGuard: MemoryCrashGuard())
        guard inProcess.registry.capability(.fieldValidator, named: validator) != nil else {
            throw .setup("\(path) did not load: \(inProcess.registry.records.first?.error ?? "no record")")
        }
        let local = measure(PluginCaller(registry: inProcess.registry, crashGuard: MemoryCrashGuard()), calls: calls, helper: nil)

        let file: FileDescriptor
        let status: FileStatus
        do {
            file = try FileDescriptor.open(path, [.readOnly, .noFollow])
            status = try file.status()
        } catch {
            throw .setup("cannot open \(path): \(error)")
        }
        guard case .loaded(let plugin, let wire) = IsolatedPlugin.load(
            path: path, file: status.identity, descriptor: file, helper: helper, settings: IsolationSettings(),
            events: { _ in })
        else { throw .setup("\(path) did not load isolated") }
        let identity = PluginIdentity(name: wire.name, path: path)
        let registry = PluginRegistry(
            records: [],
            capabilities: plugin.capabilities(of: wire).map { capability, options in
                RegisteredCapability(
                    id: CapabilityID(kind: capability.kind, name: capability.name), plugin: identity, capability: capability,
                    declaredOptions: options)
            })
        let isolated = measure(
            PluginCaller(registry: registry, crashGuard: MemoryCrashGuard()), calls: calls, helper: plugin.processID)
        plugin.stop()

        print("")
        print("plugin call path, \(validator), \(Format.grouped(calls)) sequential calls per mode (µs per call):")
        print("  mode          median      p99   CPU/call")
        for (name, m) in [("in-process", local), ("isolated", isolated)] {
            print(
                "  " + Format.left(name, 10) + Format.right(Format.fixed(m.samples.median), 9)
                    + Format.right(Format.fixed(m.samples.p99), 9) + Format.right(Format.fixed(m.cpuPerCall), 11))
        }
        print("plugin call in-process: \(Format.fixed(local.samples.median)) µs")
        print("plugin call isolated: \(Format.fixed(isolated.samples.median)) µs")
        let ratio = local.samples.median > 0 ? isolated.samples.median / local.samples.median : 0
        print("ratio isolated/in-process: \(Format.fixed(ratio, 2))")
    }

    struct Measure {
        var samples = Samples()
        /// CPU µs per call: this process's, plus the helper's when there is one.
        var cpuPerCall: Double
    }

    /// `calls` calls after a tenth as many to warm up, one at a time.
    static func measure(_ caller: PluginCaller, calls: Int, helper: Int32?) -> Measure {
        let context = PluginContext(
            flowID: "bench", sessionID: String(repeating: "0", count: 32), locale: "en", callerUID: 0, answers: [:],
            options: [:], stateDirectory: "/nonexistent")
        let field = FieldInfo(id: "host", type: "text", label: "Host")
        let done = Semaphore()
        let result = LockedValue(Measure(cpuPerCall: 0))
        Task {
            for _ in 0..<max(1, calls / 10) {
                _ = await caller.validateField(validator, value: .text("www.example.org"), field: field, context: context)
            }
            let cpuBefore = ProcessStats.ownCPUMicroseconds() + (helper.flatMap(ProcessStats.cpuMicroseconds(of:)) ?? 0)
            var samples = Samples()
            for _ in 0..<calls {
                let start = MonotonicClock.now()
                _ = await caller.validateField(validator, value: .text("www.example.org"), field: field, context: context)
                samples.add(MonotonicClock.now().duration(since: start).nonNegativeNanoseconds)
            }
            let cpuAfter = ProcessStats.ownCPUMicroseconds() + (helper.flatMap(ProcessStats.cpuMicroseconds(of:)) ?? 0)
            result.withLock { $0 = Measure(samples: samples, cpuPerCall: Double(cpuAfter - cpuBefore) / Double(calls)) }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }
    }
}
