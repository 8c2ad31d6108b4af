// FixtureThrowingPlugin: every capability throws, in each of the ways the host
// must map: a plain error, a LocalizedFailure, a Foundation LocalizedError.
import FlowKit
import Foundation

struct PlainError: Error, CustomStringConvertible {
    var description: String { "database connection refused (internal detail)" }
}

struct DescribedError: LocalizedError {
    var errorDescription: String? { "The directory service is down." }
}

/// `throw.validator`: a plain error, also when asked to describe its rule.
struct ThrowingValidator: FieldValidator {
    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        throw PlainError()
    }

    func describeRule(field: FieldInfo, context: PluginContext) async throws -> String? {
        throw PlainError()
    }
}

/// `throw.step`: a LocalizedFailure, also when asked to describe its rule.
struct ThrowingStep: StepValidator {
    func validate(step: StepInfo, context: PluginContext) async throws -> [ValidationIssue] {
        throw LocalizedFailure("The step cannot be checked now.")
    }

    func describeRule(step: StepInfo, context: PluginContext) async throws -> String? {
        throw LocalizedFailure("The step cannot be described now.")
    }
}

/// `throw.submit`: a plain error.
struct ThrowingSubmit: SubmitAction {
    func submit(_ submission: Submission, context: PluginContext) async throws -> SubmitReceipt {
        throw PlainError()
    }
}

/// `throw.options`: a LocalizedFailure.
struct ThrowingOptions: OptionsProvider {
    func options(for field: FieldInfo, context: PluginContext) async throws -> [ChoiceOption] {
        throw LocalizedFailure("No rooms are free.")
    }
}

/// `throw.prefill`: a Foundation LocalizedError.
struct ThrowingPrefill: PrefillProvider {
    func prefill(for field: FieldInfo, context: PluginContext) async throws -> AnswerValue? {
        throw DescribedError()
    }
}

@_cdecl("flowd_plugin_abi_version")
public func flowdPluginABIVersion() -> UInt32 { FlowKitABI.version }

@_cdecl("flowd_plugin_register")
public func flowdPluginRegister() -> UnsafeMutableRawPointer? {
    PluginRegistration(
        name: "throwing", version: "1.0",
        capabilities: [
            .fieldValidator("throw.validator", ThrowingValidator()),
            .stepValidator("throw.step", ThrowingStep()),
            .submitAction("throw.submit", ThrowingSubmit()),
            .optionsProvider("throw.options", ThrowingOptions()),
            .prefillProvider("throw.prefill", ThrowingPrefill()),
        ]
    ).exportRetained()
}
