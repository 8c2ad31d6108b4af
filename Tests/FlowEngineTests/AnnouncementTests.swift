import FlowKit
import Foundation
import Testing

@testable import FlowEngine

/// One announcement per event: each event that a screen reader should hear
/// adds one to `announcementSequence`, so a host that signals when it changes
/// signals exactly once per event, even for the same words twice in a row.
@Suite struct AnnouncementTests {
    /// The announcements `body` makes: (how many, the last words).
    func announced(_ s: inout FlowSession, _ body: (inout FlowSession) throws -> Void) rethrows -> (UInt64, String) {
        let before = s.announcementSequence
        try body(&s)
        return (s.announcementSequence - before, s.announcement)
    }

    @Test("a failed submit announces its start and its failure once each; a retry that fails alike again too")
    func failedSubmit() throws {
        var s = try branchyAtReview()
        #expect(try announced(&s) { _ = try $0.beginSubmit(now: 1) } == (1, "Sending…"))
        #expect(try announced(&s) { try $0.failSubmit(.other, now: 2) } == (1, "Couldn't send this. Try again."))
        #expect(try announced(&s) { _ = try $0.beginSubmit(now: 3) } == (1, "Sending…"))
        #expect(try announced(&s) { try $0.failSubmit(.other, now: 4) } == (1, "Couldn't send this. Try again."))
        // No submit is running: a late success is refused and says nothing.
        #expect(announced(&s) { s in
            #expect(throws: SessionError(.invalidState, "no submit is running")) {
                try s.finishSubmit(receipt: SubmitReceipt(), now: 5)
            }
        } == (0, "Couldn't send this. Try again."))
    }

    @Test("cancelling a submit announces Not sent, in the session's language; a cancel with nothing running is silent")
    func cancelledSubmit() throws {
        var s = try branchyAtReview()
        #expect(try announced(&s) { try $0.cancelSubmit(now: 1) } == (0, "Step 4 of 4, Review"))
        _ = try s.beginSubmit(now: 2)
        #expect(try announced(&s) { try $0.cancelSubmit(now: 3) } == (1, "Not sent"))
        #expect(s.state == .review)
        _ = try s.beginSubmit(now: 4)
        #expect(try announced(&s) { try $0.cancelSubmit(now: 5) } == (1, "Not sent"), "the same words, a new event")
        var de = try branchyAtReview(locale: "de")
        _ = try de.beginSubmit(now: 1)
        #expect(de.announcement == "Wird gesendet …")
        try de.cancelSubmit(now: 2)
        #expect(de.announcement == "Nicht gesendet")
    }

    @Test("arrivals, a settle and an interrupted submit announce once each; a refused call announces nothing")
    func movesAndSettles() throws {
        var s = try branchy()
        #expect(s.announcementSequence == 1, "the first step arrived")
        #expect(try announced(&s) { try $0.set(["kind": .text("company")]) } == (0, "Step 1 of 4, Kind"))
        #expect(try announced(&s) { try $0.next() } == (1, "Step 2 of 4, Company"))
        #expect(try announced(&s) { try $0.back(now: 3) } == (1, "Step 1 of 4, Kind"))
        #expect(announced(&s) { s in #expect(throws: SessionError.self) { try s.back(now: 4) } } == (0, "Step 1 of 4, Kind"))
        var r = try branchyAtReview()
        _ = try r.beginSubmit(now: 1)
        #expect(announced(&r) { $0.markInterrupted(now: 2) } == (1, "Sending was interrupted. Try again."))
        let flow = try Fixture.flow(Fixture.wrap(#"{"id": "only", "title": "Only", "fields": [{"id": "x", "type": "text", "label": "X"}]}"#))
        var settles = try Fixture.session(flow)
        #expect(try announced(&settles) { _ = try $0.continueStep(now: 1) } == (1, "Submitted"), "no Sending… without an action")
    }

    @Test("the sequence is kept in the record; a record written before it existed reads as 0")
    func persisted() throws {
        var s = try branchyAtReview()
        _ = try s.beginSubmit(now: 1)
        try s.cancelSubmit(now: 2)
        let sequence = s.announcementSequence
        #expect(sequence == 6)
        let fast = try JSONDecoder().decode(SessionRecord.self, from: Data(try s.record.encodedJSON()))
        #expect(fast.announcementSequence == sequence)
        let restored = try FlowSession(restoring: fast, flow: Fixture.flow(branchyJSON), clock: TestClock())
        #expect(restored.announcementSequence == sequence)

        // A record exactly as flowd 1.0 stored it: no announcementSequence.
        let old = #"""
            {"formatVersion":1,"id":"0123456789abcdef0123456789abcdef","flowID":"branchy","flowFingerprint":"0000000000000000",
             "owner":1000,"locale":"de","createdAt":1,"updatedAt":2,"revision":3,"state":"failed","currentStep":"review",
             "returningToReview":false,"visited":["kind","person","contact"],"completed":["contact","kind","person"],
             "shownErrors":["email","fullName","kind","newsletter","phone"],
             "answers":{"email":"ada@example.org","fullName":"Ada","kind":"person"},"secureFieldsSet":[],
             "dynamicOptions":{},"stepMessages":{},"lastError":"Senden fehlgeschlagen. Bitte erneut versuchen.",
             "announcement":"Senden fehlgeschlagen. Bitte erneut versuchen.","submittedAt":5}
            """#
        let record = try JSONDecoder().decode(SessionRecord.self, from: Data(old.utf8))
        #expect(record.announcementSequence == 0)
        #expect(record.lastError == "Senden fehlgeschlagen. Bitte erneut versuchen.")
        var session = try FlowSession(restoring: record, flow: Fixture.flow(branchyJSON), clock: TestClock())
        #expect(session.state == .failed)
        #expect(session.currentStep().error == "Senden fehlgeschlagen. Bitte erneut versuchen.")
        _ = try session.beginSubmit(now: 3)
        #expect(session.announcementSequence == 1)
        // A record missing a field that was always there is still refused.
        let broken = old.replacingOccurrences(of: #""announcement":"Senden fehlgeschlagen. Bitte erneut versuchen.","#, with: "")
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(SessionRecord.self, from: Data(broken.utf8)) }
    }
}

/// The labels a client would otherwise write itself, and the submit error on
/// the page.
@Suite struct PageLabelTests {
    static let toggleFlow = Fixture.wrap(#"""
        {"id": "a", "title": {"en": "Terms", "ja": "規約"}, "fields": [
          {"id": "ok", "type": "toggle", "label": "OK", "mustBeOn": true},
          {"id": "note", "type": "text", "label": "Note"}]},
        {"id": "b", "title": "B", "kind": "content"}
        """#)

    @Test("progress, retry, cancel, sending, not sent and optional, in every built-in locale",
          arguments: Strings.locales)
    func labels(locale: String) throws {
        let s = try Fixture.session(Fixture.flow(Self.toggleFlow), locale: locale)
        let page = s.currentStep()
        let strings = Strings.builtin
        #expect(page.progressLabel == strings.text(.stepCounter, locale: locale, ["n": "1", "m": "2"]))
        #expect(page.retryLabel == strings.text(.tryAgain, locale: locale))
        #expect(page.cancelLabel == strings.text(.cancel, locale: locale))
        #expect(page.submittingLabel == strings.text(.submitting, locale: locale))
        #expect(page.notSentLabel == strings.text(.notSent, locale: locale))
        #expect(page.optionalLabel == strings.text(.optional, locale: locale))
        #expect(page.fields[0].yesLabel == strings.text(.yes, locale: locale))
        #expect(page.fields[0].noLabel == strings.text(.no, locale: locale))
        #expect(page.fields[1].yesLabel.isEmpty && page.fields[1].noLabel.isEmpty, "only a toggle has them")
        for label in [page.progressLabel, page.retryLabel, page.cancelLabel, page.notSentLabel, page.optionalLabel] {
            #expect(!label.isEmpty && !label.contains("{"), "\(locale): \(label)")
        }
        if locale != "en" {
            #expect(page.retryLabel != "Try again" && page.notSentLabel != "Not sent", "\(locale) is not translated")
        }
    }

    @Test("the English and Japanese words, as a person reads them")
    func words() throws {
        let en = try Fixture.session(Fixture.flow(Self.toggleFlow)).currentStep()
        #expect((en.progressLabel, en.retryLabel, en.cancelLabel) == ("Step 1 of 2", "Try again", "Cancel"))
        #expect((en.submittingLabel, en.notSentLabel, en.optionalLabel) == ("Sending…", "Not sent", "(optional)"))
        #expect((en.fields[0].yesLabel, en.fields[0].noLabel) == ("Yes", "No"))
        let ja = try Fixture.session(Fixture.flow(Self.toggleFlow), locale: "ja").currentStep()
        #expect((ja.progressLabel, ja.retryLabel, ja.notSentLabel, ja.optionalLabel) == ("ステップ 1/2", "再試行", "未送信", "（任意）"))
    }

    @Test("a failed submit's message is the page's error on Review until the person moves or edits")
    func submitErrorOnReview() throws {
        var s = try branchyAtReview()
        #expect(s.currentStep().error.isEmpty)
        _ = try s.beginSubmit(now: 1)
        try s.failSubmit(.localized("The calendar is full."), now: 2)
        #expect(s.currentStep().error == "The calendar is full.")
        #expect(s.currentStep().kind == .review)
        _ = try s.beginSubmit(now: 3)
        #expect(s.currentStep().error.isEmpty, "a new attempt runs")
        try s.failSubmit(.timedOut, now: 4)
        #expect(s.currentStep().error == "Sending took too long. Try again.")
        try s.goTo("contact", now: 5)
        #expect(s.currentStep().error.isEmpty)
        try s.next()
        #expect(s.currentStep().error.isEmpty)
    }

    @Test("without Review, the failure shows on the last step, which stays where it was")
    func submitErrorOnTheLastStep() throws {
        var s = try Fixture.session(Fixture.example("onboarding"), locale: "fr")
        try s.set(["plan": .text("team")])
        try s.next()
        try s.set(["reminderDays": .list(["mon"])])
        try s.next()
        try s.set(["acceptTerms": .bool(true)])
        _ = try s.continueStep(now: 3)
        try s.failSubmit(.other, now: 4)
        #expect(s.currentStepID == "terms")
        #expect(s.currentStep().error == "Impossible d’envoyer. Réessayez.")
        try s.set(["acceptTerms": .bool(false)])
        #expect(s.currentStep().error.isEmpty, "editing leaves the failed state")
    }
}
