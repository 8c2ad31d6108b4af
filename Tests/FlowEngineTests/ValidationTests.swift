import FlowKit
import Testing

@testable import FlowEngine

/// Every built-in rule, through the public session API: an error appears as
/// soon as a field is set.
@Suite struct FieldRuleTests {
    /// A one-step flow with one field, and a session on it.
    func session(_ field: String, extra: String = "", locale: String = "en") throws -> FlowSession {
        let flow = try Fixture.flow(Fixture.wrap(#"{"id": "s", "title": "S", "fields": [\#(field)]\#(extra)}"#))
        return try Fixture.session(flow, locale: locale)
    }

    func error(_ field: String, _ value: AnswerValue, other: String? = nil) throws -> String? {
        var s = try session(field)
        var answers: [String: AnswerValue] = ["f": value]
        if let other { answers["f.other"] = .text(other) }
        return try s.set(answers)["f"]
    }

    @Test func requiredTrimsText() throws {
        let f = #"{"id": "f", "type": "text", "label": "F", "required": true}"#
        #expect(try error(f, .text(" \t\u{3000} ")) == "This field is required.")
        #expect(try error(f, .text("x")) == nil)
        // Clearing a required answer shows the error too.
        var s = try session(f)
        try s.set(["f": .text("x")])
        #expect(try s.set(["f": .text("")])["f"] == "This field is required.")
    }

    @Test func requiredListsAndChoices() throws {
        let m = #"{"id": "f", "type": "multichoice", "label": "F", "required": true, "options": [{"id": "a", "label": "A"}]}"#
        #expect(try error(m, .list([])) == "Choose an option.")
        let c = #"{"id": "f", "type": "choice", "label": "F", "required": true, "options": [{"id": "a", "label": "A"}]}"#
        #expect(try error(c, .text("")) == "Choose an option.")
        #expect(try error(c, .text("a")) == nil)
    }

    @Test func mustBeOn() throws {
        let t = #"{"id": "f", "type": "toggle", "label": "F", "mustBeOn": true}"#
        #expect(try error(t, .bool(false)) == "Turn this on to continue.")
        #expect(try error(t, .bool(true)) == nil)
        var s = try session(t)
        guard case .stayed(let errors) = try s.continueStep(now: 1) else {
            Issue.record("an unset toggle passed mustBeOn")
            return
        }
        #expect(errors["f"] == "Turn this on to continue.")
    }

    /// Lengths count Unicode scalars: "é" as one precomposed scalar is 1, as
    /// e + combining accent 2; a flag emoji is 2 scalars, a family emoji 5.
    @Test func lengthsCountUnicodeScalars() throws {
        let f = #"{"id": "f", "type": "text", "label": "F", "minLength": 2, "maxLength": 3}"#
        #expect(try error(f, .text("\u{E9}")) == "Enter at least 2 characters.")
        #expect(try error(f, .text("e\u{301}")) == nil)
        #expect(try error(f, .text("🇩🇪")) == nil)
        #expect(try error(f, .text("👨‍👩‍👧")) == "Enter no more than 3 characters.")
        #expect(try error(f, .text("日本語")) == nil)
        #expect(try error(f, .text("日本語です")) == "Enter no more than 3 characters.")
    }

    @Test func patternMatchesTheWholeValueAndLengthComesFirst() throws {
        let f = #"{"id": "f", "type": "text", "label": "F", "maxLength": 5, "pattern": "[a-z]+"}"#
        #expect(try error(f, .text("abc")) == nil)
        #expect(try error(f, .text("abc1")) == "Enter a value in the expected format.")
        #expect(try error(f, .text("abcdefg")) == "Enter no more than 5 characters.")
    }

    @Test func aBigPatternActsAsAnImplicitMaxLength() throws {
        let f = #"{"id": "f", "type": "multiline", "label": "F", "pattern": "((a?){990})*"}"#
        var s = try session(f)
        let cap = try #require(s.currentStep().fields[0].maxLength)
        #expect(cap < 600)
        #expect(try s.set(["f": .text(String(repeating: "a", count: cap))])["f"] == nil)
        #expect(try s.set(["f": .text(String(repeating: "a", count: cap + 1))])["f"] == "Enter no more than \(cap) characters.")
    }

    @Test(arguments: [
        ("name@example.com", true), ("first.last+tag@sub.example.org", true), ("jösé@bücher.de", true),
        ("no-at-sign", false), ("two@@example.com", false), ("a@b@example.com", false), (".lead@example.com", false),
        ("trail.@example.com", false), ("dou..ble@example.com", false), ("name@localhost", false),
        ("name@-bad.com", false), ("name@bad-.com", false), ("name@example.123", false), ("name @example.com", false),
        ("@example.com", false), ("name@", false), ("name@exa mple.com", false),
    ])
    func email(address: String, valid: Bool) throws {
        let f = #"{"id": "f", "type": "email", "label": "F"}"#
        #expect(try error(f, .text(address)) == (valid ? nil : "Enter a valid email address, like name@example.com."), "\(address)")
    }

    @Test func numbers() throws {
        let f = #"{"id": "f", "type": "number", "label": "F", "minimum": 1, "maximum": 10.5, "integer": true}"#
        #expect(try error(f, .integer(0)) == "Enter a number of 1 or more.")
        #expect(try error(f, .integer(11)) == "Enter a number of 10.5 or less.")
        #expect(try error(f, .number(2.5)) == "Enter a whole number.")
        #expect(try error(f, .number(3.0)) == nil)
        #expect(try error(f, .integer(10)) == nil)
    }

    @Test func datesWithTodayAsABound() throws {
        // TestClock's today is 2025-06-15.
        let future = #"{"id": "f", "type": "date", "label": "F", "after": "today"}"#
        #expect(try error(future, .text("2025-06-15")) == "Enter a date after today.")
        #expect(try error(future, .text("2025-06-16")) == nil)
        let past = #"{"id": "f", "type": "date", "label": "F", "before": "today", "after": "1900-01-01"}"#
        #expect(try error(past, .text("2025-06-15")) == "Enter a date before today.")
        #expect(try error(past, .text("1900-01-01")) == "Enter a date after 1900-01-01.")
        #expect(try error(past, .text("1990-02-28")) == nil)
        let fixed = #"{"id": "f", "type": "date", "label": "F", "before": "2024-01-01"}"#
        #expect(try error(fixed, .text("2024-01-01")) == "Enter a date before 2024-01-01.")
        #expect(try error(fixed, .text("2023-02-29")) == "Enter a date as YYYY-MM-DD.")
        #expect(try error(fixed, .text("2020-02-29")) == nil)
        #expect(try error(fixed, .text("20-1-1")) == "Enter a date as YYYY-MM-DD.")
    }

    @Test func times() throws {
        let f = #"{"id": "f", "type": "time", "label": "F"}"#
        #expect(try error(f, .text("09:30")) == nil)
        #expect(try error(f, .text("24:00")) == "Enter a time as HH:MM.")
        #expect(try error(f, .text("9:30")) == "Enter a time as HH:MM.")
    }

    @Test func selectionCounts() throws {
        let options = (1...4).map { #"{"id": "o\#($0)", "label": "O\#($0)"}"# }.joined(separator: ",")
        let f = #"{"id": "f", "type": "multichoice", "label": "F", "minSelected": 2, "maxSelected": 3, "options": [\#(options)]}"#
        #expect(try error(f, .list(["o1"])) == "Select at least 2.")
        #expect(try error(f, .list(["o1", "o2", "o3", "o4"])) == "Select no more than 3.")
        #expect(try error(f, .list(["o1", "o2"])) == nil)
        // minSelected applies to an empty selection too.
        var s = try session(f)
        guard case .stayed(let errors) = try s.continueStep(now: 1) else {
            Issue.record("moved with nothing selected")
            return
        }
        #expect(errors["f"] == "Select at least 2.")
    }

    /// The option rule on its own: `SetAnswers` refuses an unknown option
    /// before storing it, so the rule speaks for answers stored before the
    /// options changed (a provider's new options, a reloaded flow). A few
    /// choices are looked up one by one, many through a set: both ways.
    @Test func optionsOfTheFlowOrOfTheProvider() throws {
        let options = (1...12).map { #"{"id": "o\#($0)", "label": "O\#($0)"}"# }.joined(separator: ",")
        let flow = try Fixture.flow(Fixture.wrap(#"""
            {"id": "s", "title": "S", "fields": [
             {"id": "c", "type": "choice", "label": "C", "options": [\#(options)]},
             {"id": "m", "type": "multichoice", "label": "M", "options": [\#(options)], "other": true}]}
            """#))
        let c = try #require(flow.field("c"))
        let m = try #require(flow.field("m"))
        let today = try #require(CivilDate(iso: "2025-06-16"))
        func refused(_ f: FieldDefinition, _ value: AnswerValue, provided: [String: [ChoiceOption]] = [:]) -> Bool {
            let context = ValidationContext(today: today, dynamicOptions: provided)
            return FieldValidation.error(f, value: value, otherText: "x", context: context) != nil
        }
        let all = (1...12).map { "o\($0)" }
        let provided = ["c": [ChoiceOption(id: "p1", label: "P1")], "m": (1...10).map { ChoiceOption(id: "p\($0)", label: "") }]
        #expect(!refused(c, .text("o3")))
        #expect(refused(c, .text("o13")))
        #expect(refused(c, .text("o3"), provided: provided))
        #expect(!refused(c, .text("p1"), provided: provided))
        #expect(!refused(m, .list(["o1", "o12", "other"])))
        #expect(refused(m, .list(["o1", "zz"])))
        #expect(!refused(m, .list(all + ["other"])))
        #expect(refused(m, .list(Array(all.dropLast()) + ["zz"])))
        #expect(!refused(m, .list((1...10).map { "p\($0)" }), provided: provided))
        #expect(refused(m, .list((1...9).map { "p\($0)" } + ["o1"]), provided: provided))
        #expect(refused(m, .list(["p1", "o1"]), provided: provided))
    }

    @Test func otherNeedsItsText() throws {
        let c = #"{"id": "f", "type": "choice", "label": "F", "required": true, "options": [{"id": "a", "label": "A"}], "other": true}"#
        #expect(try error(c, .text("other")) == "Describe your other answer.")
        #expect(try error(c, .text("other"), other: "  ") == "Describe your other answer.")
        #expect(try error(c, .text("other"), other: "Carrier pigeon") == nil)
        let m = #"{"id": "f", "type": "multichoice", "label": "F", "options": [{"id": "a", "label": "A"}], "other": true}"#
        #expect(try error(m, .list(["a", "other"])) == "Describe your other answer.")
        #expect(try error(m, .list(["a", "other"]), other: "More") == nil)
    }

    @Test func customMessagesReplaceDefaultsAndFillPlaceholders() throws {
        let f = #"{"id": "f", "type": "text", "label": "F", "required": true, "minLength": 8, "messages": {"required": {"en": "Pick a password.", "de": "Bitte ein Passwort wählen."}, "minLength": "At least {min}, please."}}"#
        #expect(try error(f, .text("short")) == "At least 8, please.")
        var s = try session(f, locale: "de")
        #expect(try s.set(["f": .text("")])["f"] == "Bitte ein Passwort wählen.")
    }

    @Test func defaultMessagesAreLocalized() throws {
        let f = #"{"id": "f", "type": "text", "label": "F", "required": true}"#
        var s = try session(f, locale: "fr")
        #expect(try s.set(["f": .text("")])["f"] == "Ce champ est obligatoire.")
        var ja = try session(f, locale: "ja")
        #expect(try ja.set(["f": .text("")])["f"] == "この項目は必須です。")
    }

    @Test func errorsOfUntouchedFieldsWaitForContinue() throws {
        let flow = try Fixture.flow(Fixture.wrap(#"{"id": "s", "title": "S", "fields": [{"id": "a", "type": "text", "label": "A", "required": true}, {"id": "b", "type": "text", "label": "B", "required": true}]}"#))
        var s = try Fixture.session(flow)
        #expect(s.currentStep().fields.allSatisfy { $0.error.isEmpty })
        let errors = try s.set(["a": .text("")])
        #expect(errors == ["a": "This field is required."])
        _ = try s.continueStep(now: 1)
        #expect(s.currentStep().fields.map(\.error) == ["This field is required.", "This field is required."])
    }
}

@Suite struct StepRuleTests {
    func session(fields: String, rules: String) throws -> FlowSession {
        try Fixture.session(Fixture.flow(Fixture.wrap(
            #"{"id": "s", "title": "S", "fields": \#(fields), "rules": \#(rules)}, {"id": "end", "title": "End", "kind": "content"}"#)))
    }

    @Test func equalsAttachesToTheSecondField() throws {
        var s = try session(fields: #"[{"id": "p", "type": "secure", "label": "Password"}, {"id": "c", "type": "secure", "label": "Confirm"}]"#,
                            rules: #"[{"equals": ["p", "c"]}]"#)
        #expect(try s.set(["p": .text("hunter22"), "c": .text("hunter23")]) == ["c": "This must match Password."])
        #expect(try s.set(["c": .text("hunter22")]) == [:])
    }

    @Test func notEqualsWithACustomMessage() throws {
        var s = try session(fields: #"[{"id": "old", "type": "secure", "label": "Old"}, {"id": "new", "type": "secure", "label": "New"}]"#,
                            rules: #"[{"notEquals": ["old", "new"], "message": "Choose a new password."}]"#)
        #expect(try s.set(["old": .text("same"), "new": .text("same")]) == ["new": "Choose a new password."])
        #expect(try s.set(["new": .text("other")]) == [:])
    }

    @Test func beforeAndAfterOnDatesNumbersAndTimes() throws {
        var d = try session(fields: #"[{"id": "from", "type": "date", "label": "From"}, {"id": "to", "type": "date", "label": "To"}]"#,
                            rules: #"[{"before": ["from", "to"]}]"#)
        #expect(try d.set(["from": .text("2025-07-02"), "to": .text("2025-07-01")]) == ["from": "This must be before To."])
        #expect(try d.set(["to": .text("2025-07-03")]) == [:])
        var n = try session(fields: #"[{"id": "min", "type": "number", "label": "Min"}, {"id": "max", "type": "number", "label": "Max"}]"#,
                            rules: #"[{"after": ["max", "min"]}]"#)
        #expect(try n.set(["min": .integer(5), "max": .number(5)]) == ["max": "This must be greater than Min."])
        #expect(try n.set(["max": .number(5.5)]) == [:])
        var t = try session(fields: #"[{"id": "start", "type": "time", "label": "Start"}, {"id": "end", "type": "time", "label": "End"}]"#,
                            rules: #"[{"after": ["end", "start"]}]"#)
        #expect(try t.set(["start": .text("10:00"), "end": .text("09:59")]) == ["end": "This must be after Start."])
    }

    @Test func requiredIf() throws {
        var s = try session(
            fields: #"[{"id": "kind", "type": "choice", "label": "Kind", "options": [{"id": "person", "label": "Person"}, {"id": "company", "label": "Company"}]}, {"id": "vat", "type": "text", "label": "VAT"}]"#,
            rules: #"[{"requiredIf": "vat", "if": {"field": "kind", "equals": "company"}}]"#)
        try s.set(["kind": .text("person")])
        #expect(try s.next() != nil)
        try s.back(now: 3)
        try s.set(["kind": .text("company")])
        guard case .stayed(let errors) = try s.continueStep(now: 4) else {
            Issue.record("moved without the VAT number")
            return
        }
        #expect(errors == ["vat": "This field is required."])
    }
}
