import FlowEngine
import FlowKit
import Logging
import PluginHost

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
