import FlowKit

// The capabilities of an isolated plugin as flowd registers them: FlowKit's
// own protocols, each method one call into the plugin's process. So
// `PluginCaller` calls an isolated plugin exactly as an in-process one (the
// same pool, time limits, cancellation, limits on what comes back), and
// nothing above it knows the difference.

extension IsolatedPlugin {
    /// The capabilities of `registration`, each forwarding to this plugin's process.
    package func capabilities(of registration: WireRegistration) -> [(Capability, [PluginOption]?)] {
        registration.capabilities.map { entry in
            let remote = RemoteCapability(plugin: self, name: entry.name)
            let capability: Capability
            switch entry.kind {
            case .fieldValidator: capability = .fieldValidator(entry.name, remote)
            case .stepValidator: capability = .stepValidator(entry.name, remote)
            case .submitAction: capability = .submitAction(entry.name, remote)
            case .optionsProvider: capability = .optionsProvider(entry.name, remote)
            case .prefillProvider: capability = .prefillProvider(entry.name, remote)
            }
            return (capability, entry.options.map { $0.compactMap(\.option) })
        }
    }
}

/// One capability of an isolated plugin. It conforms to every capability
/// protocol; the registration says which one it is used as.
struct RemoteCapability: FieldValidator, StepValidator, SubmitAction, OptionsProvider, PrefillProvider {
    let plugin: IsolatedPlugin
    let name: String

    /// Sends `request` to the plugin's process; its outcome, or the failure
    /// the capability throws.
    private func run(_ request: WireCall.Request, _ context: PluginContext) async throws -> WireOutcome {
        let timeout = context.timeRemaining ?? .seconds(86_400)
        let nanoseconds = timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        let outcome = await plugin.run(deadline: context.deadline, log: context.log) { id in
            WireCall(
                id: id, capability: name, context: WireContext(context), timeoutNanoseconds: nanoseconds,
                request: request)
        }
        switch outcome {
        case .failure(let message, let detail):
            if let message { throw ExplainedFailure(message, detail: detail) }
            throw IsolatedCallFailure(detail: detail)
        case .timedOut: throw IsolatedCallFailure(detail: "timed out in its isolated process")
        case .cancelled: throw CancellationError()
        case .unavailable: throw IsolatedCallFailure(detail: "its isolated process does not provide \(name)")
        default: return outcome
        }
    }

    private func mismatch(_ outcome: WireOutcome) -> IsolatedCallFailure {
        IsolatedCallFailure(detail: "its isolated process answered \(name) with something else: \(outcome)")
    }

    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        try await review(value, field: field, context: context).assessment.rejection
    }

    func assess(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> FieldAssessment {
        try await review(value, field: field, context: context).assessment
    }

    func review(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> FieldReview {
        let outcome = try await run(.review(WireAnswer(value), WireField(field)), context)
        guard case .review(let assessment, let normalized) = outcome else { throw mismatch(outcome) }
        return FieldReview(assessment, normalizedValue: normalized?.value)
    }

    func describeRule(field: FieldInfo, context: PluginContext) async throws -> String? {
        try await text(.describeFieldRule(WireField(field)), context)
    }

    func validate(step: StepInfo, context: PluginContext) async throws -> [ValidationIssue] {
        let outcome = try await run(.validateStep(WireStep(step)), context)
        guard case .issues(let issues) = outcome else { throw mismatch(outcome) }
        return issues.map { ValidationIssue(field: $0.field, message: $0.message, level: $0.level) }
    }

    func describeRule(step: StepInfo, context: PluginContext) async throws -> String? {
        try await text(.describeStepRule(WireStep(step)), context)
    }

    /// A rule's description.
    private func text(_ request: WireCall.Request, _ context: PluginContext) async throws -> String? {
        let outcome = try await run(request, context)
        guard case .text(let text) = outcome else { throw mismatch(outcome) }
        return text
    }

    func submit(_ submission: Submission, context: PluginContext) async throws -> SubmitReceipt {
        let outcome = try await run(.submit(WireSubmission(submission)), context)
        guard case .receipt(let values) = outcome else { throw mismatch(outcome) }
        return SubmitReceipt(values.mapValues(\.value))
    }

    func options(for field: FieldInfo, context: PluginContext) async throws -> [ChoiceOption] {
        let outcome = try await run(.options(WireField(field)), context)
        guard case .options(let options) = outcome else { throw mismatch(outcome) }
        return options
    }

    func prefill(for field: FieldInfo, context: PluginContext) async throws -> AnswerValue? {
        let outcome = try await run(.prefill(WireField(field)), context)
        guard case .prefill(let value) = outcome else { throw mismatch(outcome) }
        return value?.value
    }
}

/// An isolated plugin's call failed without a message for the person: its
/// process died, was killed, or answered with a failure of that kind. The
/// journal gets `detail`.
struct IsolatedCallFailure: Error, CustomStringConvertible {
    var detail: String
    var description: String { detail }
}
