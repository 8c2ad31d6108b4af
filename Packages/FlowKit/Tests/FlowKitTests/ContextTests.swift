import FlowKit
import Testing

/// The values the daemon hands a plugin carry exactly what they were made
/// with; the capability and registration types name what they hold.
@Suite struct ContextTypes {
    @Test func pluginContextKeepsEveryMember() {
        let context = PluginContext(
            flowID: "consultation", sessionID: String(repeating: "a", count: 32), locale: "pt-BR", callerUID: 1000,
            answers: ["name": .text("Ada"), "count": .integer(3)], options: ["count": 5], stateDirectory: "/var/lib/flowd")
        #expect(context.flowID == "consultation")
        #expect(context.sessionID.count == 32)
        #expect(context.locale == "pt-BR")
        #expect(context.callerUID == 1000)
        #expect(context.answers == ["name": .text("Ada"), "count": .integer(3)])
        #expect(context.options["count"]?.intValue == 5)
        #expect(context.stateDirectory == "/var/lib/flowd")
    }

    @Test func fieldAndStepInfo() {
        let field = FieldInfo(id: "day", type: "date", label: "Day")
        let step = StepInfo(id: "when", title: "When", fields: [field, FieldInfo(id: "time", type: "time", label: "Time")])
        #expect((field.id, field.type, field.label) == ("day", "date", "Day"))
        #expect(step.id == "when")
        #expect(step.title == "When")
        #expect(step.fields.map(\.id) == ["day", "time"])
    }

    @Test func validationIssues() {
        let onField = ValidationIssue(field: "end", message: "The end comes before the start.")
        let onStep = ValidationIssue(field: nil, message: "Too late to book.")
        #expect(onField.field == "end")
        #expect(onStep.field == nil)
        #expect(onField != onStep)
        #expect(onField == ValidationIssue(field: "end", message: "The end comes before the start."))
    }

    @Test func submissionKeepsSecureAnswersApart() {
        let submission = Submission(
            id: "s1", flowID: "f", sessionID: "s1", ownerUID: 1000, locale: "en", answers: ["name": .text("Ada")],
            secureAnswers: ["password": "hunter2"], submittedAt: 1_700_000_000_000_000)
        #expect(submission.answers["password"] == nil)
        #expect(submission.secureAnswers["password"] == "hunter2")
        #expect(submission.submittedAt == 1_700_000_000_000_000)
        #expect((submission.id, submission.flowID, submission.ownerUID, submission.locale) == ("s1", "f", 1000, "en"))
        // The idempotency key is the id under the name receivers know it by.
        var keyed = submission
        keyed.id = "0123456789abcdef0123456789abcdef-7"
        #expect(keyed.idempotencyKey == "0123456789abcdef0123456789abcdef-7")
    }

    @Test func receiptsAndFailures() {
        #expect(SubmitReceipt().values.isEmpty)
        #expect(SubmitReceipt(["reference": "A-1"]).values["reference"]?.stringValue == "A-1")
        #expect(LocalizedFailure("Nope.").message == "Nope.")
    }
}

@Suite struct CapabilityTypes {
    struct Noop: FieldValidator, StepValidator, SubmitAction, OptionsProvider, PrefillProvider {
        func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? { nil }
        func validate(step: StepInfo, context: PluginContext) async throws -> [ValidationIssue] { [] }
        func submit(_ submission: Submission, context: PluginContext) async throws -> SubmitReceipt { SubmitReceipt() }
        func options(for field: FieldInfo, context: PluginContext) async throws -> [ChoiceOption] { [] }
        func prefill(for field: FieldInfo, context: PluginContext) async throws -> AnswerValue? { nil }
    }

    @Test("each capability names its kind and its name")
    func capabilities() {
        let all: [Capability] = [
            .fieldValidator("t.field", Noop()), .stepValidator("t.step", Noop()), .submitAction("t.submit", Noop()),
            .optionsProvider("t.options", Noop()), .prefillProvider("t.prefill", Noop()),
        ]
        #expect(all.map(\.name) == ["t.field", "t.step", "t.submit", "t.options", "t.prefill"])
        #expect(all.map(\.kind) == CapabilityKind.allCases)
    }

    @Test("the kinds' names are the ones flowctl and the docs print")
    func kindNames() {
        #expect(CapabilityKind.allCases.map(\.rawValue)
            == ["field-validator", "step-validator", "submit-action", "options-provider", "prefill-provider"])
    }

    @Test("a registration records the ABI of the FlowKit it was compiled with")
    func registrationABI() {
        let registration = PluginRegistration(name: "t", version: "1.0", capabilities: [])
        #expect(registration.abiVersion == FlowKitABI.version)
        let foreign = PluginRegistration(name: "t", version: "1.0", abiVersion: 7, capabilities: [])
        #expect(foreign.abiVersion == 7)
        #expect(FlowKitABI.abiSymbol == "flowd_plugin_abi_version")
        #expect(FlowKitABI.registerSymbol == "flowd_plugin_register")
    }
}
