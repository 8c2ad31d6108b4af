import DBus
import FlowClient
import FlowEngine
import FlowProtocol
import Testing

/// The step page's API 1.1 keys (docs/dbus-api.md, "since 1.1") as a client
/// reads them: through flowd, the bus and FlowClient's decoder.
@Suite("API 1.1 page data through flowd")
struct PageDataTests {
    /// Every kind of hint a page carries: a pattern's, a toggle's labels, a
    /// `requiredIf` with the flow's hint, an `equals` rule, a plugin field
    /// validator and a plugin step validator with the flow's hints (it
    /// compares the step's first two fields).
    static let hinted = """
        {"format": 1, "id": "hinted", "title": {"en": "Loan", "de": "Darlehen"},
         "description": {"en": "An application", "de": "Ein Antrag"},
         "steps": [
          {"id": "about", "title": {"en": "About", "de": "Über"}, "fields": [
            {"id": "first", "type": "text", "label": {"en": "First", "de": "Erstes"}},
            {"id": "second", "type": "text", "label": "Second"},
            {"id": "purpose", "type": "choice", "label": {"en": "Purpose", "de": "Zweck"}, "required": true,
             "options": [{"id": "loan", "label": {"en": "Loan", "de": "Darlehen"}}, {"id": "gift", "label": "Gift"}]},
            {"id": "phone", "type": "text", "label": "Phone", "pattern": "[0-9]+",
             "patternHint": {"en": "Digits only", "de": "Nur Ziffern"}},
            {"id": "income", "type": "number", "label": {"en": "Income", "de": "Einkommen"},
             "validators": [{"plugin": "test.even", "hint": {"en": "An even number", "de": "Eine gerade Zahl"}}]},
            {"id": "ok", "type": "toggle", "label": "OK"}],
           "rules": [
            {"requiredIf": "income", "if": {"field": "purpose", "equals": "loan"},
             "hint": {"en": "Required for loans", "de": "Für Darlehen erforderlich"}},
            {"equals": ["first", "second"]},
            {"plugin": "test.same-answers", "hint": {"en": "Checked twice", "de": "Zweimal geprüft"}}]}],
         "review": {},
         "submit": {"action": "test.fail-submit"}}
        """

    static let settings = DaemonSettings(flows: ["hinted.json": hinted], plugins: ["FixtureTestPlugin"])

    @Test("GetStep carries the labels, the flow's texts, the locales and every rule hint, in the session's language")
    func stepPage() async throws {
        try await withDaemon(Self.settings) { fixture in
            let client = fixture.client
            let session = try await client.startSession(flow: "hinted", locale: "de_DE.UTF-8", prefill: [:])
            var page = try await client.step(session)
            #expect(page.progressLabel == "Schritt 1 von 2")
            #expect(page.retryLabel == "Erneut versuchen" && page.optionalLabel == "(optional)")
            #expect(page.notSentLabel == "Nicht gesendet")
            #expect(!page.cancelLabel.isEmpty && !page.submittingLabel.isEmpty)
            #expect(page.flowTitle == "Darlehen" && page.flowDescription == "Ein Antrag")
            #expect(page.locale == "de-DE" && page.effectiveLocale == "de")
            #expect(page.ruleHints == [RuleHint(kind: .plugin, subject: "test.same-answers", text: "Zweimal geprüft")])

            #expect(page.field("ok")?.yesLabel == "Ja" && page.field("ok")?.noLabel == "Nein")
            #expect(page.field("phone")?.yesLabel == "", "yes and no for toggles only")
            #expect(page.field("phone")?.patternHint == "Nur Ziffern" && page.field("first")?.patternHint == "")
            let income = try #require(page.field("income"))
            #expect(income.conditionallyRequired && !income.required, "required as it is now: not yet")
            #expect(income.ruleHints == [
                RuleHint(kind: .requiredIf, subject: "purpose", text: "Für Darlehen erforderlich"),
                RuleHint(kind: .plugin, subject: "test.even", text: "Eine gerade Zahl"),
            ])
            #expect(page.field("second")?.ruleHints == [RuleHint(kind: .equals, subject: "first", text: "Muss mit „Erstes“ übereinstimmen")])

            // The requirement follows the answer it depends on.
            try await client.setAnswers(session, ["purpose": "loan"])
            page = try await client.step(session)
            #expect(page.field("income")?.required == true && page.field("income")?.conditionallyRequired == true)

            // ListFlows: every translation of the description.
            let summary = try #require(try await client.listFlows().first { $0.id == "hinted" })
            #expect(summary.descriptions == ["en": "An application", "de": "Ein Antrag"])
            #expect(summary.description(in: "de-AT") == "Ein Antrag" && summary.title(in: "de-AT") == "Darlehen")
        }
    }

    @Test("a failed submit's message is the page's error on Review, as LastError says it")
    func failedSubmitOnThePage() async throws {
        try await withDaemon(Self.settings) { fixture in
            let client = fixture.client
            let session = try await client.startSession(flow: "hinted", locale: "en", prefill: [:])
            try await client.setAnswers(session, ["purpose": "gift", "first": "a", "second": "a"])
            #expect(try await client.continueStep(session) == [:])
            #expect(try await client.step(session).error == "", "no error before a submit failed")
            let failure = await #expect(throws: FlowClientError.self) { try await client.submit(session) }
            #expect(failure?.kind == .flowd(.submitFailed))
            let page = try await client.step(session)
            let properties = try await client.properties(session)
            #expect(properties.state == .failed && page.kind == .review)
            #expect(!page.error.isEmpty && page.error == properties.lastError && page.error == failure?.message)
            #expect(page.retryLabel == "Try again")
        }
    }
}
