import FlowKit
import Foundation
import Testing

@testable import FlowEngine

/// Warnings: shown with the field or the step, never stopping Continue,
/// apart from the errors, announced once.
@Suite struct WarningTests {
    static let flow = #"""
        {"format": 2, "id": "w", "title": "W", "steps": [
          {"id": "contact", "title": "Contact", "fields": [
            {"id": "callback", "type": "toggle", "label": "Call me back"},
            {"id": "phone", "type": "text", "label": "Phone"},
            {"id": "user", "type": "text", "label": "User name", "required": true,
             "validators": [{"plugin": "t.user"}, {"plugin": "t.strict", "level": "warning", "message": "Unusual; check it."}]}],
           "rules": [
             {"requiredIf": "phone", "if": {"field": "callback", "equals": true}, "level": "warning",
              "message": {"en": "Without a phone number we cannot call you back.", "de": "Ohne Telefonnummer können wir nicht zurückrufen."}},
             {"plugin": "t.step"}]},
          {"id": "done", "title": "Done", "kind": "content"}]}
        """#

    /// Sets answers and runs the plugin checks they ask for with `validator`.
    func set(_ s: inout FlowSession, _ answers: [String: AnswerValue], _ validator: FakeValidator) async throws -> FieldErrors {
        try await s.setAnswers(answers, now: 1, validating: validator)
    }

    @Test("a rule of level warning: shown with its field, not an error, never gating Continue, announced once")
    func ruleWarning() async throws {
        var s = try Fixture.session(Fixture.flow(Self.flow), locale: "de")
        let plugins = FakeValidator()
        #expect(try await set(&s, ["user": .text("ada")], plugins).isEmpty)
        let before = s.announcementSequence
        let errors = try await set(&s, ["callback": .bool(true)], plugins)
        #expect(errors.isEmpty, "a warning is not an error")
        let page = s.currentStep()
        #expect(page.fields.first { $0.id == "phone" }?.warning == "Ohne Telefonnummer können wir nicht zurückrufen.")
        #expect(page.fields.first { $0.id == "phone" }?.error == "")
        #expect(s.canContinue)
        #expect(s.announcementSequence == before + 1)
        #expect(s.announcement == "Ohne Telefonnummer können wir nicht zurückrufen.")
        // The same warning is not said again.
        _ = try await set(&s, ["user": .text("ada2")], plugins)
        #expect(s.announcementSequence == before + 1)
        // Gone and back: said again.
        _ = try await set(&s, ["phone": .text("123")], plugins)
        #expect(s.currentStep().fields.first { $0.id == "phone" }?.warning == "")
        _ = try await set(&s, ["phone": .text("")], plugins)
        #expect(s.announcementSequence == before + 2)
        // Continue goes on over the warning.
        await plugins.setStep(issues: [], throws: false)
        guard case .moved = try await s.continueStep(now: 5, validating: plugins) else {
            Issue.record("a warning held Continue back")
            return
        }
        #expect(s.currentStepID == "done")
    }

    @Test("a rule of level warning is no rule to follow: no worded hint up front, only a hint of its own")
    func warningHints() throws {
        let flow = #"""
            {"format": 2, "id": "h", "title": "H", "steps": [{"id": "s", "title": "S", "fields": [
              {"id": "pages", "type": "number", "label": "Pages"},
              {"id": "later", "type": "number", "label": "Later"},
              {"id": "max", "type": "number", "label": "Most"},
              {"id": "phone", "type": "text", "label": "Phone"}],
             "rules": [
              {"before": ["later", "pages"], "level": "warning", "message": "More later than now?"},
              {"before": ["pages", "max"]},
              {"requiredIf": "phone", "if": {"field": "pages", "notEmpty": true}, "level": "warning",
               "hint": "Best given for a call back", "message": "No phone?"}]}]}
            """#
        let page = try Fixture.session(Fixture.flow(flow)).currentStep()
        func hints(_ id: String) -> [String] { page.fields.first { $0.id == id }?.ruleHints.map(\.text) ?? ["no field \(id)"] }
        #expect(hints("later") == [], "a warning said up front as if it were a rule")
        #expect(hints("pages") == ["Must be less than Most"], "a rule of level error still says itself")
        #expect(hints("phone") == ["Best given for a call back"], "the flow's own hint for a warning is said")
    }

    @Test("plugins warn: a field validator's warning, a validator of level warning, a step validator's warning issues")
    func pluginWarnings() async throws {
        var s = try Fixture.session(Fixture.flow(Self.flow))
        let plugins = FakeValidator()
        #expect(try await set(&s, ["user": .text("admin")], plugins).isEmpty, "the plugin warned; it did not refuse")
        #expect(s.currentStep().fields.first { $0.id == "user" }?.warning == "Admin is a shared name; are you sure?")
        #expect(s.announcement == "Admin is a shared name; are you sure?")
        // A validator of level warning turns its refusal into a warning with the flow's message.
        #expect(try await set(&s, ["user": .text("taken")], plugins) == ["user": "That name is taken."], "t.user still refuses")
        // A step validator's issues of level warning go with the field, or the step.
        #expect(try await set(&s, ["user": .text("ada")], plugins).isEmpty)
        await plugins.setStep(issues: [ValidationIssue(field: "phone", message: "Is that a mobile?", level: .warning),
                                       ValidationIssue(field: nil, message: "We are closed on Sundays.", level: .warning)],
                              throws: false)
        #expect(try await s.continueStep(now: 3, validating: plugins).stayedErrors == nil, "warnings never stop Continue")
        #expect(s.currentStepID == "done")
        try s.back(now: 4)
        // Back on the step, its warnings of the last Continue hold for the answers they were made for.
        let page = s.currentStep()
        #expect(page.warning == "We are closed on Sundays.")
        #expect(page.fields.first { $0.id == "phone" }?.warning == "Is that a mobile?")
        #expect(page.error == "")
    }

    @Test("a validator of level warning: its refusal is a warning, and its failure is no error")
    func warningLevelValidator() async throws {
        let flow = try Fixture.flow(#"""
            {"format": 2, "id": "w", "title": "W", "steps": [{"id": "a", "title": "A", "fields": [
              {"id": "user", "type": "text", "label": "User", "validators": [{"plugin": "t.user", "level": "warning", "message": "Check this name."}]}]}]}
            """#)
        var s = try Fixture.session(flow)
        let plugins = FakeValidator()
        #expect(try await set(&s, ["user": .text("taken")], plugins).isEmpty)
        #expect(s.currentStep().fields[0].warning == "Check this name.")
        #expect(try await set(&s, ["user": .text("boom")], plugins).isEmpty, "a warning that could not be checked is none")
        #expect(s.currentStep().fields[0].warning == "")
        #expect(s.canContinue)
    }

    @Test("the record keeps step warnings and what was announced, and older records read as none")
    func persistence() throws {
        var record = RecordJSONTests.minimalRecord()
        record.stepMessages = ["a": SessionRecord.StepMessages(revision: 2, messages: [:], warnings: ["": "Closed on Sundays."])]
        record.announcedWarnings = ["phone": "Without a phone number we cannot call you back."]
        let decoded = try JSONDecoder().decode(SessionRecord.self, from: Data(try record.encodedJSON()))
        #expect(decoded == record)
        let old = #"{"revision": 1, "messages": {"": "x"}}"#
        let messages = try JSONDecoder().decode(SessionRecord.StepMessages.self, from: Data(old.utf8))
        #expect(messages.warnings.isEmpty && messages.messages == ["": "x"])
    }
}
