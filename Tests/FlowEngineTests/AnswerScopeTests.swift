import FlowKit
import Testing

@testable import FlowEngine

/// ``FlowDefinition/answersStayOnTheirStep``: the daemon works out no path
/// after `SetAnswers` on such a flow, so anything through which an answer
/// reaches another step, the path or a title must make it false.
@Suite struct AnswerScopeTests {
    static let two = #"{"id": "a", "title": "A", "fields": [{"id": "x", "type": "text", "label": "X", "required": true}]}"#

    static func flow(_ steps: String, format: Int = 1) throws -> FlowDefinition {
        try Fixture.flow(#"{"format": \#(format), "id": "t", "title": "T", "steps": [\#(steps)]}"#)
    }

    @Test("a flow whose answers reach nothing beyond their step")
    func local() throws {
        #expect(try Self.flow(Self.two + #", {"id": "b", "title": "B", "fields": [{"id": "y", "type": "toggle", "label": "Y"}]}"#)
            .answersStayOnTheirStep)
        // A rule over two fields of one step.
        #expect(try Self.flow(#"""
            {"id": "a", "title": "A", "fields": [{"id": "p", "type": "secure", "label": "P"}, {"id": "c", "type": "secure", "label": "C"},
             {"id": "n", "type": "text", "label": "N"}],
             "rules": [{"equals": ["p", "c"]}, {"requiredIf": "c", "if": {"field": "n", "notEmpty": true}}]}
            """#).answersStayOnTheirStep)
        #expect(try Fixture.example("onboarding").answersStayOnTheirStep)
        #expect(try Fixture.example("registration").answersStayOnTheirStep)
    }

    @Test("a rule reading another step, a plugin step rule, next rules, field logic, piped titles or today make it false")
    func notLocal() throws {
        // requiredIf on the second step reads the first step's field.
        #expect(try !Self.flow(Self.two + #"""
            , {"id": "b", "title": "B", "fields": [{"id": "y", "type": "text", "label": "Y"}],
               "rules": [{"requiredIf": "y", "if": {"field": "x", "equals": "yes"}}]}
            """#).answersStayOnTheirStep)
        #expect(try !Self.flow(#"""
            {"id": "a", "title": "A", "fields": [{"id": "x", "type": "text", "label": "X"}], "rules": [{"plugin": "t.step"}]}
            """#).answersStayOnTheirStep)
        #expect(try !Self.flow(#"""
            {"id": "a", "title": "A", "fields": [{"id": "x", "type": "text", "label": "X"}],
             "next": [{"if": {"field": "x", "equals": "b"}, "goto": "b"}, {"goto": "complete"}]},
            {"id": "b", "title": "B", "kind": "content"}
            """#).answersStayOnTheirStep)
        #expect(try !Self.flow(#"""
            {"id": "a", "title": "A", "fields": [{"id": "x", "type": "toggle", "label": "X"},
             {"id": "y", "type": "text", "label": "Y", "visibleIf": {"field": "x", "equals": true}}]}
            """#, format: 2).answersStayOnTheirStep)
        #expect(try !Self.flow(#"""
            {"id": "a", "title": "A", "fields": [{"id": "name", "type": "text", "label": "Name"}]},
            {"id": "b", "title": "Thanks, {name}", "kind": "content"}
            """#, format: 2).answersStayOnTheirStep)
        #expect(try !Self.flow(#"""
            {"id": "a", "title": "A", "fields": [{"id": "day", "type": "date", "label": "Day", "after": "today"}]}
            """#).answersStayOnTheirStep)
        #expect(try !Self.flow(#"""
            {"id": "a", "title": "A", "fields": [{"id": "n", "type": "number", "label": "N"}, {"id": "m", "type": "text", "label": "M"}],
             "rules": [{"requiredIf": "m", "if": {"expr": "n > 3"}}]}
            """#, format: 2).answersStayOnTheirStep)
        for name in ["consultation", "survey", "device-enrolment"] {
            #expect(try !Fixture.example(name).answersStayOnTheirStep, "\(name)")
        }
    }
}
