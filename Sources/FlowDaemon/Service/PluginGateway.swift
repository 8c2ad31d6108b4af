import FlowEngine
import FlowKit

/// What the service needs from plugins. The daemon's implementation calls
/// `PluginHost`; tests of the service can use a fake. Every call runs off the
/// event loop, under a time limit, and never throws: outcomes are values.
protocol PluginGateway: PluginValidating {
    /// Runs a submit action. Cancelling the calling task cancels the action.
    func submit(_ request: SubmitRequest) async -> SubmitOutcome
    /// Runs an options provider.
    func options(_ name: String, field: FieldInfo, context: PluginContext) async -> ProviderOutcome<[ChoiceOption]>
    /// Runs a prefill provider.
    func prefill(_ name: String, field: FieldInfo, context: PluginContext) async -> ProviderOutcome<AnswerValue?>
    /// The registered name of the plugin that provides capability `name` of
    /// `kind`, for the journal's `FLOWD_PLUGIN`; nil when none does.
    func pluginName(providing kind: CapabilityKind, _ name: String) -> String?
}

extension PluginGateway {
    func pluginName(providing kind: CapabilityKind, _ name: String) -> String? { nil }
}

/// How a submit action ended.
enum SubmitOutcome: Sendable {
    case success(SubmitReceipt)
    /// `detail` is for the journal only (it may name internals, never answers).
    case failure(SubmitFailure, detail: String)
    case cancelled
}

/// How an options or prefill provider ended.
enum ProviderOutcome<Value: Sendable>: Sendable {
    case success(Value)
    /// `detail` is for the journal only.
    case failure(detail: String)
    case timedOut
}

/// A gateway with no plugins: every named capability is missing. Flows that
/// need one are refused at load, so this is only reached by flows without
/// plugins.
struct NoPlugins: PluginGateway {
    struct Missing: Error {}

    func validateField(_ name: String, value: AnswerValue, field: FieldInfo, context: PluginContext) async throws
        -> FieldAssessment
    {
        throw Missing()
    }

    func validateStep(_ name: String, step: StepInfo, context: PluginContext) async throws -> [ValidationIssue] {
        throw Missing()
    }

    func submit(_ request: SubmitRequest) async -> SubmitOutcome {
        .failure(.other, detail: "no plugin provides \(request.action)")
    }

    func options(_ name: String, field: FieldInfo, context: PluginContext) async -> ProviderOutcome<[ChoiceOption]> {
        .failure(detail: "no plugin provides \(name)")
    }

    func prefill(_ name: String, field: FieldInfo, context: PluginContext) async -> ProviderOutcome<AnswerValue?> {
        .failure(detail: "no plugin provides \(name)")
    }
}
