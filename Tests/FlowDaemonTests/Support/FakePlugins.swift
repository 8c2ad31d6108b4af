@testable import FlowDaemon
import FlowEngine
import FlowKit
import TestSupport

/// The service's plugins, answered by the test: every call waits until the
/// test answers it (``Call``), so a test decides what a plugin says and
/// when, including after its call was cancelled.
final class FakePlugins: PluginGateway {
    /// One plugin call, waiting for its answer.
    final class Call: Sendable {
        enum Kind: Sendable, Equatable {
            case field(String, AnswerValue)
            case step(String)
            case submit(action: String)
            case options(String)
            case prefill(String)
        }

        let kind: Kind
        private let answer: @Sendable (Answer) -> Void
        private let cancelled = Locked(false)

        fileprivate init(kind: Kind, answer: @escaping @Sendable (Answer) -> Void) {
            self.kind = kind
            self.answer = answer
        }

        /// True once the task that made the call was cancelled.
        var wasCancelled: Bool { cancelled.value }
        fileprivate func cancel() { cancelled.withLock { $0 = true } }

        /// A field validator's message (nil accepts the value).
        func field(_ message: String?) { answer(.field(message)) }
        /// A step validator's issues.
        func step(_ issues: [ValidationIssue]) { answer(.step(issues)) }
        /// How the submit action ended.
        func submit(_ outcome: SubmitOutcome) { answer(.submit(outcome)) }
        /// What an options provider gave.
        func options(_ outcome: ProviderOutcome<[ChoiceOption]>) { answer(.options(outcome)) }
        /// What a prefill provider gave.
        func prefill(_ outcome: ProviderOutcome<AnswerValue?>) { answer(.prefill(outcome)) }
        /// The validator threw.
        func fail() { answer(.failed) }
    }

    fileprivate enum Answer: Sendable {
        case field(String?)
        case step([ValidationIssue])
        case submit(SubmitOutcome)
        case options(ProviderOutcome<[ChoiceOption]>)
        case prefill(ProviderOutcome<AnswerValue?>)
        case failed
    }

    private struct Thrown: Error {}

    private let calls = Locked<[Call]>([])
    private let made = Locked(0)

    /// The oldest call not yet taken by the test.
    func takeCall() -> Call? {
        calls.withLock { $0.isEmpty ? nil : $0.removeFirst() }
    }

    /// How many calls were made in all.
    var callCount: Int { made.value }

    private func wait(_ kind: Call.Kind) async -> Answer {
        let call = Locked<Call?>(nil)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Answer, Never>) in
                let made = Call(kind: kind) { continuation.resume(returning: $0) }
                call.withLock { $0 = made }
                self.made.withLock { $0 += 1 }
                calls.withLock { $0.append(made) }
            }
        } onCancel: {
            call.value?.cancel()
        }
    }

    func validateField(_ name: String, value: AnswerValue, field: FieldInfo, context: PluginContext) async throws
        -> FieldAssessment
    {
        guard case .field(let message) = await wait(.field(name, value)) else { throw Thrown() }
        return message.map(FieldAssessment.rejected) ?? .accepted
    }

    func validateStep(_ name: String, step: StepInfo, context: PluginContext) async throws -> [ValidationIssue] {
        guard case .step(let issues) = await wait(.step(name)) else { throw Thrown() }
        return issues
    }

    func submit(_ request: SubmitRequest) async -> SubmitOutcome {
        guard case .submit(let outcome) = await wait(.submit(action: request.action)) else {
            return .failure(.other, detail: "the fake was answered with something else")
        }
        return outcome
    }

    func options(_ name: String, field: FieldInfo, context: PluginContext) async -> ProviderOutcome<[ChoiceOption]> {
        guard case .options(let outcome) = await wait(.options(name)) else { return .failure(detail: "not options") }
        return outcome
    }

    func prefill(_ name: String, field: FieldInfo, context: PluginContext) async -> ProviderOutcome<AnswerValue?> {
        guard case .prefill(let outcome) = await wait(.prefill(name)) else { return .failure(detail: "not a prefill") }
        return outcome
    }
}
