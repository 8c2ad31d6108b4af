import FlowKit
import Testing

/// A guard on the ABI rule in `ABI.swift`: a plugin compiles the layout of
/// FlowKit's public types into its own code, so changing one without bumping
/// `FlowKitABI.version` would let the loader accept a plugin that reads the
/// daemon's values wrongly. When this test fails, bump the version and record
/// the new layouts (and docs/plugins.md's example message) in the same commit.
///
/// Protocol requirements are guarded by `CapabilityTypes.Noop`, which
/// conforms to every capability protocol: a new requirement stops it compiling
/// — unless it has a default implementation. Such a requirement keeps plugins'
/// sources compiling but still changes the witness tables they are compiled
/// with, so it bumps the version by hand (ABI 2: `describeRule`; ABI 3:
/// `assess`, with `ValidationIssue.level`'s layout change).
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
    /// layouts on 64-bit Linux as of the ABI version they were recorded for.
    static let recorded: (abi: UInt32, layouts: [(String, Layout, Layout)]) = (3, [
        ("AnswerValue", layout(AnswerValue.self), Layout(size: 17, alignment: 8)),
        ("JSONValue", layout(JSONValue.self), Layout(size: 17, alignment: 8)),
        ("PluginContext", layout(PluginContext.self), Layout(size: 88, alignment: 8)),
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
    ])

    @Test("public layouts are the ones recorded for this ABI version")
    func layoutsMatchTheVersion() {
        #expect(FlowKitABI.version == Self.recorded.abi, "record the layouts of the new ABI version here")
        for (name, actual, expected) in Self.recorded.layouts {
            #expect(actual == expected, "\(name) changed layout: bump FlowKitABI.version and record \(actual)")
        }
    }
}
