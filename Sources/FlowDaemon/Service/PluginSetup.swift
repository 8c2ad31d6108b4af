import FlowEngine
import FlowKit
import FlowStore
import Logging
import PluginHost

/// The plugins the daemon runs with: the gateway the service calls, the
/// capabilities flows are linted against, and what the loader found (for
/// `ListPlugins`).
struct PluginSetup {
    var gateway: any PluginGateway
    var capabilities: CapabilityCatalog
    var records: [PluginRecord]

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
        let report = PluginLoader(
            configuration: .init(
                directories: configuration.pluginDirectories, disabled: Set(configuration.disabledPlugins),
                quarantined: quarantined.load(),
                // The system service trusts only root's files; a per-user
                // daemon also its own user's.
                trustedOwners: configuration.bus == .system ? [0] : PluginLoader.Configuration.defaultTrustedOwners)
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
            capabilities: CapabilityCatalog(report.registry.catalog.map { ($0.kind, $0.name) }),
            records: report.registry.records)
    }
}

/// Quarantined plugins, kept in the store's plugin table under their path.
private struct QuarantineRecords {
    let store: SessionStore
    let logger: Logger

    func load() -> [PluginQuarantine] {
        do {
            return try store.disabledPlugins().compactMap { d in
                d.file.map { PluginQuarantine(path: d.path, name: d.path, reason: d.reason, file: $0) }
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
            for q in new { try store.disablePlugin(path: q.path, reason: q.reason, file: q.file) }
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

/// The service's plugin calls, through `PluginHost`'s caller (off the loop,
/// on the plugin executor, under time limits, inside the crash guard).
struct PluginHostGateway: PluginGateway {
    let caller: PluginCaller
    let stateDirectory: String
    let logger: Logger

    private func context(_ context: PluginContext) -> PluginContext {
        var c = context
        c.stateDirectory = stateDirectory
        return c
    }

    func validateField(_ name: String, value: AnswerValue, field: FieldInfo, context: PluginContext) async throws
        -> FieldAssessment
    {
        switch await caller.validateField(name, value: value, field: field, context: self.context(context)) {
        case .success(let assessment): return assessment
        case .timedOut: throw PluginCheckTimedOut()
        case .busy(let waited):
            logBusy(name, waited: waited)
            throw PluginCheckTimedOut()
        case .failure(_, let detail): throw PluginCallFailed(plugin: name, detail: detail, logger: logger)
        case .cancelled, .unavailable: throw PluginCallFailed(plugin: name, detail: "not available", logger: logger)
        }
    }

    func validateStep(_ name: String, step: StepInfo, context: PluginContext) async throws -> [ValidationIssue] {
        switch await caller.validateStep(name, step: step, context: self.context(context)) {
        case .success(let issues): return issues
        case .timedOut: throw PluginCheckTimedOut()
        case .busy(let waited):
            logBusy(name, waited: waited)
            throw PluginCheckTimedOut()
        case .failure(_, let detail): throw PluginCallFailed(plugin: name, detail: detail, logger: logger)
        case .cancelled, .unavailable: throw PluginCallFailed(plugin: name, detail: "not available", logger: logger)
        }
    }

    func submit(_ request: SubmitRequest) async -> SubmitOutcome {
        let timeout = Duration.milliseconds(Int64((request.timeoutSeconds * 1000).rounded()))
        switch await caller.submit(
            request.action, submission: request.submission, context: context(request.context), timeout: timeout)
        {
        case .success(let receipt): return .success(receipt)
        case .failure(let message, let detail):
            return .failure(message.map(SubmitFailure.localized) ?? .other, detail: detail)
        case .timedOut: return .failure(.timedOut, detail: "timed out after \(request.timeoutSeconds) s")
        case .busy(let waited):
            return .failure(.timedOut, detail: "no plugin thread was free for \(waited); the action did not run")
        case .cancelled: return .cancelled
        case .unavailable: return .failure(.other, detail: "no loaded plugin provides \(request.action)")
        }
    }

    func options(_ name: String, field: FieldInfo, context: PluginContext) async -> ProviderOutcome<[ChoiceOption]> {
        provider(name, await caller.options(name, field: field, context: self.context(context)))
    }

    func prefill(_ name: String, field: FieldInfo, context: PluginContext) async -> ProviderOutcome<AnswerValue?> {
        provider(name, await caller.prefill(name, field: field, context: self.context(context)))
    }

    private func provider<V>(_ name: String, _ result: PluginCallResult<V>) -> ProviderOutcome<V> {
        switch result {
        case .success(let v): return .success(v)
        case .failure(_, let detail): return .failure(detail: detail)
        case .timedOut: return .timedOut
        case .busy(let waited):
            logBusy(name, waited: waited)
            return .timedOut
        case .cancelled: return .failure(detail: "cancelled")
        case .unavailable: return .failure(detail: "no loaded plugin provides it")
        }
    }
}

extension PluginHostGateway {
    /// A call that found no free plugin thread within its time limit: it
    /// reaches the client as a timeout, and the journal says it never ran.
    func logBusy(_ name: String, waited: Duration) {
        logger.warning(
            "plugin call \(name) was not made: no plugin thread was free for \(waited.description)",
            metadata: [.plugin: name])
    }
}

/// A validator failed: the engine shows "Couldn't check this value" (fail
/// closed); the detail goes to the journal only.
struct PluginCallFailed: Error {
    init(plugin: String, detail: String, logger: Logger) {
        logger.warning("validator \(plugin) failed: \(detail)", metadata: [.plugin: plugin])
    }
}
