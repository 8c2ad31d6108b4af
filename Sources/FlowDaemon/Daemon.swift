import DBus
import FlowEngine
import FlowKit
import FlowProtocol
import FlowStore
import FlowdSystem
import Logging
import Reactor

/// `flowd`'s life from the command line to the exit status.
///
/// Start-up: parse the options → read the configuration → open the store →
/// load the plugins → load the flows → connect to the bus and export the
/// objects → own the name → `READY=1`. Then the event loop runs until SIGTERM
/// or SIGINT (`STOPPING=1`, running submits cancelled, the store closed) or
/// until the bus goes away. SIGHUP reloads. No `exit()` from deep code: every
/// path returns here with an exit status.
///
/// Exit statuses are sysexits.h's (``SysExits``, documented in flowd(8)):
/// `failure` when the bus went away while serving, `usage`, `unavailable`
/// when the bus cannot be reached or another flowd owns the name,
/// `software`, `cannotCreate` when the state directory or the database
/// cannot be created or opened, and `configuration`.
public enum DaemonMain {
    /// Runs the daemon; returns the exit status.
    public static func run(arguments: [String], environment: [String: String]) -> Int32 {
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
            return serve(options, environment: environment).rawValue
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

    private static func serve(_ options: DaemonOptions, environment: [String: String]) -> SysExits {
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
        guard let stateDirectory = configuration.stateDirectory else {
            return exit(.configuration, "no state directory: give --state-dir, or set HOME or STATE_DIRECTORY")
        }

        let loop: EventLoop
        do {
            loop = try EventLoop()
        } catch {
            return exit(.software, "cannot create the event loop: \(error.description)")
        }
        // Signals are blocked before any other thread exists, so they all
        // arrive at the loop's signalfd.
        let lifecycle = Lifecycle(loop: loop, logger: logger)
        do {
            _ = try loop.onSignals([.terminate, .interrupt]) { signal in lifecycle.stop(signal: signal) }
            _ = try loop.onSignals([.hangUp]) { _ in lifecycle.reload() }
            Signal.ignoreBrokenPipe()
        } catch {
            return exit(.software, "cannot handle signals: \(error.description)")
        }

        // The store creates the state directory (mode 0700) with its database:
        // the one place it is made, before anything else is put in it.
        let store: SessionStore
        do {
            store = try SessionStore(
                path: stateDirectory + "/" + SessionStore.defaultFileName,
                configuration: SessionStore.Configuration(
                    durability: configuration.durability == .power ? .powerLoss : .processCrash))
        } catch {
            return exit(.cannotCreate, "cannot open the session database: \(error.description)")
        }
        defer { try? store.close() }

        let plugins = PluginSetup.load(
            configuration: configuration, stateDirectory: stateDirectory, store: store, logger: logger)

        let service: FlowService
        do {
            service = try FlowService(
                executor: loop.executor, store: store, configuration: configuration, stateDirectory: stateDirectory,
                plugins: plugins.gateway, capabilities: plugins.capabilities, logger: logger, clock: SystemClock())
        } catch {
            return exit(.cannotCreate, "cannot start the service: \(error.message)")
        }
        // The rest needs the service's executor, which is the running loop.
        let startup = Startup(
            configuration: configuration, service: service, loader: loader, options: options,
            plugins: plugins.records.map(PluginSummary.init(record:)),
            lifecycle: lifecycle, logger: logger)
        loop.execute { startup.run() }
        do {
            try loop.run()
        } catch {
            return exit(.software, "the event loop failed: \(error.description)")
        }
        startup.shutDown()
        return lifecycle.exitStatus
    }

    /// Logs why flowd exits, at `err` where the journal keeps it under the
    /// unit (``FlowdLog/makeExitLogger()``), and returns `status`.
    static func exit(_ status: SysExits, _ reason: LogMessage) -> SysExits {
        FlowdLog.makeExitLogger().error(reason)
        return status
    }

    /// Logs the flows refused or shadowed at load.
    static func report(_ catalog: FlowCatalog, logger: Logger) {
        for refusal in catalog.refused {
            for problem in refusal.problems {
                logger.error("flow refused: \(problem)", id: .flowRefused, metadata: [.path: refusal.file])
            }
        }
        for shadow in catalog.shadowed {
            logger.info(
                "flow \(shadow.id) in \(shadow.file) is overridden by \(shadow.winner)",
                metadata: [.flow: shadow.id, .path: shadow.file])
        }
        for directory in catalog.unreadableDirectories {
            logger.warning("cannot read the flows directory \(directory.path): \(directory.reason)")
        }
    }
}

extension BusChoice {
    var connectionBus: Connection.Bus {
        switch self {
        case .system: return .system
        case .session: return .session
        case .address(let address): return .address(address)
        }
    }
}

/// The part of start-up that runs on the loop: recover interrupted submits,
/// connect to the bus, export the objects, own the name, `READY=1`. A failure
/// stops the loop with its exit status.
private final class Startup: @unchecked Sendable {
    let configuration: DaemonConfiguration
    let service: FlowService
    let loader: ConfigurationLoader
    let options: DaemonOptions
    let plugins: [PluginSummary]
    let lifecycle: Lifecycle
    let logger: Logger
    private var connection: Connection?
    private var front: BusFrontEnd?

    init(
        configuration: DaemonConfiguration, service: FlowService, loader: ConfigurationLoader, options: DaemonOptions,
        plugins: [PluginSummary], lifecycle: Lifecycle, logger: Logger
    ) {
        self.configuration = configuration
        self.service = service
        self.loader = loader
        self.options = options
        self.plugins = plugins
        self.lifecycle = lifecycle
        self.logger = logger
    }

    func run() {
        let catalog = service.assumeIsolated { $0.catalog }
        DaemonMain.report(catalog, logger: logger)
        let interrupted = service.assumeIsolated { $0.recoverInterruptedSubmits() }
        if interrupted > 0 {
            logger.notice("\(interrupted) submits were interrupted by the last stop and are marked failed")
        }
        let logger = self.logger
        let connection: Connection
        do {
            connection = try Connection(configuration.bus.connectionBus, logger: logger)
            try connection.attach(to: lifecycle.loop)
        } catch {
            return lifecycle.fail(.unavailable, "cannot connect to the \(configuration.bus.description) bus: \(error.message)")
        }
        self.connection = connection
        let lifecycle = self.lifecycle
        let front = BusFrontEnd(
            connection: connection, loop: lifecycle.loop, service: service, logger: logger,
            delivery: configuration.bus == .system ? .callers : .broadcast, version: FlowdVersion.current,
            plugins: plugins, reloadConfiguration: { lifecycle.reloadNow() })
        self.front = front
        lifecycle.configure(front: front, loader: loader, options: options, plugins: plugins.count)
        do {
            try front.export()
            switch try connection.requestName(FlowBus.name, flags: [.doNotQueue]) {
            case .primaryOwner, .alreadyOwner: break
            case .exists, .inQueue:
                return lifecycle.fail(
                    .unavailable, "another process owns \(FlowBus.name.rawValue) on the \(configuration.bus.description) bus")
            }
        } catch {
            return lifecycle.fail(.unavailable, "cannot serve \(FlowBus.name.rawValue): \(error.message)")
        }
        connection.onDisconnect { lifecycle.busLost() }
        lifecycle.beforeStop = { [weak self] in self?.beforeStop() }
        lifecycle.started(sessions: service.assumeIsolated { $0.sessionCount }, flows: catalog.flows.count)
    }

    /// On the loop, just before it stops: cancel running submits (their
    /// callers get `Cancelled`; the sessions come back as interrupted) and
    /// send what is queued.
    func beforeStop() {
        guard let front else { return }
        service.assumeIsolated { $0.cancelAllSubmits() }
        front.flush()
        connection?.flush()
    }

    /// After the loop stopped.
    func shutDown() {
        connection?.close()
        logger.info("stopped", id: .daemonStopping)
    }
}
