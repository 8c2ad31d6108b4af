import DBus
import FlowEngine
import FlowKit
import FlowProtocol
import FlowStore
import FlowdSystem
import Logging
import Reactor
import Systemd

/// `flowd`'s life from the command line to the exit status.
///
/// Parse the options → read the configuration → block the signals → build
/// the daemon (``Daemon``) → run it. No `exit()` from deep code: every path
/// returns here with an exit status.
///
/// Exit statuses are sysexits.h's (``SysExits``, documented in flowd(8)):
/// `failure` when the bus went away while serving, `usage`, `unavailable`
/// when the bus cannot be reached or another flowd owns the name,
/// `software`, `cannotCreate` when the state directory or the database
/// cannot be created or opened, and `configuration`.
package enum DaemonMain {
    /// Runs the daemon; returns the exit status.
    package static func run(arguments: [String], environment: [String: String]) -> Int32 {
        let command: DaemonCommand
        do {
            command = try DaemonCommandLine.parse(arguments)
        } catch {
            FileDescriptor.printError(error.message)
            return SysExits.usage.rawValue
        }
        switch command {
        case .help:
            print(DaemonCommandLine.help)
            return SysExits.ok.rawValue
        case .version:
            print("flowd \(FlowdVersion.current) (FlowKit ABI \(FlowKitABI.version))")
            return SysExits.ok.rawValue
        case .run(let options):
            // Every entry of this run under flowd's unit, even when it ends at
            // once (JournalStream): the line now, the wait before the exit.
            JournalStream.attachUnit()
            let status = serve(options, environment: environment)
            JournalStream.waitUntilRead(timeout: .seconds(1))
            return status.rawValue
        case .checkConfig(let options):
            return checkConfiguration(options, environment: environment).rawValue
        }
    }

    /// `flowd --check-config`: the report on stdout, each problem on stderr.
    private static func checkConfiguration(_ options: DaemonOptions, environment: [String: String]) -> SysExits {
        let layout = InstallLayout.derived(fromExecutable: CurrentProcess.executablePath() ?? "/usr/libexec/flowd")
        let result = ConfigurationCheck.run(options, loader: ConfigurationLoader(layout: layout, environment: environment))
        print(result.text, terminator: "")
        for warning in result.warnings { FileDescriptor.printError("flowd: warning: \(warning)") }
        for problem in result.problems { FileDescriptor.printError("flowd: \(problem)") }
        return result.status
    }

    /// Logs why flowd exits, at `err` where the journal keeps it under the
    /// unit (``FlowdLog/makeExitLogger()``), and returns `status`.
    static func exit(_ status: SysExits, _ reason: LogMessage) -> SysExits {
        FlowdLog.makeExitLogger().error(reason)
        return status
    }

    private static func serve(_ options: DaemonOptions, environment: [String: String]) -> SysExits {
        let startedAt = WallClock.microsecondsSinceEpoch()
        let layout = InstallLayout.derived(fromExecutable: CurrentProcess.executablePath() ?? "/usr/libexec/flowd")
        let loader = ConfigurationLoader(layout: layout, environment: environment)
        let configuration: DaemonConfiguration
        do {
            configuration = try loader.load(options)
        } catch {
            return exit(.configuration, "\(error.description)")
        }
        let logger = FlowdLog.makeLogger(verbose: configuration.verbose)
        logger.info("\(FlowdLog.filesRead(configuration.files))")
        // Blocked before any other thread exists (the plugin host starts
        // threads), so that they all arrive at the loop's signalfd.
        do {
            try Signal.block(Daemon.handledSignals)
            Signal.ignoreBrokenPipe()
        } catch {
            return exit(.software, "cannot handle signals: \(error.description)")
        }
        let daemon: Daemon
        do {
            daemon = try Daemon(
                configuration: configuration, reloadWith: loader, options: options, logger: logger, startedAt: startedAt)
        } catch {
            return exit(error.status, "\(error.message)")
        }
        return daemon.run()
    }
}

/// The composition root: builds the daemon's parts in order, runs the event
/// loop on the calling (main) thread, and stops the parts in reverse order.
///
/// Build, before the loop runs: the store (it creates the state directory,
/// mode 0700, with the database: the one place it is made) → the plugins
/// (loading starts the plugin host's threads and isolated plugins'
/// processes) → the service (the flows,
/// linted against the plugins' capabilities) → the bus front end → the
/// systemd lifecycle. Start, on the loop: the service (interrupted submits
/// marked) → the front end (connect, export, own the name) → the lifecycle
/// (`READY=1`, timers). Stop, on the loop, on SIGTERM or SIGINT, when the bus
/// goes away, or when a start failed: the lifecycle (`STOPPING=1`) → the
/// front end (waiting calls answered, queued signals sent, disconnected) →
/// the service (running submits cancelled) → the isolated plugins'
/// processes (killed and reaped) → the store (closed); then the
/// loop stops. SIGHUP and `Reload` re-read the configuration.
///
/// The parts hold no references to each other beyond what they were built
/// with; what the front end and the lifecycle ask of the daemon as a whole
/// (a reload, a stop, the live counts, expiry) they ask through closures
/// given here, which is why those two are built lazily (in order, in `init`).
final class Daemon {
    /// The signals the daemon handles: stop, stop, reload.
    static let handledSignals: [Signal] = [.terminate, .interrupt, .hangUp]

    private let loop: EventLoop
    private let logger: Logger
    private let loader: ConfigurationLoader
    private let options: DaemonOptions
    private let store: SessionStore
    private let plugins: PluginSetup
    private let service: FlowService
    private let busChoice: BusChoice
    private let limits: SessionLimits
    private let stateDirectory: String
    /// When this process started, µs since the epoch (`GetStatus`).
    private let startedAt: Int64

    private lazy var front = BusFrontEnd(
        loop: loop, service: service, logger: logger,
        settings: .init(
            bus: busChoice, version: FlowdVersion.current, plugins: plugins.summaries,
            polkit: busChoice == .system ? .standard : nil),
        limits: limits,
        reload: { [unowned self] in reload() },
        status: { [unowned self] in status() },
        busLost: { [unowned self] in
            logger.error("lost the connection to the bus; stopping")
            stop(exitStatus: .failure)
        })

    private lazy var lifecycle = Lifecycle(
        loop: loop, logger: logger, idleTimeout: limits.idleTimeout,
        status: { [unowned self] in
            let now = service.assumeIsolatedOnLoop { $0.status }
            return .init(
                version: FlowdVersion.current, sessions: now.sessions, flows: now.flows, refusedFlows: now.refusedFlows,
                plugins: plugins.records.count { $0.status == .loaded },
                failedPlugins: plugins.records.count { $0.status == .failed }, submits: now.submits)
        },
        expire: { [unowned self] in expireIdleSessions() })

    /// The parts with a start and a stop, in start order.
    private var components: [any DaemonComponent] { [store, plugins.isolated, service, front, lifecycle] }
    /// The parts started so far, in start order.
    private var started: [any DaemonComponent] = []
    private var stopping = false
    private var exitStatus: SysExits = .ok

    /// Builds every part, in order.
    init(
        configuration: DaemonConfiguration, reloadWith loader: ConfigurationLoader, options: DaemonOptions, logger: Logger,
        startedAt: Int64
    ) throws(StartFailure) {
        guard let stateDirectory = configuration.stateDirectory else {
            throw StartFailure(
                status: .configuration, message: "no state directory: give --state-dir, or set HOME or STATE_DIRECTORY")
        }
        do {
            loop = try EventLoop()
        } catch {
            throw StartFailure(status: .software, message: "cannot create the event loop: \(error.description)")
        }
        do {
            store = try SessionStore(
                path: stateDirectory + "/" + SessionStore.defaultFileName,
                configuration: SessionStore.Configuration(
                    durability: configuration.durability == .power ? .powerLoss : .processCrash))
        } catch {
            throw StartFailure(status: .cannotCreate, message: "cannot open the session database: \(error.description)")
        }
        plugins = PluginSetup.load(configuration: configuration, stateDirectory: stateDirectory, store: store, logger: logger)
        do {
            service = try FlowService(
                loop: loop, store: store, configuration: configuration, plugins: plugins.gateway,
                capabilities: plugins.capabilities, logger: logger, clock: SystemClock())
        } catch {
            try? store.close()
            throw StartFailure(status: .cannotCreate, message: "cannot start the service: \(error.message)")
        }
        self.logger = logger
        self.loader = loader
        self.options = options
        self.busChoice = configuration.bus
        self.limits = configuration.limits
        self.stateDirectory = stateDirectory
        self.startedAt = startedAt
        _ = front
        _ = lifecycle
    }

    /// Starts the parts on the loop and runs it until the daemon stops;
    /// returns the exit status.
    func run() -> SysExits {
        let daemon = LoopBound(self, loop: loop)
        do {
            try loop.onSignals([.terminate, .interrupt]) { signal in
                daemon.value.logger.notice("stopping on \(signal.description)")
                daemon.value.stop(exitStatus: .ok)
            }
            // A failed reload logs its reason itself.
            try loop.onSignals([.hangUp]) { _ in _ = daemon.value.reload() }
        } catch {
            try? store.close()
            return DaemonMain.exit(.software, "cannot handle signals: \(error.description)")
        }
        loop.execute { daemon.value.start() }
        do {
            try loop.run()
        } catch {
            return DaemonMain.exit(.software, "the event loop failed: \(error.description)")
        }
        logger.info("stopped", id: .daemonStopping)
        return exitStatus
    }

    /// Starts the parts in order; when one fails, stops the ones started.
    private func start() {
        for component in components {
            do {
                try component.start()
                started.append(component)
            } catch {
                return stop(exitStatus: DaemonMain.exit(error.status, "\(error.message)"))
            }
        }
    }

    /// Stops the started parts in reverse order, then the loop.
    private func stop(exitStatus status: SysExits) {
        guard !stopping else { return }
        stopping = true
        exitStatus = status
        for component in started.reversed() { component.stop() }
        started.removeAll()
        loop.stop()
    }

    /// SIGHUP and `Reload`: re-reads the configuration and the flows. A bad
    /// configuration leaves the running one in place.
    private func reload() -> Result<Void, FlowdError> {
        guard !stopping else { return .failure(FlowdError(.invalidState, "flowd is stopping")) }
        return lifecycle.reloading { () -> Result<Void, FlowdError> in
            let configuration: DaemonConfiguration
            do throws(ConfigurationError) {
                configuration = try loader.load(options)
            } catch {
                // The caller of Reload gets the reason too, but `systemctl
                // reload` prints only "Job failed": the journal is where it is read.
                logger.error(
                    "reload failed, the running configuration stays: \(error.description)", id: .reloadFailed)
                return .failure(
                    FlowdError(.failed, "the configuration has an error, nothing was changed: \(error.description)"))
            }
            let flows = service.assumeIsolatedOnLoop { service in
                service.reload(configuration)
                return service.catalog.flows.count
            }
            front.apply(limits: configuration.limits)
            // Sessions that moved to a changed flow announce their new values
            // now, also when the reload came from SIGHUP rather than a call.
            front.flush()
            logger.notice("reloaded: \(flows) flows; \(FlowdLog.filesRead(configuration.files))")
            return .success(())
        }
    }

    /// `GetStatus`: the live counts, the flows and plugins, the limits in
    /// force and the state directory's size.
    private func status() -> DaemonStatus {
        let (catalog, limits, byState) = service.assumeIsolatedOnLoop { service in
            (service.catalog, service.configuration.limits, service.sessionsByState())
        }
        return DaemonStatus(
            version: FlowdVersion.current, startedAt: startedAt, sessionsByState: byState, catalog: catalog,
            plugins: front.settings.plugins(), limits: limits, stateDirectory: stateDirectory,
            stateBytes: FileSystem.totalSize(of: stateDirectory))
    }

    /// The expiry timer: deletes idle sessions and announces it.
    private func expireIdleSessions() -> Int {
        let removed = service.assumeIsolatedOnLoop { $0.expireIdleSessions() }
        if removed > 0 {
            logger.info("\(removed) idle or settled sessions removed", id: .sessionsExpired)
            front.flush()
        }
        return removed
    }
}

extension SessionStore: DaemonComponent {
    /// Opened when built: nothing to start.
    func start() {}

    /// Closes the database (after the service stopped writing to it).
    func stop() {
        try? close()
    }
}
