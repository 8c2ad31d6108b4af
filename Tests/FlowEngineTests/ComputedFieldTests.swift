import FlowKit
import Testing

@testable import FlowEngine

/// `computed` fields: read-only values worked out from the answers.
@Suite struct ComputedFieldTests {
    /// The shipped consultation, on its website branch, with 12 pages.
    func consultation(locale: String) throws -> FlowSession {
        var s = try Fixture.session(Fixture.example("consultation"), locale: locale,
                                    options: ["day": weekdayOptions, "time": slotOptions])
        try s.set(["service": .text("website")])
        try s.next()
        return s
    }

    @Test("the consultation's estimate: shown on its step as the pages change, formatted for the locale")
    func estimateOnItsStep() throws {
        var s = try consultation(locale: "en")
        var estimate = try #require(s.currentStep().fields.last)
        #expect(estimate.id == "estimate" && estimate.type == .computed)
        #expect(estimate.value == nil && estimate.display == "", "no pages, no estimate")
        #expect(!estimate.required)
        try s.set(["pageCount": .integer(12)])
        estimate = try #require(s.currentStep().fields.last)
        #expect(estimate.label == "Estimated price")
        #expect(estimate.value == .integer(1440))
        #expect(estimate.display == "1,440 €")
        #expect(s.currentStep().fields[0].label == "A website: about how many pages?", "the service piped in")
        let german = SessionPresenter(s, locale: "de").step()
        #expect(german.fields.last?.display == "1.440 €")
        #expect(german.fields[0].label == "Eine Website: etwa wie viele Seiten?")
        #expect(SessionPresenter(s, locale: "fr").step().fields.last?.display == "1\u{202F}440 €")
        try s.set(["pageCount": .integer(500)])
        #expect(s.currentStep().fields.last?.display == "60,000 €")
    }

    @Test("in Review, in the step's completion, in the answers and in the submission")
    func reviewAndSubmission() throws {
        var s = try consultation(locale: "de")
        try s.set(["pageCount": .integer(12)])
        let completion = try #require(try s.next())
        #expect(completion.answers == ["pageCount": .integer(12), "estimate": .integer(1440)])
        try s.set(["day": .text("2025-06-16"), "time": .text("09:00")])
        try s.next()
        try s.set(["name": .text("Ada"), "email": .text("ada@example.org")])
        try s.next()
        let group = try #require(s.review().groups.first { $0.step == "pages" })
        #expect(group.answers.map(\.display) == ["12", "1.440 €"])
        #expect(group.answers.map(\.label) == ["Eine Website: etwa wie viele Seiten?", "Geschätzter Preis"])
        #expect(s.answersOnPath(includeSecure: false)["estimate"] == .integer(1440))
        guard case .run(let request) = try s.beginSubmit(now: 9) else {
            Issue.record("expected the submit to run")
            return
        }
        #expect(request.submission.answers["estimate"] == .integer(1440), "the raw value, not the words")
    }

    @Test("nothing sets a computed field: not SetAnswers, not prefill")
    func readOnly() throws {
        var s = try consultation(locale: "en")
        #expect(throws: SessionError(.invalidArgs, "\"estimate\" is computed from other answers and cannot be set")) {
            try s.setAnswers(["estimate": .integer(1)], now: 3)
        }
        #expect(throws: SessionError.self) {
            try Fixture.session(Fixture.example("consultation"), prefill: ["estimate": .integer(1)])
        }
    }

    @Test("decimals, display, computed texts, dates and yes/no; computed fields feed later ones and conditions")
    func kinds() throws {
        let flow = try Fixture.flow(#"""
            {"format": 2, "id": "t", "title": "T", "steps": [
              {"id": "a", "title": "A", "fields": [
                {"id": "first", "type": "text", "label": "First"},
                {"id": "last", "type": "text", "label": "Last"},
                {"id": "start", "type": "date", "label": "Start"},
                {"id": "price", "type": "number", "label": "Price"},
                {"id": "full", "type": "computed", "label": "Full name", "expr": "first + \" \" + last"},
                {"id": "end", "type": "computed", "label": "Ends", "expr": "start + 14"},
                {"id": "vat", "type": "computed", "label": "VAT", "expr": "price * 0.2", "decimals": 2,
                 "display": {"en": "€{value}", "de": "{value} €"}},
                {"id": "third", "type": "computed", "label": "A third", "expr": "price / 3"},
                {"id": "big", "type": "computed", "label": "Big", "expr": "vat > 100"},
                {"id": "days", "type": "computed", "label": "Days", "expr": "end - today"}],
               "next": [{"if": {"expr": "big"}, "goto": "large"}, {"goto": "small"}]},
              {"id": "large", "title": "Large", "kind": "content", "next": "complete"},
              {"id": "small", "title": "Small", "kind": "content"}]}
            """#)
        var s = try Fixture.session(flow)
        try s.set(["first": .text("Ada"), "last": .text("Lovelace"), "start": .text("2025-06-20"), "price": .number(1000.5)])
        let page = s.currentStep()
        func field(_ id: String) -> FieldView? { page.fields.first { $0.id == id } }
        #expect(field("full")?.value == .text("Ada Lovelace"))
        #expect(field("end")?.value == .text("2025-07-04") && field("end")?.display == "2025-07-04")
        #expect(field("vat")?.value == .number(200.1) && field("vat")?.display == "€200.10")
        #expect(SessionPresenter(s, locale: "de").step().fields.first { $0.id == "vat" }?.display == "200,10 €")
        #expect(field("third")?.value == .number(333.5) && field("third")?.display == "333.5")
        #expect(field("big")?.value == .bool(true) && field("big")?.display == "Yes")
        #expect(field("days")?.value == .integer(19), "today is 2025-06-15 on the test clock")
        #expect(s.route().map { s.flow.steps[$0].id } == ["a", "large"], "a condition reads a computed value")
        try s.set(["price": .integer(10)])
        #expect(s.route().map { s.flow.steps[$0].id } == ["a", "small"])
        try s.set(["start": .text("not a date")])
        #expect(s.currentStep().fields.first { $0.id == "end" }?.value == nil, "a date that does not parse gives no value")
    }

    @Test("the locale's number format: grouping, decimal separator, Spanish groups from five digits")
    func numberFormat() {
        func format(_ d: Double, _ locale: String, decimals: Int? = nil) -> String {
            LocalizedNumber(SessionText(locale: locale)).format(d, decimals: decimals)
        }
        #expect(format(1440, "en") == "1,440")
        #expect(format(1440, "es") == "1440")
        #expect(format(14400, "es") == "14.400")
        #expect(format(1234567.891, "de") == "1.234.567,891")
        #expect(format(-1234.5, "en", decimals: 2) == "-1,234.50")
        #expect(format(0.0004, "en") == "0", "rounded to 3 places")
        #expect(format(999, "ja") == "999")
        #expect(format(999_999_999_999_999, "en") == "999,999,999,999,999")
        #expect(format(1440, "sv") == "1,440", "a locale without its own format writes English")
    }

    @Test("lint: a computed field needs expr, takes none of the keys of what a person types")
    func lint() {
        let problems = Fixture.problems(#"""
            {"format": 2, "id": "t", "title": "T", "steps": [{"id": "a", "title": "A", "fields": [
              {"id": "n", "type": "number", "label": "N"},
              {"id": "c", "type": "computed", "label": "C", "required": true, "placeholder": "x", "decimals": 5},
              {"id": "d", "type": "computed", "label": "D", "expr": "n", "display": "{val}"},
              {"id": "e", "type": "number", "label": "E", "expr": "n"}]}]}
            """#).map(\.description)
        #expect(problems.contains(#"bad.json: steps[0].fields[1]: missing required key "expr" (expected the expression that computes the value, such as "pageCount * 120")"#))
        #expect(problems.contains(#"bad.json: steps[0].fields[1].required: a computed field is worked out from other answers, never typed in, so it takes no "required""#))
        #expect(problems.contains { $0.hasPrefix("bad.json: steps[0].fields[1].placeholder: a computed field") })
        #expect(problems.contains("bad.json: steps[0].fields[1].decimals: 5 is out of range (expected 0 to 3)"))
        #expect(problems.contains("bad.json: steps[0].fields[2].display: the display must contain {value} once, and no other placeholder (as in \"{value} €\")"))
        #expect(problems.contains("bad.json: steps[0].fields[3].expr: \"expr\" applies only to computed fields, not to a number field"))
    }
}
