import FlowKit
import Testing

@testable import FlowEngine

/// `SessionPresenter` alone: a pure function of (session, strings, locale).
/// The same session goes in; the pages come out in English and in German,
/// and the session is left as it was.
@Suite struct PresenterTests {
    static let flow = """
        {"format": 1, "id": "p", "title": "P", "review": {"note": {"en": "We reply soon.", "de": "Wir antworten bald."}},
         "steps": [
          {"id": "who", "title": {"en": "About you", "de": "Über Sie"}, "fields": [
            {"id": "name", "type": "text", "label": {"en": "Name", "de": "Name"}, "required": true},
            {"id": "age", "type": "number", "label": {"en": "Age", "de": "Alter"}, "minimum": 18},
            {"id": "pw", "type": "secure", "label": {"en": "Password", "de": "Passwort"}},
            {"id": "pw2", "type": "secure", "label": {"en": "Repeat", "de": "Wiederholung"}}],
           "rules": [{"equals": ["pw", "pw2"]}]},
          {"id": "what", "title": {"en": "Interests", "de": "Interessen"}, "fields": [
            {"id": "topics", "type": "multichoice", "label": {"en": "Topics", "de": "Themen"}, "other": true,
             "options": [{"id": "a", "label": {"en": "Art", "de": "Kunst"}}, {"id": "m", "label": {"en": "Music", "de": "Musik"}}]},
            {"id": "news", "type": "toggle", "label": {"en": "Newsletter", "de": "Newsletter"}},
            {"id": "day", "type": "date", "label": {"en": "Day", "de": "Tag"}, "after": "today"}]}]}
        """

    /// A session in English on the first step, with a too-young age and
    /// passwords that differ (both errors shown).
    func session() throws -> FlowSession {
        var s = try Fixture.session(Fixture.flow(Self.flow))
        try s.set(["name": .text("Ada"), "age": .integer(12), "pw": .text("one"), "pw2": .text("two")])
        return s
    }

    @Test("the step page in two locales: titles, labels, hints, errors, buttons and the announcement")
    func stepInTwoLocales() throws {
        let s = try session()
        let en = SessionPresenter(s, locale: "en").step()
        let de = SessionPresenter(s, locale: "de").step()
        #expect((en.title, de.title) == ("About you", "Über Sie"))
        #expect(en.fields.map(\.label) == ["Name", "Age", "Password", "Repeat"])
        #expect(de.fields.map(\.label) == ["Name", "Alter", "Passwort", "Wiederholung"])
        #expect(en.fields[1].error == "Enter a number of 18 or more.")
        #expect(de.fields[1].error == "Bitte eine Zahl ab 18 eingeben.")
        // A step rule names the other field by its label, in the page's locale.
        #expect(en.fields[3].error == "This must match Password.")
        #expect(de.fields[3].error == "Muss mit „Passwort“ übereinstimmen.")
        #expect((en.continueLabel, de.continueLabel) == ("Continue", "Weiter"))
        #expect((en.backLabel, de.backLabel) == ("Back", "Zurück"))
        #expect(en.announcement == "Step 1 of 3, About you")
        #expect(de.announcement == "Schritt 1 von 3, Über Sie")
        // What is not words is the same in both.
        #expect(en.fields.map(\.isSet) == de.fields.map(\.isSet))
        #expect(en.fields.map(\.value) == de.fields.map(\.value))
        #expect((en.index, en.count, en.canGoBack, en.canContinue) == (de.index, de.count, de.canGoBack, de.canContinue))
        #expect((en.index, en.count, en.canGoBack, en.canContinue) == (1, 3, false, false))
        // A secure value is never shown, only that it is set.
        #expect(en.fields[2].value == nil)
        #expect(en.fields[2].isSet)
    }

    @Test("choices: option labels, the Other label and the multiple-choice hint follow the locale")
    func choicesInTwoLocales() throws {
        var s = try session()
        try s.set(["age": .integer(30), "pw2": .text("one")])
        try s.next()
        let en = SessionPresenter(s, locale: "en").step()
        let de = SessionPresenter(s, locale: "de").step()
        #expect(en.fields[0].options.map(\.label) == ["Art", "Music"])
        #expect(de.fields[0].options.map(\.label) == ["Kunst", "Musik"])
        #expect((en.fields[0].otherLabel, de.fields[0].otherLabel) == ("Other", "Andere"))
        #expect((en.fields[0].hint, de.fields[0].hint) == ("Select all that apply", "Alle zutreffenden auswählen"))
        #expect(en.fields[0].options.map(\.id) == de.fields[0].options.map(\.id))
        // "today" resolves with the session's clock, not with the locale.
        #expect(en.fields[2].after == "2025-06-15")
        #expect(de.fields[2].after == en.fields[2].after)
    }

    @Test("the Review page in two locales: display values, statuses and Edit labels")
    func reviewInTwoLocales() throws {
        var s = try session()
        try s.set(["age": .integer(30), "pw2": .text("one")])
        try s.next()
        try s.set(["topics": .list(["m", "other"]), "topics.other": .text("Chess")])
        let en = SessionPresenter(s, locale: "en").review()
        let de = SessionPresenter(s, locale: "de").review()
        #expect((en.title, de.title) == ("Review", "Übersicht"))
        #expect((en.note, de.note) == ("We reply soon.", "Wir antworten bald."))
        #expect((en.submitLabel, de.submitLabel) == ("Submit", "Absenden"))
        #expect(en.groups.map(\.title) == ["About you", "Interests"])
        #expect(de.groups.map(\.title) == ["Über Sie", "Interessen"])
        #expect(en.groups[0].answers.map(\.display) == ["Ada", "30", "••••••••", "••••••••"])
        #expect(de.groups[0].answers.map(\.display) == ["Ada", "30", "••••••••", "••••••••"])
        // The second step is not finished yet (Continue was not pressed there).
        #expect((en.groups[1].status, de.groups[1].status) == ("Not finished", "Nicht abgeschlossen"))
        #expect(en.groups[1].answers.map(\.display) == ["Music, Chess", "No", "Not given"])
        #expect(de.groups[1].answers.map(\.display) == ["Musik, Chess", "Nein", "Keine Angabe"])
        #expect((en.groups[1].editLabel, de.groups[1].editLabel) == ("Edit “Interests”", "„Interessen“ bearbeiten"))
        #expect(!en.canSubmit && !de.canSubmit)
        #expect(en.groups.map(\.finished) == de.groups.map(\.finished))
    }

    @Test("Review and messages write dates and decimals the locale's way; the answers stay ISO and numbers")
    func datesAndDecimalsFollowTheLocale() throws {
        let flow = """
            {"format": 1, "id": "d", "title": "D", "steps": [{"id": "s", "title": "S", "fields": [
              {"id": "day", "type": "date", "label": "Day", "after": "2025-06-01"},
              {"id": "hours", "type": "number", "label": "Hours", "maximum": 10.5}]}]}
            """
        var s = try Fixture.session(Fixture.flow(flow))
        try s.set(["day": .text("2025-07-08"), "hours": .number(2.5)])
        func review(_ locale: String) -> [String] { SessionPresenter(s, locale: locale).review().groups[0].answers.map(\.display) }
        #expect(review("en") == ["2025-07-08", "2.5"])
        #expect(review("de") == ["08.07.2025", "2,5"])
        #expect(review("fr") == ["08/07/2025", "2,5"])
        #expect(review("ja") == ["2025年07月08日", "2.5"])
        // The stored answer is not touched by how it is shown.
        #expect(s.record.answers["day"] == .text("2025-07-08"))
        // A broken date bound names the date the locale's way.
        var early = try Fixture.session(Fixture.flow(flow), locale: "de")
        let errors = try early.set(["day": .text("2025-05-31"), "hours": .integer(11)])
        #expect(errors["day"]?.contains("01.06.2025") == true, "\(errors)")
        #expect(errors["day"]?.contains("2025-06-01") == false)
        #expect(errors["hours"]?.contains("10,5") == true, "\(errors)")
    }

    @Test("the progress line in two locales")
    func progressInTwoLocales() throws {
        let s = try session()
        let en = SessionPresenter(s, locale: "en").progress()
        let de = SessionPresenter(s, locale: "de").progress()
        #expect(en.path.map(\.title) == ["About you", "Interests", "Review"])
        #expect(de.path.map(\.title) == ["Über Sie", "Interessen", "Übersicht"])
        #expect(en.path.map(\.status) == [.current, .upcoming, .upcoming])
        #expect(de.path.map(\.status) == en.path.map(\.status))
        #expect((en.continueLabel, de.continueLabel) == ("Continue", "Weiter"))
        #expect((en.stepIndex, en.stepCount) == (de.stepIndex, de.stepCount))
    }

    @Test("presenting changes nothing, gives the same pages every time, and defaults to the session's locale")
    func pure() throws {
        let s = try session()
        let before = s.record
        let german = SessionPresenter(s, locale: "de")
        #expect(german.step() == german.step())
        #expect(german.review() == german.review())
        #expect(s.record == before)
        #expect(s.record.locale == "en")
        #expect(SessionPresenter(s).step() == s.currentStep())
        #expect(SessionPresenter(s).review() == s.review())
        #expect(SessionPresenter(s).progress() == s.progressSnapshot)
        // A POSIX-style request shows the same words; the page says what was asked.
        let deDE = SessionPresenter(s, locale: "de_DE").step()
        #expect((deDE.locale, deDE.effectiveLocale, german.step().locale) == ("de-DE", "de", "de"))
        #expect(deDE.fields == german.step().fields)
        #expect((deDE.title, deDE.announcement, deDE.progressLabel) == (german.step().title, german.step().announcement, german.step().progressLabel))
        // A session in German shows German without being asked.
        let inGerman = try Fixture.session(Fixture.flow(Self.flow), locale: "de")
        #expect(SessionPresenter(inGerman).step().title == "Über Sie")
        #expect(SessionPresenter(inGerman, locale: "en").step().title == "About you")
    }

    @Test("texts kept as they were said stay in the session's locale")
    func keptTexts() throws {
        var s = try session()
        try s.set(["age": .integer(30), "pw2": .text("one")])
        try s.next()
        try s.next()
        #expect(s.currentStepID == FlowSession.reviewID)
        let de = SessionPresenter(s, locale: "de").step()
        #expect(de.title == "Übersicht")
        #expect(de.continueLabel == "Absenden")
        // The announcement was made when Review arrived, in English.
        #expect(de.announcement == "Step 3 of 3, Review")
    }
}

/// `SessionText`: messages into words.
@Suite struct SessionTextTests {
    @Test func wordsBuiltinFlowAndVerbatimMessages() {
        let en = SessionText(locale: "en")
        let de = SessionText(locale: "de")
        let message = SessionMessage.builtin(.stepAnnouncement, [
            "n": .verbatim("2"), "m": .verbatim("4"),
            "title": .flow(LocalizedText(translations: [.init(locale: "en", text: "Day"), .init(locale: "de", text: "Tag")])),
        ])
        #expect(en(message) == "Step 2 of 4, Day")
        #expect(de(message) == "Schritt 2 von 4, Tag")
        #expect(de(.verbatim("as is {n}")) == "as is {n}")
        #expect(en(.flow("Between {min} and {max}", ["min": .verbatim("1")])) == "Between 1 and {max}")
        #expect(en(["": .builtin(.required), "f": .verbatim("x")]) == ["": "This field is required.", "f": "x"])
    }
}
