import FlowEngine
import FlowStore
import FlowdSystem
import Systemd

/// The run's world: a directory of its own, a private `dbus-daemon`, the
/// shipped plugins staged as an installation would lay them out, a
/// configuration with limits large enough for the run, and flowd.
///
/// Nothing touches the machine's own buses or state.
final class Harness {
    let options: BenchOptions
    /// The run's directory (deleted at the end unless `--keep`).
    let root: String
    let flowdPath: String
    let flowsDirectory: String
    let pluginDirectory: String
    let stateDirectory: String
    let configPath: String
    var databasePath: String { stateDirectory + "/" + SessionStore.defaultFileName }
    private(set) var busAddress = ""
    private var bus: ChildProcess?
    private(set) var flowd: ChildProcess?
    private var notify: NotifySocket?
    private var starts = 0

    /// The shipped plugins: the library's product name and its installed name.
    static let shippedPlugins = [
        ("Spool", "spool"), ("Command", "command"), ("Webhook", "webhook"), ("Validators", "validators"),
        ("Providers", "providers"),
    ]

    init(options: BenchOptions) throws(BenchError) {
        self.options = options
        let executableDirectory = CurrentProcess.executablePath().map { path -> String in
            guard let slash = path.lastIndex(of: "/") else { return "." }
            return String(path[..<slash])
        } ?? "."
        let build = options.buildDirectory.map(ProcessStats.absolute) ?? executableDirectory
        let builtFlowd = build + "/flowd"
        guard FileSystem.exists(builtFlowd) else {
            throw .setup("no flowd at \(builtFlowd): build it first (swift build -c release) or give --build-dir")
        }
        flowsDirectory = try Self.findFlows(options.flowsDirectory, near: build)
        root = try Self.setUp { () throws(SystemCallError) in
            try FileSystem.makeTemporaryDirectory(in: options.directory, prefix: "flowd-bench")
        }
        // Valgrind 3.19 cannot read the DWARF 5 the toolchain writes and gives
        // up on the whole process: under callgrind flowd runs from copies
        // without debug information (the symbols, and so the profile's
        // function names, stay).
        flowdPath = options.callgrind ? root + "/bin/flowd" : builtFlowd
        pluginDirectory = root + "/plugins"
        stateDirectory = root + "/state"
        configPath = root + "/flowd.conf"
        try Self.setUp { () throws(SystemCallError) in
            try FileSystem.changeMode(root, 0o755)
            try FileSystem.makeDirectories(pluginDirectory, mode: 0o755)
            try FileSystem.makeDirectories(stateDirectory, mode: 0o700)
        }
        if options.callgrind {
            try Self.setUp { () throws(SystemCallError) in try FileSystem.makeDirectories(root + "/bin", mode: 0o755) }
            // flowd finds libFlowKit.so next to itself ($ORIGIN).
            for name in ["flowd", "libFlowKit.so"] {
                try Self.stripDebugInformation(build + "/" + name, to: root + "/bin/" + name, log: root + "/objcopy.log")
            }
        }
        // Every shipped plugin, under its installed name, owned by us and
        // not writable by others (the loader refuses anything else).
        for (product, name) in Self.shippedPlugins {
            let source = "\(build)/lib\(product)Plugin.so"
            guard FileSystem.exists(source) else { throw .setup("no \(source): build the shipped plugins (swift build -c release)") }
            let bytes = try Self.setUp { () throws(FileReadError) in try FileSystem.readFile(source, limit: 1 << 30) }
            try Self.setUp { () throws(SystemCallError) in
                try FileSystem.writeFile("\(pluginDirectory)/\(name).so", bytes, mode: 0o755)
            }
            if options.callgrind {
                let staged = "\(pluginDirectory)/\(name).so"
                try Self.stripDebugInformation(staged, to: staged, log: root + "/objcopy.log")
            }
        }
        // The defaults (64 per uid, 50,000 in all) are below what the run stores.
        try Self.writeText(configPath, """
            # flowd-bench: limits above the run's session counts.
            [Daemon]
            Durability=\(options.durability)

            [Limits]
            MaxSessionsPerUser=10000000
            MaxSessions=10000000

            """)
    }

    /// Copies `source` to `destination` without its debug information (`objcopy --strip-debug`).
    private static func stripDebugInformation(_ source: String, to destination: String, log: String) throws(BenchError) {
        let objcopy = try spawn(["objcopy", "--strip-debug", source, destination], stdout: log, stderr: log)
        guard objcopy.wait(timeout: .seconds(120)) == .exited(0) else {
            throw .setup("objcopy --strip-debug \(source) failed (see \(log))")
        }
    }

    /// Runs a step of setting up the run's directory; its failure is a setup error.
    @discardableResult
    private static func setUp<T, E: Error>(_ body: () throws(E) -> T) throws(BenchError) -> T {
        do {
            return try body()
        } catch {
            throw .setup("\(error)")
        }
    }

    /// Writes `text` to a new file, mode 0600.
    private static func writeText(_ path: String, _ text: String) throws(BenchError) {
        try setUp { () throws(SystemCallError) in try FileSystem.writeFile(path, text.utf8) }
    }

    /// Starts `argv` (a name is looked up in `PATH`) with `environment` added
    /// to this process's, standard input `/dev/null`, and its output appended
    /// to files.
    private static func spawn(
        _ argv: [String], environment: [String: String] = [:], stdout: String, stderr: String
    ) throws(BenchError) -> ChildProcess {
        guard let executable = argv.first else { throw .setup("no command to run") }
        var all = CurrentProcess.environment()
        all.merge(environment) { _, new in new }
        var options = ChildProcess.Options(executable, Array(argv.dropFirst()), environment: all)
        options.standardOutput = .path(stdout, [.writeOnly, .create, .append])
        options.standardError = .path(stderr, [.writeOnly, .create, .append])
        do {
            return try ChildProcess(options)
        } catch {
            throw .process("cannot start \(executable): \(error.errno)")
        }
    }

    /// The flows: `--flows-dir`, else `./flows`, else the checkout that holds the build directory.
    private static func findFlows(_ given: String?, near build: String) throws(BenchError) -> String {
        if let given {
            let path = ProcessStats.absolute(given)
            guard FileSystem.exists(path + "/onboarding.json") else { throw .setup("\(path) has no onboarding.json") }
            return path
        }
        var candidates = [(CurrentProcess.currentDirectory() ?? "/") + "/flows"]
        var directory = build
        for _ in 0..<5 {
            guard let slash = directory.lastIndex(of: "/"), slash != directory.startIndex else { break }
            directory = String(directory[..<slash])
            candidates.append(directory + "/flows")
        }
        guard let found = candidates.first(where: { FileSystem.exists($0 + "/onboarding.json") }) else {
            throw .setup("cannot find the example flows (flows/onboarding.json); give --flows-dir")
        }
        return found
    }

    /// Loads the `onboarding` flow from the flows directory, as flowd will.
    func onboardingFlow() throws(BenchError) -> FlowDefinition {
        let path = flowsDirectory + "/onboarding.json"
        guard let bytes = try? FileSystem.readFile(path, limit: 1 << 20) else { throw .setup("cannot read \(path)") }
        do {
            return try FlowLoader.load(bytes, fileName: "onboarding.json", capabilities: .any)
        } catch {
            throw .setup("onboarding.json does not load: \(error.description)")
        }
    }

    /// Starts the private `dbus-daemon` and reads its address.
    func startBus() throws(BenchError) {
        let config = root + "/bus.conf"
        try Self.writeText(config, """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(root)/bus</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="\(CurrentProcess.userID)"/>
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>

            """)
        let addressFile = root + "/bus.address"
        let process = try Self.spawn(
            ["dbus-daemon", "--nofork", "--nopidfile", "--nosyslog", "--config-file=\(config)", "--print-address=1"],
            environment: ["DBUS_SESSION_BUS_ADDRESS": "", "DBUS_SYSTEM_BUS_ADDRESS": ""],
            stdout: addressFile, stderr: root + "/bus.log")
        bus = process
        for _ in 0..<400 {
            if let bytes = try? FileSystem.readFile(addressFile, limit: 4096), bytes.contains(UInt8(ascii: "\n")) {
                busAddress = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
                return
            }
            guard !process.hasExited else { break }
            MonotonicClock.sleep(for: .milliseconds(10))
        }
        throw .process("dbus-daemon did not start (see \(root)/bus.log)")
    }

    /// Starts flowd and waits for `READY=1`; returns the time from just
    /// before the spawn to the notification, in nanoseconds.
    @discardableResult
    func startFlowd() throws(BenchError) -> UInt64 {
        precondition(flowd == nil, "flowd is already running")
        let socket: NotifySocket
        if let existing = notify {
            socket = existing
            socket.clear()
        } else {
            do {
                socket = try NotifySocket(path: root + "/notify")
            } catch {
                throw .setup("the notification socket: \(error); use a shorter --dir")
            }
            notify = socket
        }
        starts += 1
        let argv = wrapper + [
            flowdPath, "--address", busAddress, "--flows-dir", flowsDirectory, "--plugin-dir", pluginDirectory,
            "--state-dir", stateDirectory, "--config", configPath,
        ]
        let started = MonotonicClock.now()
        var environment = ["NOTIFY_SOCKET": socket.path, "DBUS_SESSION_BUS_ADDRESS": busAddress]
        // Counted instructions must not depend on each process's random hash seed.
        if options.callgrind { environment["SWIFT_DETERMINISTIC_HASHING"] = "1" }
        let process = try Self.spawn(
            argv, environment: environment,
            stdout: root + "/flowd.out", stderr: root + "/flowd.log")
        flowd = process
        let deadline = started.advanced(by: .seconds(wrapper.isEmpty ? 60 : 600))
        var ready: MonotonicClock.Instant?
        while ready == nil && !process.hasExited && MonotonicClock.now() < deadline {
            ready = socket.receiveTime(of: "READY", "1", timeout: .milliseconds(50))
        }
        guard let ready else {
            let how = process.exitStatus?.description ?? "did not send READY=1 in time"
            process.terminate(grace: .seconds(2))
            flowd = nil
            throw .process("flowd \(how) (see \(root)/flowd.log)")
        }
        return ready.nanoseconds - started.nanoseconds
    }

    /// Stops flowd with SIGTERM and waits for it.
    func stopFlowd() {
        flowd?.terminate(grace: .seconds(wrapper.isEmpty ? 10 : 120))
        flowd = nil
    }

    /// CPU time used so far by flowd, dbus-daemon and this process, in µs.
    func cpuTimes() -> CPUTimes {
        let split = flowd.flatMap { ProcessStats.cpuSplit(of: $0.pid) }
        return CPUTimes(
            flowd: (split?.user ?? 0) + (split?.system ?? 0), flowdSystem: split?.system ?? 0,
            bus: bus.flatMap { ProcessStats.cpuMicroseconds(of: $0.pid) } ?? 0,
            client: ProcessStats.ownCPUMicroseconds())
    }

    /// flowd's resident memory in bytes.
    func flowdResidentBytes() -> Int? {
        flowd.flatMap { ProcessStats.residentBytes(of: $0.pid) }
    }

    /// What flowd runs under: `--wrap`, or callgrind for `--callgrind`.
    var wrapper: [String] {
        options.callgrind ? Instructions.wrapper(outFile: root + "/callgrind.out") : options.wrapper
    }

    /// Whether flowd runs under callgrind (`--callgrind`, or a `--wrap` of it).
    var underCallgrind: Bool {
        wrapper.first?.hasSuffix("valgrind") == true && wrapper.contains("--tool=callgrind")
    }

    /// When flowd runs under callgrind, zeroes its counters, so the profile
    /// holds only what follows: the measured rounds, not start-up and loading.
    func zeroCallgrindCounters(wake: () throws(BenchError) -> Void) throws(BenchError) {
        guard underCallgrind else { return }
        try callgrindControl(["--zero"], wake: wake)
    }

    /// Runs `callgrind_control ARGS` on flowd and waits for it. Valgrind
    /// takes a command when flowd runs (or when `vgdb` interrupts its wait),
    /// so `wake` is called (a Ping) every 100 ms until the command returns.
    func callgrindControl(_ arguments: [String], wake: () throws(BenchError) -> Void) throws(BenchError) {
        guard let flowd else { throw .process("flowd is not running") }
        let control = try Self.spawn(
            ["callgrind_control"] + arguments + [String(flowd.pid)], stdout: root + "/callgrind_control.log",
            stderr: root + "/callgrind_control.log")
        for _ in 0..<600 {
            if let status = control.wait(timeout: .milliseconds(100)) {
                guard status == .exited(0) else {
                    throw .process("callgrind_control \(arguments.joined(separator: " ")) \(status) (see \(root)/callgrind_control.log)")
                }
                return
            }
            try wake()
        }
        throw .process("callgrind_control \(arguments.joined(separator: " ")) did not return in a minute")
    }

    /// Stops everything and removes the directory unless `--keep`.
    func tearDown() {
        stopFlowd()
        bus?.terminate(grace: .seconds(5))
        bus = nil
        notify?.close()
        notify = nil
        if options.keep {
            FileDescriptor.printError("flowd-bench: kept \(root)")
        } else {
            FileSystem.removeTree(root)
        }
    }
}

/// CPU time of the three processes a call passes through, in µs.
struct CPUTimes {
    var flowd: Int
    /// flowd's share spent in the kernel (system calls).
    var flowdSystem: Int
    var bus: Int
    var client: Int

    static func - (a: CPUTimes, b: CPUTimes) -> CPUTimes {
        CPUTimes(
            flowd: a.flowd - b.flowd, flowdSystem: a.flowdSystem - b.flowdSystem, bus: a.bus - b.bus,
            client: a.client - b.client)
    }
}
