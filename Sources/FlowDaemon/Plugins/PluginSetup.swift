import FlowEngine
import FlowKit
import FlowProtocol
import FlowStore
import FlowdSystem
import Logging
import PluginHost

/// The plugins the daemon runs with: the gateway the service calls, the
/// capabilities flows are linted against, and what the loader found (for
/// `ListPlugins`).
struct PluginSetup {
    var gateway: any PluginGateway
    var capabilities: CapabilityCatalog
    var records: [PluginRecord]
    /// Isolated plugins quarantined since the start: their process crashed.
    var quarantinedSinceStart: RuntimeQuarantines
    /// The isolated plugins' processes, which the daemon stops.
    var isolated: IsolatedProcesses

    /// The `ListPlugins` entries now: what the loader found, with an isolated
    /// plugin whose process has crashed since shown disabled and why.
    var summaries: @Sendable () -> [PluginSummary] {
        { [records, quarantinedSinceStart] in
            let now = quarantinedSinceStart.reasons
            return records.map { record in
                var summary = PluginSummary(record: record)
                if summary.status == .loaded, let reason = now[record.path] {
                    summary.status = .disabled
                    summary.error = reason
                }
                return summary
            }
        }
    }

    /// Loads the plugins of the configured directories.
    ///
    /// The crash guard's records live in `<state>/plugin-calls`; plugins whose
    /// own code crashed the daemon during a call are quarantined
    /// in the store's plugin table, so they stay disabled across restarts until
    /// their file changes.
    static func load(
        configuration: DaemonConfiguration, stateDirectory: String, store: SessionStore, logger: Logger
    ) -> PluginSetup {
        let crashGuard: any CrashGuard
        do {
            crashGuard = try FileCrashGuard(path: stateDirectory + "/plugin-calls")
        } catch {
            logger.error("the plugin crash guard cannot keep records (\(error.description)); plugins run unguarded")
            crashGuard = MemoryCrashGuard()
        }
        let quarantined = QuarantineRecords(store: store, logger: logger)
        let sinceStart = RuntimeQuarantines()
        let report = PluginLoader(
            configuration: configuration.pluginLoaderConfiguration(
                quarantined: quarantined.load(),
                isolationEvents: { event in
                    IsolationJournal(logger: logger, quarantined: quarantined, sinceStart: sinceStart).record(event)
                })
        ).load(crashGuard: crashGuard) { new in
            // Durable and in the journal before the next plugin loads: if that
            // one crashes too, the next start still disables this one.
            for q in new {
                logger.error(
                    "plugin \(q.name) \(q.reason)", id: .pluginCrashed, metadata: [.plugin: q.name, .path: q.path])
            }
            return quarantined.save(new: new)
        }
        quarantined.lift(report.liftedQuarantines)

        for problem in report.directoryProblems {
            logger.warning("plugin directory \(problem.path): \(problem.reason)", metadata: [.path: problem.path])
        }
        // Calls the earlier process was in when it was killed (or crashed
        // elsewhere): nothing crashed in the plugin, so it is not blamed.
        for call in report.interruptedCalls {
            logger.notice("\(call.interruptionNotice)", metadata: [.plugin: call.pluginName, .path: call.pluginPath])
        }
        for record in report.registry.records where record.status != .loaded {
            logger.error(
                "plugin refused: \(record.path): \(record.error ?? record.status.rawValue)", id: .pluginRefused,
                metadata: [.plugin: record.name, .path: record.path])
        }
        for record in report.registry.records where record.status == .loaded {
            logger.info(
                "plugin \(record.name) \(record.version) loaded from \(record.path)",
                metadata: [.plugin: record.name, .path: record.path])
        }

        let caller = PluginCaller(
            registry: report.registry, crashGuard: crashGuard,
            configuration: .init(validatorTimeout: configuration.pluginCallTimeout, providerTimeout: configuration.pluginCallTimeout))
        return PluginSetup(
            gateway: PluginHostGateway(caller: caller, stateDirectory: stateDirectory, logger: logger),
            capabilities: CapabilityCatalog(registry: report.registry),
            records: report.registry.records, quarantinedSinceStart: sinceStart,
            isolated: IsolatedProcesses(report.isolatedPlugins))
    }
}

/// The isolated plugins' processes as a part of the daemon: started as the
/// plugins loaded; stopped after the service (which cancels the calls in
/// flight) and before the store, each killed and reaped, so that flowd
/// exits with no process of its own left in its unit.
final class IsolatedProcesses: DaemonComponent {
    private let plugins: [IsolatedPlugin]

    init(_ plugins: [IsolatedPlugin]) {
        self.plugins = plugins
    }

    func start() {}

    func stop() {
        for plugin in plugins { plugin.stop() }
    }
}

extension DaemonConfiguration {
    /// What the plugin loader is told: the directories, the plugins turned
    /// off, kept in quarantine or isolated, and whose files it trusts. The
    /// daemon's start and `--check-config` load plugins with the same.
    func pluginLoaderConfiguration(
        quarantined: [PluginQuarantine] = [], isolationEvents: @escaping @Sendable (IsolationEvent) -> Void = { _ in }
    ) -> PluginLoader.Configuration {
        var loader = PluginLoader.Configuration(
            directories: pluginDirectories, disabled: Set(disabledPlugins), quarantined: quarantined,
            // The system service trusts only root's files; a per-user
            // daemon also its own user's.
            trustedOwners: bus == .system ? [0] : PluginLoader.Configuration.defaultTrustedOwners)
        loader.isolated = isolatedPlugins
        loader.isolationHelper = Self.pluginHostExecutable
        loader.isolationEvents = isolationEvents
        return loader
    }

    /// `flowd-plugin-host`: beside this executable when it is there (a build
    /// directory), else in `<prefix>/lib/flowd/`, where `make install` puts it
    /// (the unit lets flowd execute only its own directories).
    static var pluginHostExecutable: String {
        let executable = CurrentProcess.executablePath() ?? "/usr/libexec/flowd"
        if let slash = executable.lastIndex(of: "/") {
            let beside = String(executable[..<slash]) + "/flowd-plugin-host"
            if FileSystem.exists(beside) { return beside }
        }
        return InstallLayout.derived(fromExecutable: executable).libDirectory + "/flowd/flowd-plugin-host"
    }
}

/// What happened to isolated plugins' processes, in the journal; a crash is
/// a quarantine, kept in the store as one found at start is.
private struct IsolationJournal {
    let logger: Logger
    let quarantined: QuarantineRecords
    let sinceStart: RuntimeQuarantines

    func record(_ event: IsolationEvent) {
        switch event {
        case .crashed(let q):
            let name = q.name.isEmpty ? q.path : q.name
            logger.error(
                "plugin \(name) \(q.reason)", id: .pluginCrashed, metadata: [.plugin: name, .path: q.path])
            _ = quarantined.save(new: [q])
            sinceStart.add(path: q.path, reason: q.reason)
        case .killedAfterTimeout(let plugin, let capability):
            logger.warning(
                "isolated plugin \(plugin) was killed: its call to \(capability) ran past its time limit; its process is started again",
                metadata: [.plugin: plugin, .capability: capability])
        case .ended(let plugin, let how, let restarted):
            logger.warning(
                "the process of isolated plugin \(plugin) \(how); \(restarted ? "started again" : "started again at its next call")",
                metadata: [.plugin: plugin])
        case .restartFailed(let plugin, let reason):
            logger.error("the process of isolated plugin \(plugin) cannot be started again: \(reason)", metadata: [.plugin: plugin])
        }
    }
}

/// Plugin file → why it was quarantined, for isolated plugins whose process
/// crashed while flowd runs (a start reads the store's quarantines instead).
/// Written from the isolated plugins' reader threads, read on the loop.
final class RuntimeQuarantines: Sendable {
    private let state = LockedValue<[String: String]>([:])

    var reasons: [String: String] { state.withLock { $0 } }

    func add(path: String, reason: String) {
        state.withLock { $0[path] = reason }
    }
}

extension CapabilityCatalog {
    /// What flows are checked against: the loaded capabilities and the
    /// options they declare.
    init(registry: PluginRegistry) {
        self.init(registry.catalog.map { ($0.kind, $0.name) }, declaredOptions: registry.declaredOptions)
    }
}

/// Quarantined plugins, kept in the store's plugin table under their path.
private struct QuarantineRecords: Sendable {
    let store: SessionStore
    let logger: Logger

    func load() -> [PluginQuarantine] {
        do {
            return try store.disabledPlugins().compactMap { d in
                d.file.map { PluginQuarantine(path: d.path, name: d.name, reason: d.reason, file: $0) }
            }
        } catch {
            logger.error("cannot read quarantined plugins: \(error.description)")
            return []
        }
    }

    /// Records new quarantines (each committed before this returns); false
    /// when the store refused one.
    func save(new: [PluginQuarantine]) -> Bool {
        do {
            for q in new { try store.disablePlugin(path: q.path, name: q.name, reason: q.reason, file: q.file) }
            return true
        } catch {
            logger.error("cannot record quarantined plugins: \(error.description); the next start tries again")
            return false
        }
    }

    /// Forgets quarantines whose file changed or went away.
    func lift(_ lifted: [PluginQuarantine]) {
        do {
            for q in lifted { try store.enablePlugin(path: q.path) }
        } catch {
            logger.error("cannot clear lifted plugin quarantines: \(error.description)")
        }
    }
}
