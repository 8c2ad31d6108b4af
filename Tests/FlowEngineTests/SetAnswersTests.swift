import FlowKit
import Testing

@testable import FlowEngine

@Suite struct SetAnswersTests {
    let flowJSON = #"""
    {"format": 1, "id": "types", "title": "Types", "steps": [
      {"id": "one", "title": "One", "fields": [
        {"id": "text", "type": "text", "label": "Text"},
        {"id": "num", "type": "number", "label": "Num"},
        {"id": "flag", "type": "toggle", "label": "Flag"},
        {"id": "pick", "type": "choice", "label": "Pick", "options": [{"id": "a", "label": "A"}], "other": true},
        {"id": "many", "type": "multichoice", "label": "Many", "options": [{"id": "a", "label": "A"}, {"id": "b", "label": "B"}]},
        {"id": "when", "type": "date", "label": "When"}]},
      {"id": "two", "title": "Two", "fields": [{"id": "later", "type": "text", "label": "Later"}]}],
     "review": {}}
    """#

    func session() throws -> FlowSession { try Fixture.session(Fixture.flow(flowJSON)) }

    func expectInvalidArgs(_ answers: [String: AnswerValue], _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        var s = try session()
        let before = s.record
        do {
            _ = try s.setAnswers(answers, now: 9)
            Issue.record("accepted \(answers)", sourceLocation: sourceLocation)
        } catch {
            #expect(error.kind == .invalidArgs, sourceLocation: sourceLocation)
            #expect(error.message.contains(fragment), "\(error.message)", sourceLocation: sourceLocation)
        }
        #expect(s.record == before, "a refused call changed the session", sourceLocation: sourceLocation)
    }

    @Test func refusesFieldsOffTheCurrentStep() throws {
        try expectInvalidArgs(["later": .text("x")], "not a field of the current step \"one\"")
        try expectInvalidArgs(["nope": .text("x")], "not a field")
        try expectInvalidArgs(["text.other": .text("x")], "not a field")
        // All or nothing: one bad key refuses the good ones too.
        try expectInvalidArgs(["text": .text("ok"), "later": .text("x")], "later")
    }

    @Test func refusesWrongValueTypes() throws {
        try expectInvalidArgs(["text": .integer(1)], "takes a string")
        try expectInvalidArgs(["num": .text("3")], "takes a number")
        try expectInvalidArgs(["num": .number(.nan)], "finite")
        try expectInvalidArgs(["flag": .text("true")], "takes a boolean")
        try expectInvalidArgs(["many": .text("a")], "array of option ids")
        try expectInvalidArgs(["pick.other": .bool(true)], "takes a string")
    }

    @Test func refusesUnknownOrRepeatedOptionIDs() throws {
        try expectInvalidArgs(["pick": .text("b")], "\"b\" is not an option of \"pick\"")
        try expectInvalidArgs(["many": .list(["a", "other"])], "\"other\" is not an option")
        try expectInvalidArgs(["many": .list(["a", "a"])], "listed twice")
    }

    @Test func acceptsWidenedNumbersAndClearsWithEmptyValues() throws {
        var s = try session()
        try s.set(["num": .number(4.0), "text": .text("hi"), "many": .list(["b"]), "pick": .text("other"), "pick.other": .text("Mine")])
        #expect(s.record.answers["num"] == .integer(4))
        try s.set(["num": .number(4.25)])
        #expect(s.record.answers["num"] == .number(4.25))
        try s.set(["text": .text(""), "many": .list([])])
        #expect(s.record.answers["text"] == nil)
        #expect(s.record.answers["many"] == nil)
        // An empty string or empty list clears any type of field (the contract),
        // so a client need not know the field's type to clear it.
        try s.set(["flag": .bool(true), "when": .text("2030-01-02")])
        try s.set(["num": .text(""), "flag": .text(""), "when": .list([]), "many": .text("")])
        #expect(s.record.answers["num"] == nil)
        #expect(s.record.answers["flag"] == nil)
        #expect(s.record.answers["when"] == nil)
        let view = s.currentStep()
        #expect(view.fields[3].value == .text("other"))
        #expect(view.fields[3].otherText == "Mine")
        #expect(view.fields[3].otherLabel == "Other")
        #expect(view.fields[3].options == [ChoiceOption(id: "a", label: "A")])
        #expect(view.fields[4].hint == "Select all that apply")
        #expect(view.fields[0].isSet == false)
        #expect(s.answersOnPath(includeSecure: false)["pick.other"] == .text("Mine"))
        // Switching away from Other keeps its text but leaves it out of the answers.
        try s.set(["pick": .text("a")])
        #expect(s.answersOnPath(includeSecure: false)["pick.other"] == nil)
        #expect(s.record.answers["pick.other"] == .text("Mine"))
    }

    @Test func onReviewThereAreNoFields() throws {
        var s = try session()
        try s.next()
        try s.next()
        #expect(s.currentStepID == "review")
        #expect(try s.setAnswers([:], now: 1).errors.isEmpty)
        #expect(throws: SessionError.self) { try s.setAnswers(["later": .text("x")], now: 1) }
    }

    @Test func fieldViewsCarryConstraints() throws {
        let flow = try Fixture.flow(Fixture.wrap(#"{"id": "s", "title": "S", "description": "Desc", "fields": [{"id": "d", "type": "date", "label": "D", "help": "Help", "placeholder": "YYYY-MM-DD", "required": true, "after": "today", "before": "2030-01-01"}, {"id": "t", "type": "text", "label": "T", "minLength": 2, "maxLength": 9}]}"#))
        let view = try Fixture.session(flow).currentStep()
        #expect(view.kind == .form)
        #expect(view.description == "Desc")
        #expect(view.fields[0].after == "2025-06-15")
        #expect(view.fields[0].before == "2030-01-01")
        #expect(view.fields[0].help == "Help")
        #expect(view.fields[0].placeholder == "YYYY-MM-DD")
        #expect(view.fields[0].required)
        #expect(view.fields[1].minLength == 2)
        #expect(view.fields[1].maxLength == 9)
        #expect((view.index, view.count) == (1, 1))
    }
}

@Suite struct StartTests {
    @Test func prefillAndProviderOptions() throws {
        let flow = try Fixture.example("consultation")
        var s = try Fixture.session(flow, prefill: ["name": .text("Ada Lovelace")],
                                    options: ["day": weekdayOptions, "time": slotOptions])
        #expect(s.record.answers["name"] == .text("Ada Lovelace"))
        try s.set(["service": .text("branding")])
        try s.next()
        let view = s.currentStep()
        #expect(view.id == "when")
        #expect(view.fields[0].options == weekdayOptions)
        #expect(throws: SessionError.self) { try s.setAnswers(["day": .text("2099-01-01")], now: 1) }
        try s.set(["day": .text("2025-06-17"), "time": .text("09:30")])
        try s.next()
        #expect(s.currentStep().fields[0].value == .text("Ada Lovelace"))
        try s.set(["email": .text("ada@example.org")])
        try s.next()
        let review = s.review()
        #expect(review.groups[1].answers.map(\.display) == ["Tuesday 17 June", "09:30"])
        #expect(review.submitLabel == "Book")
    }

    @Test func badStartArgumentsAreRefused() throws {
        let flow = try Fixture.example("consultation")
        #expect(throws: SessionError.self) { try Fixture.session(flow, prefill: ["name": .integer(3)]) }
        #expect(throws: SessionError.self) { try Fixture.session(flow, prefill: ["nobody": .text("x")]) }
        #expect(throws: SessionError.self) { try Fixture.session(flow, locale: "not a locale") }
        #expect(throws: SessionError.self) { try Fixture.session(flow, options: ["service": weekdayOptions]) }
        #expect(throws: SessionError.self) { try Fixture.session(flow, options: ["day": [ChoiceOption(id: "other", label: "x")]]) }
        #expect(throws: SessionError.self) {
            try Fixture.session(flow, options: ["day": [ChoiceOption(id: "a", label: "x"), ChoiceOption(id: "a", label: "y")]])
        }
        let many = (0..<501).map { ChoiceOption(id: "o\($0)", label: "x") }
        do {
            _ = try FlowSession(flow: flow, id: "x", owner: 1, locale: "en", clock: TestClock(), dynamicOptions: ["day": many])
            Issue.record("accepted 501 options")
        } catch {
            #expect(error.kind == .limitExceeded)
        }
        #expect(try Fixture.session(flow, locale: "pt_BR").record.locale == "pt-BR")
    }

    @Test func aRequiredChoiceWithoutOptionsSaysSo() throws {
        var s = try Fixture.session(Fixture.example("consultation"))
        try s.set(["service": .text("app")])
        try s.next()
        guard case .stayed(let errors) = try s.continueStep(now: 3) else {
            Issue.record("moved without options")
            return
        }
        #expect(errors["day"] == "No options are available right now.")
    }
}
