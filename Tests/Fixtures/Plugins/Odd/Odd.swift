// FixtureOddPlugin: capabilities that hand back what the SDK's types allow
// but flowd must not take as it is, or that are slow or throw in ways a
// person must still get a clear answer for. Never installed.
import FlowKit

/// `odd.nan-receipt`: succeeds (its side effect has happened) with a receipt
/// holding NaN and both infinities next to ordinary values.
struct NaNReceipt: SubmitAction {
    func submit(_ submission: Submission, context: PluginContext) async throws -> SubmitReceipt {
        SubmitReceipt([
            "reference": .string(submission.id),
            "ratio": .number(.nan),
            "limits": .array([.number(.infinity), .number(-.infinity), .number(2)]),
            "nested": .object(["score": .number(.nan)]),
        ])
    }
}

/// `odd.other-option`: offers the reserved option id `other` among others.
struct OtherOption: OptionsProvider {
    func options(for field: FieldInfo, context: PluginContext) async throws -> [ChoiceOption] {
        [ChoiceOption(id: "red", label: "Red"), ChoiceOption(id: "other", label: "Something else")]
    }
}

/// `odd.slow-field`: a field validator that takes a minute (cooperatively).
struct SlowField: FieldValidator {
    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        try await Task.sleep(for: .seconds(60))
        return nil
    }
}

/// `odd.slow-step`: a step validator that takes a minute (cooperatively).
struct SlowStep: StepValidator {
    func validate(step: StepInfo, context: PluginContext) async throws -> [ValidationIssue] {
        try await Task.sleep(for: .seconds(60))
        return []
    }
}

/// `odd.localized-field`: a field validator that throws a `LocalizedFailure`.
struct LocalizedField: FieldValidator {
    func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
        throw LocalizedFailure("The register cannot be reached.")
    }
}

@_cdecl("flowd_plugin_abi_version")
public func flowdPluginABIVersion() -> UInt32 { FlowKitABI.version }

@_cdecl("flowd_plugin_register")
public func flowdPluginRegister() -> UnsafeMutableRawPointer? {
    PluginRegistration(
        name: "odd", version: "1.0",
        capabilities: [
            .submitAction("odd.nan-receipt", NaNReceipt()),
            .optionsProvider("odd.other-option", OtherOption()),
            .fieldValidator("odd.slow-field", SlowField()),
            .stepValidator("odd.slow-step", SlowStep()),
            .fieldValidator("odd.localized-field", LocalizedField()),
        ]
    ).exportRetained()
}
