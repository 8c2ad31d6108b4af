import FlowKit
import Foundation
import Testing

@testable import FlowEngine

@Suite struct ExampleFlowTests {
    @Test(arguments: Fixture.exampleNames)
    func exampleFlowsLintClean(name: String) throws {
        // Loaded against the shipped plugins only: a capability they lack is refused.
        let flow = try Fixture.example(name)
        #expect(flow.id == name)
        #expect(!flow.steps.isEmpty)
    }

    @Test func examplesUseTheAgreedPlugins() throws {
        let consultation = try Fixture.example("consultation")
        let requests = consultation.providerRequests(locale: "de")
        #expect(requests.map(\.provider.name) == ["flowd.weekdays", "flowd.time-slots", "flowd.real-name"])
        #expect(requests[0].provider.options["count"] == .number(5))
        #expect(requests[0].field.label == "Tag")
        #expect(requests[1].provider.options["start"] == .string("09:00"))
        #expect(consultation.submit?.action == "flowd.spool")
        #expect(consultation.review?.note != nil)
        #expect(consultation.locales == ["en", "de", "fr"])
        let registration = try Fixture.example("registration")
        #expect(registration.field("username")?.validators.map(\.name) == ["flowd.username-available"])
        #expect(registration.submit?.action == "flowd.spool")
        let onboarding = try Fixture.example("onboarding")
        #expect(onboarding.submit?.action == "flowd.spool")
        // It needs no other plugin: it loads with the spool alone.
        _ = try FlowLoader.load(
            Fixture.exampleBytes("onboarding"), fileName: "onboarding.json",
            capabilities: CapabilityCatalog([(.submitAction, "flowd.spool")]))
        #expect(!onboarding.hasReview)
        let survey = try Fixture.example("survey")
        #expect(survey.steps.first?.kind == .content)
        #expect(survey.field("heardFrom")?.other == true)
    }

    @Test func aFlowMissingAPluginIsRefused() throws {
        let bytes = try Fixture.exampleBytes("consultation")
        let noPlugins = CapabilityCatalog([(.submitAction, "flowd.spool")])
        do {
            _ = try FlowLoader.load(bytes, fileName: "consultation.json", capabilities: noPlugins)
            Issue.record("loaded without its providers")
        } catch {
            let text = error.description
            #expect(text.contains("consultation.json: steps[2].fields[0].optionsFrom.provider: no loaded plugin provides the options provider \"flowd.weekdays\""))
            #expect(text.contains("flowd.real-name"))
        }
    }

    @Test func flowDefinitionIsCodableAsItsDocument() throws {
        let flow = try Fixture.example("consultation")
        let data = try JSONEncoder().encode(flow)
        let back = try JSONDecoder().decode(FlowDefinition.self, from: data)
        #expect(back.id == flow.id)
        #expect(back.steps.map(\.id) == flow.steps.map(\.id))
        #expect(back.steps[0].fields[0].options.map(\.id) == flow.steps[0].fields[0].options.map(\.id))
        // A bad document does not decode.
        let bad = Data(#"{"format": 1, "id": "x", "title": "X", "steps": [], "extra": 1}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(FlowDefinition.self, from: bad) }
    }

    @Test("authorization: a polkit action id is kept; none means anyone may start the flow")
    func authorizationIsKept() throws {
        let step = #"{"id": "a", "title": "A", "kind": "content"}"#
        #expect(try Fixture.flow(Fixture.wrap(step)).authorization == nil)
        let guarded = try Fixture.flow(Fixture.wrap(step, extra: #""authorization": "org.example.enrol-device""#))
        #expect(guarded.authorization?.id == "org.example.enrol-device")
        let flowd = try Fixture.flow(Fixture.wrap(step, extra: #""authorization": "org.flowd.Flow1.start""#))
        #expect(flowd.authorization == .start)
        // It survives the Codable round trip (the document is loaded again).
        let again = try JSONDecoder().decode(FlowDefinition.self, from: JSONEncoder().encode(guarded))
        #expect(again.authorization == guarded.authorization)
    }

    @Test("authorization: anything but the form of a polkit action id is a lint problem at its key")
    func authorizationForm() {
        let step = #"{"id": "a", "title": "A", "kind": "content"}"#
        for bad in [#""enrol""#, #""org..x""#, #""org.example.enrol device""#, #""-org.x""#, #""""#, "3", "[]"] {
            let problems = Fixture.problems(Fixture.wrap(step, extra: #""authorization": \#(bad)"#))
            #expect(problems.count == 1 && problems.first?.path.contains("authorization") == true,
                    "\(bad): \(problems.map(\.description))")
        }
        let problems = Fixture.problems(Fixture.wrap(step, extra: #""authorization": "org..x""#))
        #expect(problems.first?.message.contains("is not a polkit action id") == true, "\(problems.map(\.description))")
    }

    @Test func localesAreCollectedOrDeclared() throws {
        let plain = try Fixture.flow(Fixture.wrap(#"{"id": "a", "title": "A", "kind": "content"}"#))
        #expect(plain.locales == ["en"])
        let declared = try Fixture.flow(Fixture.wrap(#"{"id": "a", "title": "A", "kind": "content"}"#, extra: #""locales": ["de", "en"]"#))
        #expect(declared.locales == ["de", "en"])
    }
}

@Suite struct LintTests {
    /// Asserts exactly one problem at `path` whose message contains `fragment`.
    func expectProblem(_ json: String, at path: String, _ fragment: String, capabilities: CapabilityCatalog = .any,
                       sourceLocation: SourceLocation = #_sourceLocation) {
        let problems = Fixture.problems(json, capabilities: capabilities)
        #expect(problems.contains { $0.path == path && $0.message.contains(fragment) },
                "expected \(path): …\(fragment)…, got:\n\(problems.map(\.description).joined(separator: "\n"))",
                sourceLocation: sourceLocation)
    }

    let field = #"{"id": "f", "type": "text", "label": "F"}"#

    @Test func problemsReadFileColonPathColonMessage() throws {
        let problems = Fixture.problems(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "x", "type": "emial", "label": "X"}]}"#))
        let p = try #require(problems.first)
        #expect(p.description == #"bad.json: steps[0].fields[0].type: unknown type "emial" (did you mean "email"? expected one of text, multiline, secure, email, number, date, time, toggle, choice, multichoice, computed)"#)
    }

    @Test func unknownKeysAreErrorsWithASuggestion() {
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "x", "type": "text", "label": "X", "requried": true}]}"#),
                      at: "steps[0].fields[0].requried", "did you mean \"required\"")
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "kind": "content", "tilte": "x"}"#),
                      at: "steps[0].tilte", "unknown key")
        expectProblem(#"{"format": 1, "id": "t", "title": "T", "steps": [], "colour": "red"}"#, at: "colour", "unknown key")
    }

    @Test func wrongTypesAreNamed() {
        expectProblem(#"{"format": 1, "id": "t", "title": 5, "steps": []}"#, at: "title", "got a number")
        expectProblem(#"{"format": 1, "id": "t", "title": "T", "steps": {}}"#, at: "steps", "expected the list of steps (an array), got an object")
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "x", "type": "text", "label": "X", "required": "yes"}]}"#),
                      at: "steps[0].fields[0].required", "expected true or false")
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "x", "type": "text", "label": "X", "minLength": 2.5}]}"#),
                      at: "steps[0].fields[0].minLength", "fraction")
        expectProblem("[1, 2]", at: "$", "expected a flow definition (an object)")
    }

    @Test func formatIsRequiredAndMustBeOneOrTwo() {
        expectProblem(#"{"id": "t", "title": "T", "steps": []}"#, at: "$", "missing required key \"format\"")
        expectProblem(#"{"format": 3, "id": "t", "title": "T", "steps": []}"#, at: "format", "unsupported format 3 (this flowd reads formats 1 to 2)")
        expectProblem(#"{"format": 0, "id": "t", "title": "T", "steps": []}"#, at: "format", "unsupported format 0")
    }

    @Test func keysThatDoNotFitTheFieldType() {
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "x", "type": "number", "label": "X", "maxLength": 3}]}"#),
                      at: "steps[0].fields[0].maxLength", "applies only to text, multiline, secure and email fields, not to a number field")
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "x", "type": "toggle", "label": "X", "required": true}]}"#),
                      at: "steps[0].fields[0].required", "mustBeOn")
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "kind": "content", "fields": []}"#),
                      at: "steps[0].fields", "a content step has no fields")
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "body": "x", "fields": [\#(field)]}"#),
                      at: "steps[0].body", "applies only to content steps")
    }

    @Test func duplicateStepIDs() {
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "kind": "content"}, {"id": "a", "title": "B", "kind": "content"}"#),
                      at: "steps[1].id", "duplicate step id \"a\" (first used at steps[0].id)")
    }

    @Test func duplicateFieldIDsAcrossTheFlow() {
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [\#(field)]}, {"id": "b", "title": "B", "fields": [\#(field)]}"#),
                      at: "steps[1].fields[0].id", "duplicate field id \"f\" (first used at steps[0].fields[0].id)")
    }

    @Test func duplicateJSONKeys() {
        expectProblem(#"{"format": 1, "id": "t", "id": "u", "title": "T", "steps": []}"#, at: "id", "more than once")
    }

    @Test func nextTargetsMustBeKnownAndLater() {
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "kind": "content", "next": [{"goto": "nowhere"}]}"#),
                      at: "steps[0].next[0].goto", "unknown step \"nowhere\"")
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "kind": "content"}, {"id": "b", "title": "B", "kind": "content", "next": "a"}"#),
                      at: "steps[1].next", "backwards")
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "kind": "content", "next": [{"goto": "a"}]}"#),
                      at: "steps[0].next[0].goto", "cycle")
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "kind": "content", "next": "review"}"#),
                      at: "steps[0].next", "has no review page")
    }

    @Test func nextListsNeedADefaultLast() {
        let steps = #"{"id": "a", "title": "A", "fields": [\#(field)], "next": [{"if": {"field": "f", "notEmpty": true}, "goto": "b"}]}, {"id": "b", "title": "B", "kind": "content"}"#
        expectProblem(Fixture.wrap(steps), at: "steps[0].next", "no default")
        let afterDefault = #"{"id": "a", "title": "A", "fields": [\#(field)], "next": [{"goto": "b"}, {"if": {"field": "f", "notEmpty": true}, "goto": "b"}]}, {"id": "b", "title": "B", "kind": "content"}"#
        expectProblem(Fixture.wrap(afterDefault), at: "steps[0].next[1]", "can never apply")
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "kind": "content", "next": []}"#), at: "steps[0].next", "empty")
    }

    @Test func unreachableSteps() {
        let steps = #"{"id": "a", "title": "A", "kind": "content", "next": "c"}, {"id": "b", "title": "B", "kind": "content"}, {"id": "c", "title": "C", "kind": "content"}"#
        expectProblem(Fixture.wrap(steps), at: "steps[1]", "can never be reached")
    }

    @Test func conditionsOnUnknownLaterOrSecureFields() {
        let unknown = #"{"id": "a", "title": "A", "fields": [\#(field)], "next": [{"if": {"field": "g", "notEmpty": true}, "goto": "b"}, {"goto": "b"}]}, {"id": "b", "title": "B", "kind": "content"}"#
        expectProblem(Fixture.wrap(unknown), at: "steps[0].next[0].if.field", "unknown field \"g\"")
        let later = #"{"id": "a", "title": "A", "kind": "content", "next": [{"if": {"field": "f", "notEmpty": true}, "goto": "b"}, {"goto": "b"}]}, {"id": "b", "title": "B", "fields": [\#(field)]}"#
        expectProblem(Fixture.wrap(later), at: "steps[0].next[0].if.field", "later step")
        let secure = #"{"id": "a", "title": "A", "fields": [{"id": "p", "type": "secure", "label": "P"}], "next": [{"if": {"not": {"field": "p", "notEmpty": true}}, "goto": "b"}, {"goto": "b"}]}, {"id": "b", "title": "B", "kind": "content"}"#
        expectProblem(Fixture.wrap(secure), at: "steps[0].next[0].if.not.field", "secure field")
    }

    @Test func equalsValuesMustBeOptionsAndFitTheType() {
        let choice = #"{"id": "a", "title": "A", "fields": [{"id": "c", "type": "choice", "label": "C", "options": [{"id": "web", "label": "Web"}]}], "next": [{"if": {"field": "c", "equals": "wbe"}, "goto": "b"}, {"goto": "b"}]}, {"id": "b", "title": "B", "kind": "content"}"#
        expectProblem(Fixture.wrap(choice), at: "steps[0].next[0].if.equals", "\"wbe\" is not an option of \"c\" (did you mean \"web\"?")
        let inList = #"{"id": "a", "title": "A", "fields": [{"id": "c", "type": "choice", "label": "C", "options": [{"id": "web", "label": "Web"}]}], "next": [{"if": {"any": [{"field": "c", "in": ["web", "app"]}]}, "goto": "b"}, {"goto": "b"}]}, {"id": "b", "title": "B", "kind": "content"}"#
        expectProblem(Fixture.wrap(inList), at: "steps[0].next[0].if.any[0].in[1]", "\"app\" is not an option")
        let toggle = #"{"id": "a", "title": "A", "fields": [{"id": "t", "type": "toggle", "label": "T"}], "next": [{"if": {"field": "t", "equals": "yes"}, "goto": "b"}, {"goto": "b"}]}, {"id": "b", "title": "B", "kind": "content"}"#
        expectProblem(Fixture.wrap(toggle), at: "steps[0].next[0].if.equals", "compare it with a boolean")
    }

    @Test func malformedConditions() {
        let both = #"{"id": "a", "title": "A", "fields": [\#(field)], "next": [{"if": {"field": "f", "equals": "x", "notEmpty": true}, "goto": "b"}, {"goto": "b"}]}, {"id": "b", "title": "B", "kind": "content"}"#
        expectProblem(Fixture.wrap(both), at: "steps[0].next[0].if", "exactly one of equals, in or notEmpty")
        let empty = #"{"id": "a", "title": "A", "fields": [\#(field)], "next": [{"if": {"all": []}, "goto": "b"}, {"goto": "b"}]}, {"id": "b", "title": "B", "kind": "content"}"#
        expectProblem(Fixture.wrap(empty), at: "steps[0].next[0].if.all", "empty")
    }

    @Test func rulesThatReferenceMissingOrMisplacedFields() {
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [\#(field)], "rules": [{"equals": ["f", "g"]}]}"#),
                      at: "steps[0].rules[0].equals[1]", "unknown field \"g\"")
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [\#(field)], "rules": [{"requiredIf": "nope", "if": {"field": "f", "notEmpty": true}}]}"#),
                      at: "steps[0].rules[0].requiredIf", "unknown field \"nope\"")
        let twoSteps = #"{"id": "a", "title": "A", "fields": [\#(field)], "rules": [{"equals": ["f", "g"]}]}, {"id": "b", "title": "B", "fields": [{"id": "g", "type": "text", "label": "G"}]}"#
        expectProblem(Fixture.wrap(twoSteps), at: "steps[0].rules[0].equals[1]", "must be on this step")
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [\#(field)], "rules": [{"equals": ["f", "f"]}]}"#),
                      at: "steps[0].rules[0].equals", "with itself")
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [\#(field)], "rules": [{"equals": ["f"], "plugin": "x.y"}]}"#),
                      at: "steps[0].rules[0]", "exactly one of")
    }

    @Test func ruleOperandTypesMustFit() {
        let fields = #"[{"id": "n", "type": "number", "label": "N"}, {"id": "d", "type": "date", "label": "D"}, {"id": "t", "type": "text", "label": "T"}, {"id": "o", "type": "toggle", "label": "O"}]"#
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": \#(fields), "rules": [{"before": ["n", "d"]}]}"#),
                      at: "steps[0].rules[0].before", "two date, two time or two number")
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": \#(fields), "rules": [{"equals": ["n", "t"]}]}"#),
                      at: "steps[0].rules[0].equals", "cannot compare a number field with a text field")
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": \#(fields), "rules": [{"requiredIf": "o", "if": {"field": "t", "notEmpty": true}}]}"#),
                      at: "steps[0].rules[0].requiredIf", "toggle")
    }

    @Test func emptyOptionListsAndReservedIDs() {
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "c", "type": "choice", "label": "C", "options": []}]}"#),
                      at: "steps[0].fields[0].options", "the option list is empty")
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "c", "type": "choice", "label": "C"}]}"#),
                      at: "steps[0].fields[0]", "needs \"options\" or \"optionsFrom\"")
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "c", "type": "choice", "label": "C", "options": [{"id": "other", "label": "O"}]}]}"#),
                      at: "steps[0].fields[0].options[0].id", "reserved")
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "c", "type": "choice", "label": "C", "options": [{"id": "x", "label": "X"}, {"id": "x", "label": "Y"}]}]}"#),
                      at: "steps[0].fields[0].options[1].id", "duplicate option id")
    }

    @Test("option ids are letters, digits, - and _ in any order: a rating scale and time slots load")
    func optionIDsMayStartWithADigit() throws {
        let rating = (1...5).map { #"{"id": "\#($0)", "label": "\#($0)"}"# }.joined(separator: ", ")
        let flow = try Fixture.flow(Fixture.wrap(#"""
            {"id": "a", "title": "A", "fields": [
              {"id": "rating", "type": "choice", "label": "Rating", "options": [\#(rating)]},
              {"id": "slot", "type": "choice", "label": "Slot", "options": [{"id": "09", "label": "9:00"}, {"id": "11", "label": "11:00"}, {"id": "_late-1", "label": "Late"}]}],
             "next": [{"if": {"field": "slot", "equals": "09"}, "goto": "b"}, {"goto": "b"}]},
            {"id": "b", "title": "B", "kind": "content"}
            """#))
        #expect(flow.field("rating")?.options.map(\.id) == ["1", "2", "3", "4", "5"])
        var s = try Fixture.session(flow)
        #expect(try s.set(["rating": .text("4"), "slot": .text("09")]) == [:])
        #expect(s.review().groups[0].answers.map(\.display) == ["4", "9:00"])
        for bad in ["", " ", "9 am", "0.5", "é", "a/b"] {
            let problems = Fixture.problems(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "c", "type": "choice", "label": "C", "options": [{"id": "\#(bad)", "label": "X"}]}]}"#))
            #expect(problems.count == 1 && problems[0].path == "steps[0].fields[0].options[0].id", "\(bad): \(problems)")
        }
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "c", "type": "choice", "label": "C", "options": [{"id": "a b", "label": "X"}]}]}"#),
                      at: "steps[0].fields[0].options[0].id", "expected letters, digits, '_' or '-'")
        // Step and field ids still start with a letter: they name things in conditions and answers.
        expectProblem(Fixture.wrap(#"{"id": "1a", "title": "A", "kind": "content"}"#), at: "steps[0].id", "expected a letter")
    }

    @Test("the only field of a step may leave out its label: it is the step's title")
    func aLonelyFieldTakesTheStepTitleAsLabel() throws {
        let flow = try Fixture.flow(Fixture.wrap(#"""
            {"id": "q1", "title": {"en": "How did you hear about us?", "de": "Wie haben Sie von uns erfahren?"},
             "fields": [{"id": "heard", "type": "text", "required": true}]}
            """#))
        let heard = try #require(flow.field("heard"))
        #expect(heard.label.resolve("de") == "Wie haben Sie von uns erfahren?")
        #expect(flow.locales == ["en", "de"])
        var s = try Fixture.session(flow, locale: "de")
        #expect(s.currentStep().fields[0].label == "Wie haben Sie von uns erfahren?")
        try s.set(["heard": .text("Radio")])
        #expect(s.review().groups[0].answers[0].label == "Wie haben Sie von uns erfahren?")
        // Two fields: each needs its own label, and the message says why.
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "x", "type": "text"}, \#(field)]}"#),
                      at: "steps[0].fields[0]", "only the single field of a step may leave it out")
        // Without a title the step has its own problem, and no second one for the label.
        let untitled = Fixture.problems(Fixture.wrap(#"{"id": "a", "fields": [{"id": "x", "type": "text"}]}"#))
        #expect(untitled.map(\.path) == ["steps[0]"], "\(untitled)")
    }

    @Test func invalidRegexNamesThePosition() {
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "x", "type": "text", "label": "X", "pattern": "[a-z"}]}"#),
                      at: "steps[0].fields[0].pattern", "invalid pattern \"[a-z\" at position 1: missing ']'")
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "x", "type": "text", "label": "X", "pattern": "(a{999}){999}"}]}"#),
                      at: "steps[0].fields[0].pattern", "too large")
    }

    @Test func maxLengthMustStayWithinWhatThePatternCanCheck() {
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "x", "type": "text", "label": "X", "maxLength": 5000, "pattern": "((a?){990})*"}]}"#),
                      at: "steps[0].fields[0].maxLength", "characters this pattern can check")
    }

    @Test func contradictoryBounds() {
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "x", "type": "text", "label": "X", "minLength": 5, "maxLength": 2}]}"#),
                      at: "steps[0].fields[0].minLength", "more than maxLength")
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "x", "type": "date", "label": "X", "after": "2025-01-02", "before": "2025-01-01"}]}"#),
                      at: "steps[0].fields[0].after", "no date is after")
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "x", "type": "date", "label": "X", "after": "tomorrow"}]}"#),
                      at: "steps[0].fields[0].after", "expected \"today\" or a date")
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "m", "type": "multichoice", "label": "M", "minSelected": 3, "options": [{"id": "a", "label": "A"}]}]}"#),
                      at: "steps[0].fields[0].minSelected", "more than the 1 options")
    }

    @Test func messagesMustNameARuleTheFieldHas() {
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "x", "type": "text", "label": "X", "messages": {"minLenght": "m"}}]}"#),
                      at: "steps[0].fields[0].messages.minLenght", "did you mean \"minLength\"")
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "x", "type": "text", "label": "X", "messages": {"pattern": "m"}}]}"#),
                      at: "steps[0].fields[0].messages.pattern", "does not set that rule")
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "x", "type": "text", "label": "X", "messages": {"minimum": "m"}}]}"#),
                      at: "steps[0].fields[0].messages.minimum", "has no \"minimum\" rule")
    }

    @Test func localizedStringsAreChecked() {
        expectProblem(Fixture.wrap(#"{"id": "a", "title": {"english": "A"}, "kind": "content"}"#), at: "steps[0].title.english", "not a locale tag")
        expectProblem(Fixture.wrap(#"{"id": "a", "title": {}, "kind": "content"}"#), at: "steps[0].title", "no translations")
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "  ", "kind": "content"}"#), at: "steps[0].title", "must not be empty")
    }

    @Test func missingCapabilitiesAreNamed() {
        let catalog = CapabilityCatalog([(.fieldValidator, "flowd.hostname")])
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "x", "type": "text", "label": "X", "validators": [{"plugin": "flowd.hostnam"}]}]}"#),
                      at: "steps[0].fields[0].validators[0].plugin", "did you mean \"flowd.hostname\"", capabilities: catalog)
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "kind": "content"}"#, extra: #""submit": {"action": "flowd.spool"}"#),
                      at: "submit.action", "no plugin provides any submit action", capabilities: catalog)
        expectProblem(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [\#(field)], "rules": [{"plugin": "Not A Name"}]}"#),
                      at: "steps[0].rules[0].plugin", "not a plugin name")
    }

    @Test func syntaxErrorsNameLineAndColumnAndNoPath() throws {
        let problems = Fixture.problems("{\"format\": 1,\n \"id\": \"t\",,}")
        let p = try #require(problems.first)
        #expect(problems.count == 1)
        #expect(p.path == "")
        #expect(p.description.hasPrefix("bad.json: syntax error at line 2, column 12:"), "\(p)")
        // Deep inside an array of steps: still no path (none exists in a
        // document that does not parse), only where the parser stopped.
        let deep = try #require(Fixture.problems("{\"steps\": [{\"id\": tru}]}").first)
        #expect(deep.path == "")
        #expect(deep.description.hasPrefix("bad.json: syntax error at line 1, column 19:"), "\(deep)")
    }

    @Test func reportsEveryProblemUpToTheBound() throws {
        let steps = (0..<5).map { i in #"{"id": "s\#(i)", "title": "S", "fields": [{"id": "f\#(i)", "type": "bogus", "label": "F"}]}"# }
        let problems = Fixture.problems(Fixture.wrap(steps.joined(separator: ",")))
        #expect(problems.count == 5)
        #expect(Set(problems.map(\.path)).count == 5)
        var limits = FlowLoadLimits.default
        limits.maxProblems = 3
        let capped = Fixture.problems(Fixture.wrap(steps.joined(separator: ",")), limits: limits)
        #expect(capped.count == 4)
        #expect(capped.last?.message == "2 more problems not shown")
    }

    @Test func boundsAreEnforcedWithPreciseErrors() throws {
        var limits = FlowLoadLimits.default
        limits.maxFileBytes = 100
        #expect(Fixture.problems(String(repeating: " ", count: 101) + "{}", limits: limits).first?.message.contains("over the limit of 100") == true)

        let deep = String(repeating: "[", count: 100_000)
        let deepProblems = Fixture.problems(#"{"format": 1, "id": "t", "title": "T", "steps": \#(deep)"#)
        #expect(deepProblems.first?.message.contains("nesting is deeper than 32 levels") == true)

        let huge = String(repeating: "x", count: 20_000)
        #expect(Fixture.problems(Fixture.wrap(#"{"id": "a", "title": "\#(huge)", "kind": "content"}"#)).first?.message.contains("longer than 16384 bytes") == true)

        limits = .default
        limits.maxSteps = 2
        let three = (0..<3).map { #"{"id": "s\#($0)", "title": "S", "kind": "content"}"# }.joined(separator: ",")
        #expect(Fixture.problems(Fixture.wrap(three), limits: limits).contains { $0.path == "steps" && $0.message.contains("over the limit of 2") })

        limits = .default
        limits.maxOptionsPerField = 2
        let options = (0..<3).map { #"{"id": "o\#($0)", "label": "O"}"# }.joined(separator: ",")
        #expect(Fixture.problems(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "c", "type": "choice", "label": "C", "options": [\#(options)]}]}"#), limits: limits)
            .contains { $0.path == "steps[0].fields[0].options" })

        let longID = String(repeating: "a", count: 65)
        #expect(Fixture.problems(Fixture.wrap(#"{"id": "\#(longID)", "title": "A", "kind": "content"}"#)).first?.message.contains("longer than 64") == true)
    }

    @Test func hostileRegexLoadsQuicklyAndMatchesInLinearTime() throws {
        let flow = try Fixture.flow(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "x", "type": "text", "label": "X", "pattern": "(a+)+$"}]}"#))
        var s = try Fixture.session(flow)
        let errors = try s.set(["x": .text(String(repeating: "a", count: 30_000) + "!")])
        #expect(errors["x"] == "Enter a value in the expected format.")
    }

    /// Big hostile files are refused in bounded time; there is no timing
    /// assertion, only that the calls return with the right problems.
    @Test func bigHostileFilesFinish() throws {
        var keys: [String] = []
        var size = 0
        var i = 0
        while size < 1_000_000 {
            let k = "\"k\(i)x\": 1"
            keys.append(k)
            size += k.utf8.count + 1
            i += 1
        }
        let wide = "{" + keys.joined(separator: ",") + "}"
        let problems = Fixture.problems(wide)
        #expect(problems.count == FlowLoadLimits.default.maxProblems + 1)
        #expect(problems.last?.message.hasSuffix("more problems not shown") == true)

        let nots = String(repeating: #"{"not": "#, count: 25) + #"{"field": "f", "notEmpty": true}"# + String(repeating: "}", count: 25)
        let deepCondition = Fixture.wrap(#"{"id": "a", "title": "A", "fields": [{"id": "f", "type": "text", "label": "F"}], "next": [{"if": \#(nots), "goto": "b"}, {"goto": "b"}]}, {"id": "b", "title": "B", "kind": "content"}"#)
        #expect(Fixture.problems(deepCondition).isEmpty)
        let tooDeep = deepCondition.replacingOccurrences(of: #"{"not": "#, with: #"{"not": {"not": "#)
            .replacingOccurrences(of: String(repeating: "}", count: 25), with: String(repeating: "}", count: 50))
        #expect(Fixture.problems(tooDeep).first?.message.contains("nesting is deeper") == true)

        let manySteps = (0..<30).map { s in
            let fields = (0..<50).map { #"{"id": "s\#(s)f\#($0)", "type": "text", "label": "F"}"# }.joined(separator: ",")
            return #"{"id": "s\#(s)", "title": "S", "fields": [\#(fields)]}"#
        }
        var limits = FlowLoadLimits.default
        limits.maxFields = 1000
        let many = Fixture.problems(Fixture.wrap(manySteps.joined(separator: ",")), limits: limits)
        #expect(many.contains { $0.message.contains("1500 fields in all are over the limit of 1000") })
    }

    @Test func garbageNeverCrashes() {
        let inputs = ["", "null", "true", "\"x\"", "[]", "{}", "{\"steps\": [null, 1, \"x\", [], {}]}",
                      "{\"format\": 1, \"id\": \"t\", \"title\": \"T\", \"steps\": [{\"id\": \"a\", \"title\": \"A\", \"fields\": [null, {\"id\": 1}]}]}"]
        for input in inputs {
            let problems = Fixture.problems(input)
            #expect(!problems.isEmpty, "accepted \(input)")
        }
        // Every byte sequence that is a prefix of a real flow fails cleanly.
        let text = (try? Fixture.exampleBytes("survey")) ?? []
        for cut in stride(from: 0, to: text.count, by: 97) {
            #expect(throws: FlowLoadError.self) {
                try FlowLoader.load(Array(text[0..<cut]), fileName: "cut.json", capabilities: .any)
            }
        }
    }
}

@Suite struct SchemaTests {
    /// The editor schema and the linter must agree on every key.
    @Test func schemaListsExactlyTheKeysTheLoaderAccepts() throws {
        let data = try Data(contentsOf: Fixture.root.appendingPathComponent("docs/flow.schema.json"))
        let schema = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let defs = try #require(schema["$defs"] as? [String: Any])
        func keys(_ object: Any?) -> Set<String> {
            Set(((object as? [String: Any])?["properties"] as? [String: Any])?.keys.map { $0 } ?? [])
        }
        #expect(keys(schema) == Set(FlowBuilder.flowKeys))
        #expect(keys(defs["step"]) == Set(FlowBuilder.stepKeys))
        #expect(keys(defs["field"]) == Set(FlowBuilder.fieldKeys))
        #expect(keys(defs["option"]) == Set(FlowBuilder.optionKeys))
        #expect(keys(defs["condition"]) == Set(FlowBuilder.conditionKeys))
        #expect(keys(defs["stepRule"]) == Set(FlowBuilder.ruleKeys))
        let properties = try #require(schema["properties"] as? [String: Any])
        #expect(keys(properties["review"]) == Set(FlowBuilder.reviewKeys))
        #expect(keys(properties["submit"]) == Set(FlowBuilder.submitKeys))
        let field = try #require(defs["field"] as? [String: Any])
        let fieldProperties = try #require(field["properties"] as? [String: Any])
        let types = try #require((fieldProperties["type"] as? [String: Any])?["enum"] as? [String])
        #expect(types == FieldType.allCases.map(\.rawValue))
        let messages = try #require(fieldProperties["messages"] as? [String: Any])
        let ruleNames = try #require((messages["propertyNames"] as? [String: Any])?["enum"] as? [String])
        #expect(Set(ruleNames) == Set(FieldRule.allCases.map(\.rawValue)))
    }
}
