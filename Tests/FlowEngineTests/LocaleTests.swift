import FlowKit
import Foundation
import Testing

@testable import FlowEngine

/// The session's language: requested and effective, the flow's title and
/// description in it, and changing it.
@Suite struct LocaleTests {
    @Test("the effective locale is where the request lands in the flow's locales", arguments: [
        ("ar", "en"), ("de-AT", "de"), ("de_DE.UTF-8", "de"), ("fr-CA", "fr"), ("FR", "fr"), ("C", "en"), ("zh-TW", "en"),
    ])
    func effectiveLocale(requested: String, effective: String) throws {
        let flow = try Fixture.example("consultation")
        #expect(flow.locales == ["en", "de", "fr"])
        #expect(flow.effectiveLocale(for: requested) == effective)
        let s = try Fixture.session(flow, locale: requested)
        #expect(s.effectiveLocale == effective)
        #expect(s.requestedLocale == LocaleFallback.normalize(requested))
        let page = s.currentStep()
        #expect(page.locale == s.requestedLocale)
        #expect(page.effectiveLocale == effective)
    }

    @Test("other languages of the same family, and a flow in one language")
    func chains() throws {
        let pt = try Fixture.flow(Fixture.wrap(#"{"id": "a", "title": {"en": "A", "pt-BR": "Á"}, "kind": "content"}"#))
        #expect(pt.effectiveLocale(for: "pt-PT") == "pt-BR")
        #expect(pt.effectiveLocale(for: "pt") == "pt-BR")
        let german = try Fixture.flow(Fixture.wrap(#"{"id": "a", "title": "A", "kind": "content"}"#, extra: #""locales": ["de"]"#))
        #expect(german.effectiveLocale(for: "ja") == "de", "the flow has nothing else")
        let plain = try Fixture.flow(Fixture.wrap(#"{"id": "a", "title": "A", "kind": "content"}"#))
        #expect(plain.effectiveLocale(for: "ar") == "en")
    }

    @Test("a flow's title and description in a requested locale, for lists")
    func summaries() throws {
        let flow = try Fixture.example("consultation")
        let de = flow.summary(locale: "de-CH")
        #expect(de == LocalizedFlowSummary(
            id: "consultation", title: "Beratung buchen",
            description: "Sagen Sie uns, was Sie brauchen, und wählen Sie einen passenden Termin.", locale: "de"))
        let ar = flow.summary(locale: "ar")
        #expect((ar.title, ar.locale) == ("Book a consultation", "en"))
        #expect(flow.summary(locale: nil) == flow.summary(locale: "en"), "no locale: the flow's first")
        let untitled = try Fixture.flow(Fixture.wrap(#"{"id": "a", "title": "A", "kind": "content"}"#))
        #expect(untitled.summary(locale: "fr").description == "")
    }

    @Test("the step page carries the flow's title and description in the session's language")
    func pageCarriesTheFlow() throws {
        let s = try Fixture.session(Fixture.example("consultation"), locale: "fr")
        let page = s.currentStep()
        #expect(page.flowTitle == "Réserver une consultation")
        #expect(page.flowDescription == "Dites-nous ce dont vous avez besoin et choisissez un créneau.")
        #expect(s.flowSummary.title == page.flowTitle)
        let en = SessionPresenter(s, locale: "en").step()
        #expect((en.flowTitle, en.locale, en.effectiveLocale) == ("Book a consultation", "en", "en"))
    }

    @Test("SetLocale: the page, the kept texts and the record follow; no new announcement")
    func setLocale() throws {
        var s = try branchyFailedOnReview()
        let sequence = s.announcementSequence
        let change = try s.setLocale("de_DE", now: 3)
        #expect(change.checks.isEmpty && change.providers.isEmpty)
        #expect(s.requestedLocale == "de-DE")
        #expect(s.record.locale == "de-DE")
        #expect(s.record.updatedAt == 3)
        #expect(s.lastError == "Senden fehlgeschlagen. Bitte erneut versuchen.")
        #expect(s.announcement == "Senden fehlgeschlagen. Bitte erneut versuchen.")
        #expect(s.announcementSequence == sequence, "a change of language is not an event to announce")
        #expect(s.state == .failed)
        #expect(s.currentStepID == "review")
        let page = s.currentStep()
        #expect((page.title, page.continueLabel, page.error) == ("Übersicht", "Absenden", "Senden fehlgeschlagen. Bitte erneut versuchen."))
        // The record keeps it across a restart.
        let record = try JSONDecoder().decode(SessionRecord.self, from: Data(try s.record.encodedJSON()))
        let restored = try FlowSession(restoring: record, flow: Fixture.flow(branchyJSON), clock: TestClock())
        #expect(restored.requestedLocale == "de-DE")
        #expect(restored.currentStep().title == "Übersicht")
        // A plugin's own words stay as the plugin said them.
        _ = try s.beginSubmit(now: 4)
        try s.failSubmit(.localized("Der Kalender ist voll."), now: 5)
        _ = try s.setLocale("en", now: 6)
        #expect(s.lastError == "Der Kalender ist voll.")
        // The arrival and Review's announcement are reworded too.
        var r = try branchyAtReview()
        _ = try r.setLocale("ja", now: 1)
        #expect(r.announcement == "ステップ 4/4、確認")
        var t = try branchy()
        _ = try t.setLocale("fr", now: 1)
        #expect(t.announcement == Strings.builtin.text(.stepAnnouncement, locale: "fr", ["n": "1", "m": "4", "title": "Kind"]))
    }

    @Test("SetLocale refuses what is not a locale and changes nothing", arguments: [
        ".UTF-8", "@euro", "e", "english", "de--DE", "de-DE-", "zh-Hant-TW-xxxxxxxxx", "../etc", "de DE", String(repeating: "a", count: 40),
    ])
    func badLocale(tag: String) throws {
        var s = try branchyAtReview()
        let before = s.record
        #expect(throws: SessionError.self) { _ = try s.setLocale(tag, now: 9) }
        #expect(s.record == before)
        do {
            _ = try s.setLocale(tag, now: 9)
        } catch {
            #expect(error.kind == .invalidArgs)
            #expect(error.message.contains("is not a locale tag"))
        }
    }

    @Test("SetLocale asks plugins again for what they said in the old language")
    func pluginTextsAreAskedAgain() throws {
        let flow = try Fixture.flow(#"""
            {"format": 1, "id": "p", "title": "P", "steps": [
              {"id": "a", "title": "A", "fields": [
                {"id": "host", "type": "text", "label": "Host", "validators": [{"plugin": "flowd.hostname"}]},
                {"id": "day", "type": "choice", "label": "Day", "optionsFrom": "flowd.weekdays"}],
               "rules": [{"plugin": "test.step"}]}]}
            """#)
        var s = try Fixture.session(flow, options: ["day": weekdayOptions])
        let set = try s.setAnswers(["host": .text("printer-")], now: 1)
        _ = s.applyPluginResults(set.checks.map { PluginCheckResult(check: $0, outcome: .rejected("Use letters, digits and hyphens.")) })
        #expect(s.currentErrors()["host"] == "Use letters, digits and hyphens.")
        let change = try s.setLocale("de", now: 2)
        #expect(change.checks.map(\.validator) == ["flowd.hostname"])
        #expect(change.checks.first?.context.locale == "de")
        #expect(change.providers.map(\.provider.name) == ["flowd.weekdays"])
        #expect(change.providers.first?.field.id == "day")
        #expect(s.currentErrors()["host"] == nil, "the English message is gone until the check runs again")
        let errors = s.applyPluginResults(change.checks.map {
            PluginCheckResult(check: $0, outcome: .rejected("Buchstaben, Ziffern und Bindestriche verwenden."))
        })
        #expect(errors["host"] == "Buchstaben, Ziffern und Bindestriche verwenden.")
        try s.setDynamicOptions(field: "day", [ChoiceOption(id: "2025-06-16", label: "Montag, 16. Juni")])
        #expect(s.currentStep().fields[1].options.map(\.label) == ["Montag, 16. Juni"])
        // The same locale again: nothing to do; "" means English, as when a session starts.
        let same = try s.setLocale("de", now: 3)
        #expect(same.checks.isEmpty && same.providers.isEmpty)
        _ = try s.setLocale("", now: 4)
        #expect(s.requestedLocale == "en")
    }

    @Test("a submitted session changes language too, and asks nothing of plugins")
    func settled() throws {
        var s = try branchyAtReview()
        _ = try s.beginSubmit(now: 1)
        try s.finishSubmit(receipt: SubmitReceipt(), now: 2)
        let change = try s.setLocale("it", now: 3)
        #expect(change.checks.isEmpty && change.providers.isEmpty)
        #expect(s.announcement == "Inviato")
        #expect(s.currentStep().title == "Inviato")
        #expect(s.state == .submitted)
    }
}
