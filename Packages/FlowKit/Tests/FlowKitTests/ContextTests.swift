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

    /// A validator written for FlowKit 1.1: it describes its rule.
    struct Window: FieldValidator, StepValidator {
        func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? { nil }
        func validate(step: StepInfo, context: PluginContext) async throws -> [ValidationIssue] { [] }
        func describeRule(field: FieldInfo, context: PluginContext) async throws -> String? {
            let days = context.options["days"]?.intValue ?? 30
            return context.locale.hasPrefix("de") ? "In den nächsten \(days) Tagen" : "Within the next \(days) days"
        }
        func describeRule(step: StepInfo, context: PluginContext) async throws -> String? {
            "\(step.title): all or nothing"
        }
    }

    @Test("describeRule: none by default (Noop is written as before 1.1), a validator's own through the protocol")
    func ruleDescriptions() async throws {
        let field = FieldInfo(id: "day", type: "date", label: "Day")
        let step = StepInfo(id: "s", title: "Step", fields: [field])
        let context = PluginContext(
            flowID: "f", sessionID: "", locale: "de", callerUID: 0, answers: [:], options: ["days": 14], stateDirectory: "")
        let noop: any FieldValidator = Noop()
        let noopStep: any StepValidator = Noop()
        #expect(try await noop.describeRule(field: field, context: context) == nil)
        #expect(try await noopStep.describeRule(step: step, context: context) == nil)
        // Called through the existential, as the daemon calls it: the plugin's
        // own implementation, not the default.
        let window: any FieldValidator = Window()
        let windowStep: any StepValidator = Window()
        #expect(try await window.describeRule(field: field, context: context) == "In den nächsten 14 Tagen")
        #expect(try await windowStep.describeRule(step: step, context: context) == "Step: all or nothing")
        guard case .fieldValidator(_, let registered) = Capability.fieldValidator("t.window", Window()) else { return }
        #expect(try await registered.describeRule(field: field, context: context) == "In den nächsten 14 Tagen")
    }

    /// A validator written for FlowKit 1.1 that warns: a Sunday is allowed,
    /// with a second look; a date in the past is an error.
    struct Opening: FieldValidator, StepValidator {
        func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? {
            value.textValue == "2025-01-01" ? "That is in the past." : nil
        }
        func assess(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> FieldAssessment {
            if let error = try await validate(value, field: field, context: context) { return .rejected(error) }
            return value.textValue == "2025-06-15" ? .warning("That is a Sunday; we are closed then.") : .accepted
        }
        func validate(step: StepInfo, context: PluginContext) async throws -> [ValidationIssue] {
            [ValidationIssue(field: "day", message: "Busy day.", level: .warning)]
        }
    }

    @Test("warnings: assess defaults to validate's answer (Noop is written as before 1.1); a validator's own through the protocol")
    func warnings() async throws {
        let field = FieldInfo(id: "day", type: "date", label: "Day")
        let context = PluginContext(
            flowID: "f", sessionID: "s", locale: "en", callerUID: 0, answers: [:], options: [:], stateDirectory: "")
        let noop: any FieldValidator = Noop()
        #expect(try await noop.assess(.text("x"), field: field, context: context) == .accepted)
        let opening: any FieldValidator = Opening()
        #expect(try await opening.assess(.text("2025-01-01"), field: field, context: context) == .rejected("That is in the past."))
        #expect(try await opening.assess(.text("2025-06-15"), field: field, context: context)
            == .warning("That is a Sunday; we are closed then."))
        #expect(try await opening.assess(.text("2025-06-16"), field: field, context: context) == .accepted)
        // A plugin that only implements validate still assesses: its message is an error.
        struct Old: FieldValidator {
            func validate(_ value: AnswerValue, field: FieldInfo, context: PluginContext) async throws -> String? { "No." }
        }
        let old: any FieldValidator = Old()
        #expect(try await old.assess(.text("x"), field: field, context: context) == .rejected("No."))
        let step: any StepValidator = Opening()
        let issues = try await step.validate(step: StepInfo(id: "s", title: "S", fields: [field]), context: context)
        #expect(issues.map(\.level) == [.warning])
        #expect(ValidationIssue(field: nil, message: "x").level == .error)
        #expect(IssueLevel.allCases.map(\.rawValue) == ["error", "warning"])
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
