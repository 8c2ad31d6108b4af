import FlowKit
import Testing

@testable import FlowEngine

/// A fake plugin host: answers by value, counts calls.
actor FakeValidator: PluginValidating {
    private(set) var fieldCalls: [String] = []
    private(set) var stepCalls = 0
    var failing = false
    var stepIssues: [ValidationIssue] = []
    var stepThrows = false

    func setFailing(_ v: Bool) { failing = v }
    func setStep(issues: [ValidationIssue], throws: Bool) {
        stepIssues = issues
        stepThrows = `throws`
    }

    struct Boom: Error {}

    func validateField(_ name: String, value: AnswerValue, field: FieldInfo, context: PluginContext) async throws
        -> FieldAssessment
    {
        let text = value.textValue ?? ""
        fieldCalls.append("\(name):\(text)")
        if failing || text == "boom" { throw Boom() }
        if text == "slow" { throw PluginCheckTimedOut() }
        if text == "admin" { return .warning("Admin is a shared name; are you sure?") }
        return text == "taken" ? .rejected("That name is taken.") : .accepted
    }

    func validateStep(_ name: String, step: StepInfo, context: PluginContext) async throws -> [ValidationIssue] {
        stepCalls += 1
        if stepThrows { throw Boom() }
        return stepIssues
    }
}

@Suite struct PluginHookTests {
    func registration() throws -> FlowSession { try Fixture.session(Fixture.example("registration")) }

    @Test func fieldValidatorMessagesFailuresAndTimeouts() async throws {
        let fake = FakeValidator()
        var s = try registration()
        #expect(try await s.setAnswers(["username": .text("taken")], now: 1, validating: fake) == ["username": "That name is taken."])
        #expect(try await s.setAnswers(["username": .text("boom")], now: 2, validating: fake) == ["username": "Couldn't check this value."])
        #expect(try await s.setAnswers(["username": .text("slow")], now: 3, validating: fake)
            == ["username": "Checking this value took too long. Try again."])
        #expect(try await s.setAnswers(["username": .text("free")], now: 4, validating: fake) == [:])
        #expect(s.currentStep().fields[0].error.isEmpty)
        // Built-in rules come first: the plugin is not called for a bad value.
        #expect(try await s.setAnswers(["username": .text("No")], now: 5, validating: fake)["username"] == "Enter at least 3 characters.")
        #expect(await fake.fieldCalls == ["flowd.username-available:taken", "flowd.username-available:boom",
                                          "flowd.username-available:slow", "flowd.username-available:free"])
    }

    @Test func resultsAreCachedPerValueSoContinueDoesNotCallAgain() async throws {
        let fake = FakeValidator()
        var s = try registration()
        _ = try await s.setAnswers(["username": .text("free"), "email": .text("a@b.example")], now: 1, validating: fake)
        let outcome = try await s.continueStep(now: 2, validating: fake)
        guard case .moved = outcome else {
            Issue.record("did not move: \(outcome)")
            return
        }
        #expect(await fake.fieldCalls.count == 1)
        try s.back(now: 3)
        _ = try await s.continueStep(now: 4, validating: fake)
        #expect(await fake.fieldCalls.count == 1)
        #expect(s.currentStepID == "password")
    }

    @Test func continueDoesNotMoveWhileACheckIsMissing() throws {
        var s = try registration()
        let r = try s.setAnswers(["username": .text("ada"), "email": .text("a@b.example")], now: 1)
        #expect(r.checks.count == 1)
        #expect(r.checks[0].fieldID == "username")
        #expect(r.checks[0].validator == "flowd.username-available")
        #expect(r.checks[0].context.answers["username"] == .text("ada"))
        #expect(!String(describing: r.checks[0]).contains("ada"))
        guard case .checking(let checks) = try s.continueStep(now: 2) else {
            Issue.record("moved without the plugin's result")
            return
        }
        #expect(checks.count == 1)
        #expect(s.currentStepID == "account")
        // Calling again without results: the missing check fails closed.
        guard case .stayed(let errors) = try s.continueStep(now: 3) else {
            Issue.record("moved without the plugin's result")
            return
        }
        #expect(errors == ["username": "Couldn't check this value."])
        #expect(s.currentStepID == "account")
        // The next Continue asks again, and a good result lets it move.
        guard case .checking(let again) = try s.continueStep(now: 4) else {
            Issue.record("did not retry the failed check")
            return
        }
        _ = s.applyPluginResults(again.map { PluginCheckResult(check: $0, outcome: .accepted) })
        guard case .moved = try s.continueStep(now: 5) else {
            Issue.record("did not move after the check passed")
            return
        }
    }

    @Test func staleResultsAreIgnored() throws {
        var s = try registration()
        let old = try s.setAnswers(["username": .text("first")], now: 1).checks
        _ = try s.setAnswers(["username": .text("second")], now: 2)
        let errors = s.applyPluginResults(old.map { PluginCheckResult(check: $0, outcome: .rejected("taken")) })
        #expect(errors["username"] == nil)
    }

    @Test func failuresAreRetriedOnTheNextContinue() async throws {
        let fake = FakeValidator()
        var s = try registration()
        try s.set(["email": .text("a@b.example")])
        _ = try s.setAnswers(["username": .text("ada")], now: 1)
        await fake.setFailing(true)
        guard case .stayed(let errors) = try await s.continueStep(now: 2, validating: fake) else {
            Issue.record("moved although the check failed")
            return
        }
        #expect(errors["username"] == "Couldn't check this value.")
        await fake.setFailing(false)
        guard case .moved = try await s.continueStep(now: 3, validating: fake) else {
            Issue.record("the failed check was not retried")
            return
        }
        #expect(await fake.fieldCalls.count == 2)
    }

    let stepFlow = #"""
    {"format": 1, "id": "sv", "title": "SV", "steps": [
      {"id": "s", "title": "S", "fields": [{"id": "a", "type": "text", "label": "A"}, {"id": "b", "type": "text", "label": "B"}],
       "rules": [{"plugin": "test.combo", "options": {"strict": true}}]},
      {"id": "t", "title": "T", "kind": "content"}]}
    """#

    @Test func stepValidatorsAttachIssuesToFieldsOrTheStep() async throws {
        let fake = FakeValidator()
        var s = try Fixture.session(Fixture.flow(stepFlow))
        try s.set(["a": .text("x"), "b": .text("y")])
        await fake.setStep(issues: [ValidationIssue(field: "b", message: "B clashes with A."),
                                    ValidationIssue(field: nil, message: "Not this combination."),
                                    ValidationIssue(field: "zzz", message: "Unknown field goes to the step.")], throws: false)
        guard case .stayed(let errors) = try await s.continueStep(now: 1, validating: fake) else {
            Issue.record("moved despite step issues")
            return
        }
        #expect(errors == ["b": "B clashes with A.", "": "Not this combination."])
        #expect(s.currentStep().error == "Not this combination.")
        #expect(s.currentStep().fields[1].error == "B clashes with A.")
        // Changing an answer clears the step's messages.
        try s.set(["b": .text("z")])
        #expect(s.currentStep().error.isEmpty)
        await fake.setStep(issues: [], throws: true)
        guard case .stayed(let failed) = try await s.continueStep(now: 2, validating: fake) else {
            Issue.record("moved although the step check threw")
            return
        }
        #expect(failed == ["": "Couldn't check this value."])
        await fake.setStep(issues: [], throws: false)
        guard case .moved = try await s.continueStep(now: 3, validating: fake) else {
            Issue.record("did not move")
            return
        }
        #expect(await fake.stepCalls == 3)
    }

    @Test func stepChecksCarryTheRuleOptionsAndNoSecrets() throws {
        var s = try Fixture.session(Fixture.flow(stepFlow))
        try s.set(["a": .text("x")])
        guard case .checking(let checks) = try s.continueStep(now: 1) else {
            Issue.record("no step check")
            return
        }
        #expect(checks.count == 1)
        #expect(checks[0].validator == "test.combo")
        #expect(checks[0].context.options["strict"] == .bool(true))
        #expect(checks[0].context.flowID == "sv")
        #expect(checks[0].context.callerUID == 1000)
        guard case .step(let info) = checks[0].subject else {
            Issue.record("not a step check")
            return
        }
        #expect(info.fields.map(\.id) == ["a", "b"])
    }
}
