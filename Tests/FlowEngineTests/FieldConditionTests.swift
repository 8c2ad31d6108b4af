import FlowKit
import Testing

@testable import FlowEngine

/// `visibleIf`: a field asked only while its condition holds.
@Suite struct FieldConditionTests {
    static let loanFlow = #"""
        {"format": 2, "id": "loan", "title": "Loan", "steps": [
          {"id": "handover", "title": "Handover", "fields": [
            {"id": "owner", "type": "text", "label": "Owner", "required": true},
            {"id": "loan", "type": "toggle", "label": "This is a loan"},
            {"id": "returnDate", "type": "date", "label": "Return date", "required": true,
             "visibleIf": {"field": "loan", "equals": true}},
            {"id": "secret", "type": "secure", "label": "Loan PIN", "visibleIf": {"field": "loan", "equals": true}},
            {"id": "note", "type": "text", "label": "Note", "visibleIf": {"expr": "loan and length(owner) > 3"}}],
           "next": [{"if": {"field": "returnDate", "notEmpty": true}, "goto": "loanTerms"}, {"goto": "confirm"}]},
          {"id": "loanTerms", "title": "Terms", "fields": [{"id": "terms", "type": "toggle", "label": "Agreed", "mustBeOn": true}]},
          {"id": "confirm", "title": "Confirm", "fields": [{"id": "ok", "type": "toggle", "label": "OK"}],
           "rules": [{"plugin": "t.step"}]}],
         "review": {},
         "submit": {"action": "t.send"}}
        """#

    func fieldIDs(_ s: FlowSession) -> [String] { s.currentStep().fields.map(\.id) }

    @Test("the page lists only the shown fields, re-evaluated as answers on the same step change; the requirement follows")
    func visibilityFollowsTheAnswers() throws {
        var s = try Fixture.session(Fixture.flow(Self.loanFlow))
        #expect(fieldIDs(s) == ["owner", "loan"])
        #expect(s.canContinue == false)
        try s.set(["owner": .text("Ada")])
        #expect(s.canContinue, "the hidden required return date does not hold Continue back")
        try s.set(["loan": .bool(true)])
        #expect(fieldIDs(s) == ["owner", "loan", "returnDate", "secret"], "the return date appears right below the toggle")
        #expect(s.currentStep().fields.first { $0.id == "returnDate" }?.required == true)
        #expect(s.canContinue == false, "shown, the return date is required")
        try s.set(["owner": .text("Ada Lovelace")])
        #expect(fieldIDs(s) == ["owner", "loan", "returnDate", "secret", "note"], "an expression condition")
        try s.set(["loan": .bool(false)])
        #expect(fieldIDs(s) == ["owner", "loan"])
        #expect(s.canContinue)
    }

    @Test("a hidden field is not validated, and its answer is kept while the person edits")
    func hiddenIsNotValidatedAndKept() throws {
        var s = try Fixture.session(Fixture.flow(Self.loanFlow))
        try s.set(["owner": .text("Ada"), "loan": .bool(true), "returnDate": .text("2025-07-01")])
        try s.set(["loan": .bool(false)])
        // Hidden: a wrong value is not an error, and Continue is not held back.
        try s.set(["returnDate": .text("not a date")])
        #expect(s.currentErrors().isEmpty)
        try s.set(["returnDate": .text("2025-07-01")])
        try s.set(["loan": .bool(true)])
        #expect(s.currentStep().fields.first { $0.id == "returnDate" }?.value == .text("2025-07-01"), "it comes back")
        #expect(s.currentErrors().isEmpty)
    }

    @Test("a hidden field's answer is left out of conditions, Review, answers, plugin contexts and the submission")
    func hiddenIsLeftOutEverywhere() throws {
        var s = try Fixture.session(Fixture.flow(Self.loanFlow))
        try s.set(["owner": .text("Ada Lovelace"), "loan": .bool(true), "returnDate": .text("2025-07-01"),
                   "secret": .text("1234"), "note": .text("careful")])
        #expect(s.route().map { s.flow.steps[$0].id } == ["handover", "loanTerms", "confirm"])
        try s.set(["loan": .bool(false)])
        // The next rule reads the hidden return date as not given.
        #expect(s.route().map { s.flow.steps[$0].id } == ["handover", "confirm"])
        let completion = try #require(try s.next())
        #expect(completion.answers == ["owner": .text("Ada Lovelace"), "loan": .bool(false)])
        try s.set(["ok": .bool(true)])
        guard case .checking(let checks) = try s.continueStep(now: 3) else {
            Issue.record("expected the step validator")
            return
        }
        let context = try #require(checks.first?.context)
        #expect(context.answers == ["owner": .text("Ada Lovelace"), "loan": .bool(false), "ok": .bool(true)])
        guard case .step(let info) = try #require(checks.first).subject else { return }
        #expect(info.fields.map(\.id) == ["ok"])
        _ = s.applyPluginResults(checks.map { PluginCheckResult(check: $0, outcome: .accepted) })
        try s.next()
        #expect(s.currentStepID == "review")
        let review = s.review()
        #expect(review.groups.map(\.step) == ["handover", "confirm"])
        #expect(review.groups[0].answers.map(\.field) == ["owner", "loan"])
        #expect(s.answersOnPath(includeSecure: true) == ["owner": .text("Ada Lovelace"), "loan": .bool(false), "ok": .bool(true)])
        guard case .run(let request) = try s.beginSubmit(now: 5) else {
            Issue.record("expected the submit to run")
            return
        }
        #expect(request.submission.answers == ["owner": .text("Ada Lovelace"), "loan": .bool(false), "ok": .bool(true)])
        #expect(request.submission.secureAnswers.isEmpty, "the hidden secure answer is not submitted")
        #expect(request.context.answers["returnDate"] == nil)
        // Kept in the record all the same, as an abandoned branch's answers are.
        #expect(s.record.answers["returnDate"] == .text("2025-07-01"))
    }

    @Test("shown again, the field is validated and submitted")
    func shownIsSubmitted() throws {
        var s = try Fixture.session(Fixture.flow(Self.loanFlow))
        try s.set(["owner": .text("Ada"), "loan": .bool(true), "secret": .text("1234")])
        #expect(try s.continueStep(now: 2).stayedErrors == ["returnDate": "This field is required."])
        try s.set(["returnDate": .text("2025-07-01")])
        try s.next()
        #expect(s.currentStepID == "loanTerms")
        try s.set(["terms": .bool(true)])
        try s.next()
        try s.set(["ok": .bool(true)])
        if case .checking(let checks) = try s.continueStep(now: 3) {
            _ = s.applyPluginResults(checks.map { PluginCheckResult(check: $0, outcome: .accepted) })
        }
        try s.next()
        guard case .run(let request) = try s.beginSubmit(now: 5) else { return }
        #expect(request.submission.answers["returnDate"] == .text("2025-07-01"))
        #expect(request.submission.secureAnswers == ["secret": "1234"])
    }

    @Test("the shipped device enrolment: the return date appears only for a loan")
    func deviceEnrolment() throws {
        var s = try Fixture.session(Fixture.example("device-enrolment"), locale: "de")
        _ = s.applyPluginResults(try s.setAnswers(["hostname": .text("ws-berlin-042"), "role": .text("laptop")], now: 1).checks
            .map { PluginCheckResult(check: $0, outcome: .accepted) })
        try s.next()
        #expect(fieldIDs(s) == ["ownerEmail", "handoverDate", "loan"])
        try s.set(["loan": .bool(true)])
        let returnDate = try #require(s.currentStep().fields.last)
        #expect(returnDate.id == "returnDate" && returnDate.label == "Rückgabedatum" && returnDate.required)
    }

    @Test("lint: a visibleIf reads fields above it and earlier steps, never itself, a later field or a secure one")
    func lint() {
        func problems(_ condition: String) -> [String] {
            Fixture.problems(#"""
                {"format": 2, "id": "t", "title": "T", "steps": [
                  {"id": "a", "title": "A", "fields": [{"id": "pin", "type": "secure", "label": "PIN"}]},
                  {"id": "b", "title": "B", "fields": [
                    {"id": "x", "type": "toggle", "label": "X"},
                    {"id": "y", "type": "text", "label": "Y", "visibleIf": \#(condition)},
                    {"id": "z", "type": "toggle", "label": "Z"}]},
                  {"id": "c", "title": "C", "fields": [{"id": "later", "type": "toggle", "label": "L"}]}]}
                """#).map(\.description)
        }
        #expect(problems(#"{"field": "x", "equals": true}"#).isEmpty)
        #expect(problems(#"{"field": "z", "equals": true}"#) == [#"bad.json: steps[1].fields[1].visibleIf.field: "z" comes after this field on its step; a field's visibleIf and expr can read the fields above it and earlier steps"#])
        #expect(problems(#"{"field": "y", "notEmpty": true}"#) == ["bad.json: steps[1].fields[1].visibleIf.field: a field cannot depend on itself"])
        #expect(problems(#"{"any": [{"field": "x", "equals": true}, {"field": "later", "equals": true}]}"#)
            == [#"bad.json: steps[1].fields[1].visibleIf.any[1].field: "later" is on the later step "c"; a condition can read this step's fields and earlier ones"#])
        #expect(problems(#"{"field": "pin", "notEmpty": true}"#).first?.contains("cannot read the secure field \"pin\"") == true)
        #expect(problems(#"{"expr": "z"}"#).first?.contains("at position 1: \"z\" comes after this field") == true)
        #expect(problems(#"{"field": "x", "equals": "yes"}"#).first?.contains("compare it with a boolean") == true)
    }
}

extension ContinueOutcome {
    /// The errors when Continue stayed; nil otherwise.
    var stayedErrors: FieldErrors? {
        if case .stayed(let e) = self { return e }
        return nil
    }
}
