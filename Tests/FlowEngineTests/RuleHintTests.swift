import FlowKit
import Testing

@testable import FlowEngine

/// The rules a GUI can show before the person breaks them: a pattern's hint,
/// the step rules that name a field, conditional requirements, and plugin
/// validators' descriptions.
@Suite struct RuleHintTests {
    static let flow = #"""
        {"format": 1, "id": "loan", "title": "Loan",
         "steps": [
          {"id": "about", "title": {"en": "About", "de": "Über"}, "fields": [
            {"id": "purpose", "type": "choice", "label": {"en": "Purpose", "de": "Zweck"}, "required": true,
             "options": [{"id": "loan", "label": {"en": "Loan", "de": "Darlehen"}}, {"id": "gift", "label": "Gift"}]},
            {"id": "phone", "type": "text", "label": {"en": "Phone", "de": "Telefon"}, "pattern": "[0-9 +]+",
             "patternHint": {"en": "Digits, spaces and + only", "de": "Nur Ziffern, Leerzeichen und +"}},
            {"id": "code", "type": "text", "label": "Code", "pattern": "[A-Z]{3}"},
            {"id": "income", "type": "number", "label": {"en": "Income", "de": "Einkommen"}},
            {"id": "company", "type": "text", "label": {"en": "Company", "de": "Firma"}},
            {"id": "vat", "type": "text", "label": "VAT"},
            {"id": "note", "type": "text", "label": "Note"},
            {"id": "ref", "type": "text", "label": "Reference"}],
           "rules": [
            {"requiredIf": "income", "if": {"field": "purpose", "equals": "loan"}},
            {"requiredIf": "vat", "if": {"field": "company", "notEmpty": true}, "hint": {"en": "Required for companies", "de": "Für Firmen erforderlich"}},
            {"requiredIf": "note", "if": {"any": [{"field": "purpose", "equals": "gift"}, {"field": "company", "notEmpty": false}]}},
            {"requiredIf": "ref", "if": {"field": "purpose", "in": ["loan", "gift"]}}]},
          {"id": "account", "title": "Account", "fields": [
            {"id": "password", "type": "secure", "label": {"en": "Password", "de": "Passwort"}, "required": true},
            {"id": "confirm", "type": "secure", "label": "Confirm", "required": true},
            {"id": "handover", "type": "date", "label": {"en": "Handover date", "de": "Übergabedatum"}},
            {"id": "returned", "type": "date", "label": "Return date"},
            {"id": "min", "type": "number", "label": "Minimum"},
            {"id": "max", "type": "number", "label": "Maximum"},
            {"id": "host", "type": "text", "label": "Host", "validators": [
              {"plugin": "flowd.hostname"},
              {"plugin": "test.reachable", "hint": {"en": "Must answer a ping", "de": "Muss auf Ping antworten"}}]}],
           "rules": [
            {"equals": ["password", "confirm"]},
            {"after": ["returned", "handover"]},
            {"before": ["min", "max"], "message": "Too big."},
            {"plugin": "test.step"},
            {"plugin": "test.step-with-hint", "hint": "Checked with the registry"}]}],
         "review": {}}
        """#

    func session(locale: String = "en") throws -> FlowSession {
        try Fixture.session(Fixture.flow(Self.flow), locale: locale)
    }

    func field(_ page: StepView, _ id: String) throws -> FieldView {
        try #require(page.fields.first { $0.id == id })
    }

    @Test("a pattern says what it wants: the flow's hint in the page's language, else a built-in one")
    func patternHints() throws {
        let en = try session().currentStep()
        #expect(try field(en, "phone").patternHint == "Digits, spaces and + only")
        #expect(try field(en, "code").patternHint == "Must be in the required format")
        #expect(try field(en, "company").patternHint == "", "no pattern, no hint")
        let de = try session(locale: "de").currentStep()
        #expect(try field(de, "phone").patternHint == "Nur Ziffern, Leerzeichen und +")
        #expect(try field(de, "code").patternHint == "Muss dem vorgegebenen Format entsprechen")
    }

    @Test("a field whose requirement depends on another answer says so and reports required as it is now")
    func conditionalRequirements() throws {
        var s = try session()
        var page = s.currentStep()
        #expect(try field(page, "purpose").required && !field(page, "purpose").conditionallyRequired)
        #expect(try !field(page, "income").required && field(page, "income").conditionallyRequired)
        #expect(try field(page, "income").ruleHints == [RuleHint(kind: .requiredIf, subject: "purpose", text: "Required if Purpose is Loan")])
        #expect(try field(page, "vat").ruleHints == [RuleHint(kind: .requiredIf, subject: "company", text: "Required for companies")])
        #expect(try field(page, "note").ruleHints == [RuleHint(kind: .requiredIf, subject: "", text: "Required depending on your other answers")])
        #expect(try field(page, "ref").ruleHints == [RuleHint(kind: .requiredIf, subject: "purpose", text: "Required depending on Purpose")])
        #expect(try field(page, "note").required, "an empty company makes the note required at first")
        #expect(try !field(page, "phone").conditionallyRequired && field(page, "phone").ruleHints.isEmpty)

        try s.set(["purpose": .text("loan")])
        page = s.currentStep()
        #expect(try field(page, "income").required)
        #expect(try field(page, "ref").required)
        try s.set(["company": .text("ACME")])
        page = s.currentStep()
        #expect(try field(page, "vat").required)
        #expect(try !field(page, "note").required)
        // What the page says matches what Continue then asks for.
        guard case .stayed(let errors) = try s.continueStep(now: 3) else {
            Issue.record("moved on without the required answers")
            return
        }
        #expect(Set(errors.keys) == ["income", "vat", "ref"])
        let required = Set(s.currentStep().fields.filter(\.required).map(\.id))
        #expect(required == ["purpose", "income", "vat", "ref"])
        try s.set(["purpose": .text("gift")])
        #expect(try !field(s.currentStep(), "income").required)
    }

    @Test("generic requirement hints name the option's label, and Yes or No, in the page's language")
    func requirementWording() throws {
        let de = try session(locale: "de").currentStep()
        #expect(try field(de, "income").ruleHints.map(\.text) == ["Erforderlich, wenn „Zweck“ „Darlehen“ ist"])
        #expect(try field(de, "vat").ruleHints.map(\.text) == ["Für Firmen erforderlich"])
        let toggled = try Fixture.flow(Fixture.wrap(#"""
            {"id": "a", "title": "A", "fields": [
              {"id": "post", "type": "toggle", "label": "By post"},
              {"id": "address", "type": "text", "label": "Address"},
              {"id": "count", "type": "number", "label": "Count"},
              {"id": "why", "type": "text", "label": "Why"},
              {"id": "name", "type": "text", "label": "Name"}],
             "rules": [{"requiredIf": "address", "if": {"field": "post", "equals": true}},
                       {"requiredIf": "why", "if": {"field": "count", "in": [3]}},
                       {"requiredIf": "name", "if": {"not": {"field": "address", "notEmpty": false}}}]}
            """#))
        let page = try Fixture.session(toggled, locale: "fr").currentStep()
        #expect(try field(page, "address").ruleHints.map(\.text)
            == [Strings.builtin.text(.hintRequiredIfEquals, locale: "fr", ["field": "By post", "value": "Oui"])])
        #expect(try field(page, "address").ruleHints.first?.text.hasPrefix("Obligatoire si") == true)
        #expect(try field(page, "why").ruleHints.map(\.text) == [Strings.builtin.text(.hintRequiredIfEquals, locale: "fr", ["field": "Count", "value": "3"])])
        #expect(try field(page, "name").ruleHints.map(\.text) == [Strings.builtin.text(.hintRequiredDependsOn, locale: "fr", ["field": "Address"])])
    }

    @Test("step rules comparing two fields say so on the field their message goes to")
    func comparisons() throws {
        var s = try session()
        try s.set(["purpose": .text("gift"), "company": .text("ACME"), "vat": .text("DE1"), "ref": .text("r"), "note": .text("n")])
        try s.next()
        let page = s.currentStep()
        #expect(try field(page, "confirm").ruleHints == [RuleHint(kind: .equals, subject: "password", text: "Must match Password")])
        #expect(try field(page, "password").ruleHints.isEmpty, "the rule's message goes to the second field")
        #expect(try field(page, "returned").ruleHints == [RuleHint(kind: .after, subject: "handover", text: "Must be after Handover date")])
        #expect(try field(page, "min").ruleHints == [RuleHint(kind: .before, subject: "max", text: "Must be less than Maximum")],
                "numbers are less or greater; a custom error message does not change the hint")
        let de = SessionPresenter(s, locale: "de").step()
        #expect(try field(de, "confirm").ruleHints.map(\.text) == ["Muss mit „Passwort“ übereinstimmen"])
        #expect(try field(de, "returned").ruleHints.map(\.text) == ["Muss nach „Übergabedatum“ liegen"])
    }

    @Test("plugin validators: the flow's hint, else the plugin's own description for this flow and locale")
    func pluginHints() async throws {
        var s = try session()
        try s.set(["purpose": .text("gift"), "company": .text("ACME"), "vat": .text("DE1"), "ref": .text("r"), "note": .text("n")])
        try s.next()
        // Without descriptions: only the flow's own hints.
        var page = s.currentStep()
        #expect(try field(page, "host").ruleHints == [RuleHint(kind: .plugin, subject: "test.reachable", text: "Must answer a ping")])
        #expect(page.ruleHints == [RuleHint(kind: .plugin, subject: "test.step-with-hint", text: "Checked with the registry")])

        // Asked once for the flow and a locale: only validators without a hint.
        let requests = s.flow.ruleDescriptionRequests(locale: "en", hostUID: 998)
        #expect(requests.map(\.site) == [.field(id: "host", index: 0), .step(id: "account", index: 3)])
        #expect(requests.map(\.validator) == ["flowd.hostname", "test.step"])
        for request in requests {
            #expect(request.context.sessionID.isEmpty && request.context.answers.isEmpty)
            #expect(request.context.callerUID == 998 && request.context.locale == "en")
        }
        let describer = FakeDescriber()
        let descriptions = await requests.describe(using: describer, flow: s.flow, locale: "en")
        #expect(descriptions.texts == [.field(id: "host", index: 0): "A host name (en)", .step(id: "account", index: 3): "All fields agree (en)"])
        page = s.currentStep(descriptions: descriptions)
        #expect(try field(page, "host").ruleHints.map(\.text) == ["A host name (en)", "Must answer a ping"])
        #expect(page.ruleHints.map(\.subject) == ["test.step", "test.step-with-hint"])
        #expect(page.ruleHints.map(\.text) == ["All fields agree (en)", "Checked with the registry"])

        // Descriptions of another locale or flow version are not shown.
        let german = await s.flow.ruleDescriptionRequests(locale: "de", hostUID: 998).describe(using: describer, flow: s.flow, locale: "de")
        #expect(try field(s.currentStep(descriptions: german), "host").ruleHints.map(\.text) == ["Must answer a ping"])
        #expect(try field(SessionPresenter(s, locale: "de", descriptions: german).step(), "host").ruleHints.map(\.text)
            == ["A host name (de)", "Muss auf Ping antworten"])
        let stale = RuleDescriptions(flowFingerprint: "0000000000000000", locale: "en", texts: descriptions.texts)
        #expect(try field(s.currentStep(descriptions: stale), "host").ruleHints.map(\.text) == ["Must answer a ping"])
    }

    @Test("the example flows: a loan's return date, a phone number's format")
    func examples() throws {
        var s = try Fixture.session(Fixture.example("device-enrolment"), locale: "de")
        let hostname = try #require(s.currentStep().fields.first)
        #expect(hostname.ruleHints.isEmpty, "the plugin's description comes with the descriptions the host asked for")
        let requests = s.flow.ruleDescriptionRequests(locale: "de", hostUID: 0)
        #expect(requests.map(\.validator) == ["flowd.hostname", "flowd.date-window"])
        _ = s.applyPluginResults(try s.setAnswers(["hostname": .text("ws-berlin-042"), "role": .text("laptop")], now: 1).checks
            .map { PluginCheckResult(check: $0, outcome: .accepted) })
        try s.next()
        // Format 2: the return date is shown only for a loan, and then required.
        #expect(!s.currentStep().fields.contains { $0.id == "returnDate" })
        try s.set(["loan": .bool(true)])
        let returnDate = try field(s.currentStep(), "returnDate")
        #expect(returnDate.required && !returnDate.conditionallyRequired)
        #expect(returnDate.ruleHints.map(\.text) == ["Muss nach „Übergabedatum“ liegen"])
        #expect(returnDate.ruleHints.map(\.kind) == [.after])

        let consultation = try Fixture.flow(String(decoding: Fixture.exampleBytes("consultation"), as: UTF8.self))
        let phone = try #require(consultation.field("phone"))
        #expect(phone.patternHint?.resolve("fr") == "Chiffres, espaces et éventuellement un + initial")
    }

    @Test("a describer that fails, times out or says nothing gives no description, and the rest still come")
    func failingDescriptions() async throws {
        let flow = try Fixture.flow(Fixture.wrap(#"""
            {"id": "a", "title": "A", "fields": [
              {"id": "x", "type": "text", "label": "X", "validators": [{"plugin": "t.boom"}, {"plugin": "t.slow"}, {"plugin": "t.blank"}, {"plugin": "t.ok"}]}]}
            """#))
        let descriptions = await flow.ruleDescriptionRequests(locale: "en", hostUID: 0).describe(using: FakeDescriber(), flow: flow, locale: "en")
        #expect(descriptions.texts == [.field(id: "x", index: 3): "t.ok says hello (en)"])
        #expect(descriptions.flowFingerprint == flow.fingerprint && descriptions.locale == "en")
    }

    @Test("the loader reads the hints, and refuses a patternHint without a pattern")
    func lint() throws {
        func problems(_ field: String, rules: String = "") -> [LintProblem] {
            Fixture.problems(Fixture.wrap(#"{"id": "a", "title": "A", "fields": [\#(field)]\#(rules)}"#))
        }
        #expect(problems(#"{"id": "x", "type": "text", "label": "X", "patternHint": "Digits"}"#).map(\.path) == ["steps[0].fields[0].patternHint"])
        #expect(problems(#"{"id": "x", "type": "text", "label": "X", "patternHint": "Digits"}"#).first?.message.contains("has none") == true)
        let onNumber = problems(#"{"id": "x", "type": "number", "label": "X", "patternHint": "Digits"}"#)
        #expect(onNumber.count == 1 && onNumber[0].message.contains("applies only to text"), "\(onNumber)")
        #expect(problems(#"{"id": "x", "type": "text", "label": "X", "pattern": "[0-9]+", "patternHint": ""}"#).first?.message.contains("must not be empty") == true)
        #expect(problems(#"{"id": "x", "type": "text", "label": "X", "validators": [{"plugin": "a.b", "hint": 3}]}"#).map(\.path)
            == ["steps[0].fields[0].validators[0].hint"])
        #expect(problems(#"{"id": "x", "type": "text", "label": "X"}, {"id": "y", "type": "text", "label": "Y"}"#,
                         rules: #", "rules": [{"equals": ["x", "y"], "hint": {"en": "Same as X", "de": "Wie X"}}]"#).isEmpty)
        #expect(problems(#"{"id": "x", "type": "text", "label": "X"}, {"id": "y", "type": "text", "label": "Y"}"#,
                         rules: #", "rules": [{"equals": ["x", "y"], "hnt": "Same"}]"#).first?.message.contains("did you mean \"hint\"") == true)
    }
}

/// Describes by name: `t.boom` throws, `t.slow` times out, `t.blank` says
/// only spaces; the rest answer in the context's locale.
struct FakeDescriber: PluginDescribing {
    struct Boom: Error {}

    func describeFieldRule(_ name: String, field: FieldInfo, context: PluginContext) async throws -> String? {
        switch name {
        case "t.boom": throw Boom()
        case "t.slow": throw PluginCheckTimedOut()
        case "t.blank": return "  \n"
        case "flowd.hostname": return "A host name (\(context.locale))"
        default: return "\(name) says hello (\(context.locale))"
        }
    }

    func describeStepRule(_ name: String, step: StepInfo, context: PluginContext) async throws -> String? {
        "All fields agree (\(context.locale))"
    }
}
