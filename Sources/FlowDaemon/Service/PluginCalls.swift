import FlowEngine
import FlowKit

/// What the service needs from plugins. The daemon's implementation is
/// ``PluginHostGateway`` (PluginHost's caller); the service's tests use a
/// fake. Every call runs off the event loop, under a time limit, and never
/// throws but for the validators' protocol: outcomes are values.
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

/// What the providers of a new session gave, one entry per request.
enum ProvidedValue: Sendable {
    case options(ProviderOutcome<[ChoiceOption]>)
    case prefill(ProviderOutcome<AnswerValue?>)
}

/// Every plugin call of the service starts here: validators, submit actions
/// and providers. Each runs as a task off the loop (on the plugin host's
/// threads, through the gateway) and comes back to the service, on the loop,
/// with its outcome; the service then looks its session up again, since the
/// session may have changed meanwhile.
///
/// A new kind of plugin call (a rule description, a locale change's
/// options) is a new method here.
struct PluginCalls: Sendable {
    let gateway: any PluginGateway

    /// Runs `checks` concurrently, then `then` with their results in order.
    func check(
        _ checks: [PluginCheck], for service: isolated FlowService,
        then: @escaping @Sendable (isolated FlowService, [PluginCheckResult]) -> Void
    ) {
        start(for: service, { gateway in await checks.run(using: gateway) }, then: then)
    }

    /// Runs the submit action of `request`, then `then` with how it ended.
    /// Cancelling the returned task cancels the action.
    func submit(
        _ request: SubmitRequest, for service: isolated FlowService,
        then: @escaping @Sendable (isolated FlowService, SubmitOutcome) -> Void
    ) -> Task<Void, Never> {
        start(for: service, { gateway in await gateway.submit(request) }, then: then)
    }

    /// Runs the options and prefill providers a new session needs, one after
    /// the other, then `then` with what each gave. `context` is the new
    /// session's; each request adds its provider's options.
    func provide(
        _ requests: [ProviderRequest], context: PluginContext, for service: isolated FlowService,
        then: @escaping @Sendable (isolated FlowService, [ProvidedValue]) -> Void
    ) {
        start(
            for: service,
            { gateway in
                var values: [ProvidedValue] = []
                for request in requests {
                    var context = context
                    context.options = request.provider.options
                    switch request.kind {
                    case .options:
                        values.append(.options(await gateway.options(request.provider.name, field: request.field, context: context)))
                    case .prefill:
                        values.append(.prefill(await gateway.prefill(request.provider.name, field: request.field, context: context)))
                    }
                }
                return values
            }, then: then)
    }

    /// The one `Task` every plugin call runs in: `call` off the loop, then
    /// `then` back on the service.
    @discardableResult
    private func start<Value: Sendable>(
        for service: isolated FlowService, _ call: @escaping @Sendable (any PluginGateway) async -> Value,
        then: @escaping @Sendable (isolated FlowService, Value) -> Void
    ) -> Task<Void, Never> {
        let gateway = self.gateway
        return Task {
            let value = await call(gateway)
            then(service, value)
        }
    }
}
