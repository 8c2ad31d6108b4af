import FlowKit
import Testing

/// A second guard on the ABI rule in `ABI.swift`, beside the interface
/// fingerprint (`ABIFingerprintTests`): a plugin compiles the layout of
/// FlowKit's public types into its own code. Any change to one changes
/// FlowKit's sources and so the fingerprint and `FlowKitABI.version`; this
/// test names the type whose layout moved, so the change is deliberate and
/// docs/plugins.md ("The ABI rule") can say what it was.
///
/// Protocol requirements are guarded by `CapabilityTypes.Noop`, which
/// conforms to every capability protocol: a new requirement without a
/// default stops it compiling.
@Suite struct ABILayout {
    struct Layout: Equatable, CustomStringConvertible {
        var size: Int
        var alignment: Int
        var description: String { "size \(size), alignment \(alignment)" }
    }

    static func layout<T>(_: T.Type) -> Layout {
        Layout(size: MemoryLayout<T>.size, alignment: MemoryLayout<T>.alignment)
    }

    /// The public value types plugins and the daemon exchange, and their
    /// layouts on 64-bit Linux.
    static let recorded: [(String, Layout, Layout)] = [
        ("AnswerValue", layout(AnswerValue.self), Layout(size: 17, alignment: 8)),
        ("JSONValue", layout(JSONValue.self), Layout(size: 17, alignment: 8)),
        ("PluginContext", layout(PluginContext.self), Layout(size: 152, alignment: 8)),
        ("FieldInfo", layout(FieldInfo.self), Layout(size: 48, alignment: 8)),
        ("StepInfo", layout(StepInfo.self), Layout(size: 40, alignment: 8)),
        ("ValidationIssue", layout(ValidationIssue.self), Layout(size: 33, alignment: 8)),
        ("IssueLevel", layout(IssueLevel.self), Layout(size: 1, alignment: 1)),
        ("FieldAssessment", layout(FieldAssessment.self), Layout(size: 17, alignment: 8)),
        ("ChoiceOption", layout(ChoiceOption.self), Layout(size: 48, alignment: 8)),
        ("Submission", layout(Submission.self), Layout(size: 96, alignment: 8)),
        ("SubmitReceipt", layout(SubmitReceipt.self), Layout(size: 8, alignment: 8)),
        ("LocalizedFailure", layout(LocalizedFailure.self), Layout(size: 16, alignment: 8)),
        ("Capability", layout(Capability.self), Layout(size: 57, alignment: 8)),
        ("CapabilityKind", layout(CapabilityKind.self), Layout(size: 1, alignment: 1)),
        ("CivilDate", layout(CivilDate.self), Layout(size: 24, alignment: 8)),
        ("CivilTime", layout(CivilTime.self), Layout(size: 16, alignment: 8)),
        ("PluginOption", layout(PluginOption.self), Layout(size: 18, alignment: 8)),
        ("PluginOptionType", layout(PluginOptionType.self), Layout(size: 1, alignment: 1)),
        ("PluginOptionProblem", layout(PluginOptionProblem.self), Layout(size: 18, alignment: 8)),
        ("FieldReview", layout(FieldReview.self), Layout(size: 41, alignment: 8)),
        ("PluginLogger", layout(PluginLogger.self), Layout(size: 40, alignment: 8)),
        ("PluginLogEntry", layout(PluginLogEntry.self), Layout(size: 32, alignment: 8)),
        ("PluginLogValue", layout(PluginLogValue.self), Layout(size: 17, alignment: 8)),
        ("PluginLogLevel", layout(PluginLogLevel.self), Layout(size: 1, alignment: 1)),
        ("PluginLogMessage", layout(PluginLogMessage.self), Layout(size: 16, alignment: 8)),
        ("LocalizedMessage", layout(LocalizedMessage.self), Layout(size: 8, alignment: 8)),
    ]

    @Test("public layouts are the ones recorded")
    func layoutsMatchTheRecord() {
        for (name, actual, expected) in Self.recorded {
            #expect(actual == expected, "\(name) changed layout: record \(actual) and say so in docs/plugins.md")
        }
    }
}
