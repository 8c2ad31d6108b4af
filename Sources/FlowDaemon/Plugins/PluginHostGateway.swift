import FlowEngine
import FlowKit
import FlowProtocol
import Logging
import PluginHost

/// The service's plugin calls, through `PluginHost`'s caller (off the loop,
/// on the plugin executor, under time limits, inside the crash guard).
struct PluginHostGateway: PluginGateway {
    let caller: PluginCaller
    let stateDirectory: String
    let logger: Logger
    /// The limit on plugins' own log lines, shared by every call.
    var logGate = PluginLogGate()

    /// Makes a call to capability `name` with the context it gets: the state
    /// directory, and a log into flowd's with the call's fields (`metadata`),
    /// which never writes `secrets` and is finished when the call ends.
    private func call<Value>(
        _ context: PluginContext, _ kind: CapabilityKind, _ name: String, metadata: LogMetadata? = nil,
        secrets: [String] = [], _ body: (PluginContext) async -> Value
    ) async -> Value {
        var c = context
        c.stateDirectory = stateDirectory
        let fields = metadata ?? callMetadata(kind, name, context)
        var callLogger = logger
        callLogger.metadata = logger.metadata.merging(fields)
        let log = PluginCallLog(
            logger: callLogger, plugin: fields.text(of: .plugin) ?? name, gate: logGate, secrets: secrets)
        c.log = PluginLogger(sink: log)
        let result = await body(c)
        log.finish()
        return result
    }

    func validateField(_ name: String, value: AnswerValue, field: FieldInfo, context: PluginContext) async throws
        -> FieldAssessment
    {
        try await reviewField(name, value: value, field: field, context: context).assessment
    }

    func reviewField(_ name: String, value: AnswerValue, field: FieldInfo, context: PluginContext) async throws
        -> FieldReview
    {
        var metadata = callMetadata(.fieldValidator, name, context)
        metadata[.field] = field.id
        let secrets = field.type == "secure" ? value.textValue.map { [$0] } ?? [] : []
        let result = await call(context, .fieldValidator, name, metadata: metadata, secrets: secrets) {
            await caller.reviewField(name, value: value, field: field, context: $0)
        }
        return try checked(result, "validator \(name)", name, metadata: metadata)
    }

    func normalizationRefused(_ name: String, field: FieldInfo, context: PluginContext, problem: NormalizationRefused) {
        var metadata = callMetadata(.fieldValidator, name, context)
        metadata[.field] = field.id
        metadata[.error] = FlowErrorName.pluginFailed.rawValue
        logger.warning("validator \(name) failed: its normalized value \(problem.description)", metadata: metadata)
    }

    func validateStep(_ name: String, step: StepInfo, context: PluginContext) async throws -> [ValidationIssue] {
        var metadata = callMetadata(.stepValidator, name, context)
        metadata[.step] = step.id
        let result = await call(context, .stepValidator, name, metadata: metadata) {
            await caller.validateStep(name, step: step, context: $0)
        }
        return try checked(result, "step validator \(name)", name, metadata: metadata)
    }

    /// A check's value, or the error that makes the session say the check
    /// could not run; a timeout, a wait for a thread and a failure are logged.
    private func checked<Value>(
        _ result: PluginCallResult<Value>, _ what: String, _ name: String, metadata: LogMetadata
    ) throws -> Value {
        switch result {
        case .success(let value): return value
        case .timedOut:
            logger.warning("\(what) timed out", metadata: metadata)
            throw PluginCheckTimedOut()
        case .busy(let waited):
            logBusy(name, waited: waited, metadata: metadata)
            throw PluginCheckTimedOut()
        case .failure(_, let detail): throw PluginCallFailed(name, detail: detail, metadata: metadata, logger: logger)
        case .cancelled, .unavailable:
            throw PluginCallFailed(name, detail: "not available", metadata: metadata, logger: logger)
        }
    }

    func submit(_ request: SubmitRequest) async -> SubmitOutcome {
        let timeout = Duration.milliseconds(Int64((request.timeoutSeconds * 1000).rounded()))
        let secrets = Array(request.submission.secureAnswers.values)
        let result = await call(request.context, .submitAction, request.action, secrets: secrets) {
            await caller.submit(request.action, submission: request.submission, context: $0, timeout: timeout)
        }
        switch result {
        case .success(let receipt):
            let (finite, replaced) = receipt.replacingNonFiniteNumbers()
            if !replaced.isEmpty {
                let paths = replaced.joined(separator: ", ")
                logger.warning(
                    "submit action \(request.action) returned a receipt with values that are not a finite number (\(paths)); they are kept as text",
                    metadata: callMetadata(.submitAction, request.action, request.context))
            }
            return .success(finite)
        case .failure(let message, let detail):
            return .failure(message.map(SubmitFailure.localized) ?? .other, detail: detail)
        case .timedOut: return .failure(.timedOut, detail: "timed out after \(request.timeoutSeconds) s")
        case .busy(let waited):
            return .failure(.timedOut, detail: "no plugin thread was free for \(waited); the action did not run")
        case .cancelled: return .cancelled
        case .unavailable: return .failure(.other, detail: "no loaded plugin provides \(request.action)")
        }
    }

    func pluginName(providing kind: CapabilityKind, _ name: String) -> String? {
        caller.registry.capability(kind, named: name)?.plugin.name
    }

    /// The journal fields of a call to capability `name`: its plugin's name
    /// (`FLOWD_PLUGIN`, the same on every line about that plugin), the
    /// capability, the flow and the session.
    func callMetadata(_ kind: CapabilityKind, _ name: String, _ context: PluginContext) -> LogMetadata {
        var metadata: LogMetadata = [.capability: name, .flow: context.flowID]
        metadata[.plugin] = pluginName(providing: kind, name)
        if !context.sessionID.isEmpty { metadata[.session] = context.sessionID }
        return metadata
    }

    func options(_ name: String, field: FieldInfo, context: PluginContext) async -> ProviderOutcome<[ChoiceOption]> {
        let result = await call(context, .optionsProvider, name) { await caller.options(name, field: field, context: $0) }
        return provider(.optionsProvider, name, context, result)
    }

    func prefill(_ name: String, field: FieldInfo, context: PluginContext) async -> ProviderOutcome<AnswerValue?> {
        let result = await call(context, .prefillProvider, name) { await caller.prefill(name, field: field, context: $0) }
        return provider(.prefillProvider, name, context, result)
    }

    private func provider<V>(
        _ kind: CapabilityKind, _ name: String, _ context: PluginContext, _ result: PluginCallResult<V>
    ) -> ProviderOutcome<V> {
        switch result {
        case .success(let v): return .success(v)
        case .failure(_, let detail): return .failure(detail: detail)
        case .timedOut: return .timedOut
        case .busy(let waited):
            logBusy(name, waited: waited, metadata: callMetadata(kind, name, context))
            return .timedOut
        case .cancelled: return .failure(detail: "cancelled")
        case .unavailable: return .failure(detail: "no loaded plugin provides it")
        }
    }
}

extension PluginHostGateway {
    /// A call that found no free plugin thread within its time limit: it
    /// reaches the client as a timeout, and the journal says it never ran.
    func logBusy(_ name: String, waited: Duration, metadata: LogMetadata) {
        logger.warning(
            "plugin call \(name) was not made: no plugin thread was free for \(waited.description)",
            metadata: metadata)
    }
}

/// A validator failed: the engine shows "Couldn't check this value" (fail
/// closed); the detail goes to the journal only.
struct PluginCallFailed: Error {
    init(_ capability: String, detail: String, metadata: LogMetadata, logger: Logger) {
        logger.warning("validator \(capability) failed: \(detail)", metadata: metadata)
    }
}
