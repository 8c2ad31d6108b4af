import FlowKit
import Foundation
import Testing

@testable import FlowEngine

@Suite struct ReviewTests {
    @Test func groupsShowLabelsDisplayValuesAndNotGiven() throws {
        let s = try branchyAtReview()
        let review = s.review()
        #expect(review.title == "Review")
        #expect(review.note == "We reply within a day.")
        #expect(review.submitLabel == "Submit")
        #expect(review.canSubmit)
        #expect(review.groups.map(\.title) == ["Kind", "Company", "Contact"])
        #expect(review.groups.allSatisfy { $0.finished && $0.status.isEmpty })
        #expect(review.groups[0].answers == [ReviewAnswer(field: "kind", label: "Kind", display: "Company")])
        #expect(review.groups[2].editLabel == "Edit “Contact”")
        #expect(review.groups[2].answers.map(\.display) == ["a@acme.example", "Not given", "No"])
        let view = s.currentStep()
        #expect(view.kind == .review)
        #expect(view.continueLabel == "Submit")
        #expect(view.description == "We reply within a day.")
    }

    @Test func displaysSecureOtherAndMultipleChoiceValues() throws {
        let flow = try Fixture.flow(#"""
        {"format": 1, "id": "d", "title": "D", "review": {"title": {"en": "Check", "ja": "確認"}},
         "steps": [{"id": "s", "title": "S", "fields": [
           {"id": "pw", "type": "secure", "label": "Password"},
           {"id": "pin", "type": "secure", "label": "PIN"},
           {"id": "src", "type": "choice", "label": "Source", "options": [{"id": "web", "label": {"en": "Web", "ja": "ウェブ"}}], "other": true},
           {"id": "days", "type": "multichoice", "label": "Days", "options": [{"id": "mon", "label": {"en": "Mon", "ja": "月"}}, {"id": "tue", "label": {"en": "Tue", "ja": "火"}}], "other": true},
           {"id": "n", "type": "number", "label": "N"},
           {"id": "ok", "type": "toggle", "label": "OK"}]}]}
        """#)
        var s = try Fixture.session(flow)
        try s.set(["pw": .text("s3cret!"), "src": .text("other"), "src.other": .text("Radio"),
                   "days": .list(["tue", "mon", "other"]), "days.other": .text("Sun"), "n": .number(2.5), "ok": .bool(true)])
        let answers = s.review().groups[0].answers.map(\.display)
        #expect(answers == ["••••••••", "Not given", "Radio", "Tue, Mon, Sun", "2.5", "Yes"])
        var ja = try Fixture.session(flow, locale: "ja")
        try ja.set(["days": .list(["mon", "tue"]), "src": .text("web")])
        #expect(ja.review().title == "確認")
        #expect(ja.review().groups[0].answers.map(\.display) == ["未入力", "未入力", "ウェブ", "月、火", "未入力", "いいえ"])
        #expect(ja.review().groups[0].editLabel == "「S」を編集")
    }

    @Test func contentStepsHaveNoGroupAndOptionsKeepTheirIcons() throws {
        var s = try Fixture.session(Fixture.example("survey"))
        try s.next()
        try s.set(["satisfaction": .text("satisfied")])
        try s.next()
        #expect(s.currentStep().fields[0].options.first?.icon == "x-office-calendar")
        #expect(s.review().groups.map(\.step) == ["satisfaction", "features", "source"])
        #expect(s.review().groups[1].answers.first?.display == "Not given")
    }

    @Test func aSettledSessionStillMasksItsSecureValues() throws {
        let flow = try Fixture.flow(Fixture.wrap(#"{"id": "s", "title": "S", "fields": [{"id": "pw", "type": "secure", "label": "PW", "required": true}]}"#))
        var s = try Fixture.session(flow)
        try s.set(["pw": .text("topsecret")])
        guard case .submit(_, .settledWithoutAction) = try s.continueStep(now: 1) else {
            Issue.record("did not settle")
            return
        }
        #expect(s.review().groups[0].answers[0].display == "••••••••")
        #expect(s.submission(now: 2).secureAnswers.isEmpty)  // forgotten once settled
    }

    @Test func editThenBackToReview() throws {
        var s = try branchyAtReview()
        try s.goTo("company", now: 1)
        #expect(s.state == .editing)
        #expect(s.returningToReview)
        #expect(s.continueLabel == "Back to review")
        #expect(s.currentStep().continueLabel == "Back to review")
        try s.set(["companyName": .text("ACME Ltd")])
        let completion = try s.next()
        #expect(completion == StepCompletion(step: "company", answers: ["companyName": .text("ACME Ltd")]))
        #expect(s.currentStepID == "review")
        #expect(s.state == .review)
        #expect(!s.returningToReview)
        #expect(s.review().groups[1].answers.first?.display == "ACME Ltd")
    }

    @Test func aStepThatTurnedInvalidAfterReviewIsNotFinishedAndSubmitGoesThere() throws {
        var s = try branchyAtReview()
        try s.goTo("contact", now: 1)
        try s.set(["email": .text("")])
        let review = s.review()
        #expect(review.groups.map(\.finished) == [true, true, false])
        #expect(review.groups[2].status == "Not finished")
        #expect(!review.canSubmit)
        try s.goTo("kind", now: 2)
        guard case .redirected(let step) = try s.beginSubmit(now: 3) else {
            Issue.record("submitted with an unfinished step")
            return
        }
        #expect(step == "contact")
        #expect(s.currentStepID == "contact")
        #expect(s.state == .editing)
        #expect(s.currentStep().fields[0].error == "This field is required.")
        try s.set(["email": .text("new@acme.example")])
        try s.next()
        #expect(s.currentStepID == "review")
    }

    @Test func continueOnReviewSubmits() throws {
        var s = try branchyAtReview()
        guard case .submit(nil, .run(let request)) = try s.continueStep(now: 5) else {
            Issue.record("Continue on Review did not submit")
            return
        }
        #expect(request.submission.id == "\(s.record.id)-\(s.record.revision)")
        #expect(request.submission.sessionID == s.record.id)
        #expect(s.state == .submitting)
    }
}

@Suite struct IdempotencyKeyTests {
    @Test func theKeyStaysForTheSameAnswersAndChangesWithThem() throws {
        var s = try branchyAtReview()
        guard case .run(let first) = try s.beginSubmit(now: 1) else {
            Issue.record("did not run the action")
            return
        }
        let key = first.submission.idempotencyKey
        #expect(key == first.submission.id)
        #expect(key.hasPrefix(s.record.id + "-"))
        #expect(key.count <= 64 && key.allSatisfy { $0.isHexDigit || $0 == "-" })

        // Interrupted by a restart: the record goes to disk and comes back.
        s.markInterrupted(now: 2)
        let stored = try JSONDecoder().decode(SessionRecord.self, from: JSONEncoder().encode(s.record))
        var restored = try FlowSession(restoring: stored, flow: Fixture.flow(branchyJSON), clock: TestClock())
        guard case .run(let retry) = try restored.beginSubmit(now: 3) else {
            Issue.record("the retry did not run")
            return
        }
        #expect(retry.submission.idempotencyKey == key)

        // The same value again changes nothing; another value is new content.
        try restored.failSubmit(.other, now: 4)
        try restored.goTo("contact", now: 5)
        try restored.set(["email": .text("a@acme.example")])
        try restored.next()
        guard case .run(let same) = try restored.beginSubmit(now: 6) else { return }
        #expect(same.submission.idempotencyKey == key)
        try restored.failSubmit(.other, now: 7)
        try restored.goTo("contact", now: 8)
        try restored.set(["email": .text("b@acme.example")])
        try restored.next()
        guard case .run(let changed) = try restored.beginSubmit(now: 9) else {
            Issue.record("the changed submit did not run")
            return
        }
        #expect(changed.submission.idempotencyKey != key)
        #expect(changed.submission.answers["email"] == .text("b@acme.example"))
    }

    @Test func aReloadThatDropsAnAnswerMakesANewKey() throws {
        var s = try branchyAtReview()
        let key = s.idempotencyKey
        // The new version has no company step: companyName is dropped.
        let changed = branchyJSON
            .replacingOccurrences(of: #"{"if": {"field": "kind", "equals": "company"}, "goto": "company"}, "#, with: "")
            .replacingOccurrences(of: #"{"id": "company", "title": "Company", "fields": [{"id": "companyName", "type": "text", "label": "Company name", "required": true}],"#, with: "")
            .replacingOccurrences(of: #""next": "contact"},"#, with: "")
        let restored = try FlowSession(restoring: s.record, flow: try Fixture.flow(changed), clock: TestClock())
        #expect(restored.record.answers["companyName"] == nil)
        #expect(restored.idempotencyKey != key)
        // Restored against the same flow, nothing changes.
        s = try FlowSession(restoring: s.record, flow: Fixture.flow(branchyJSON), clock: TestClock())
        #expect(s.idempotencyKey == key)
    }
}

@Suite struct SubmitTests {
    @Test func successSettlesTheSession() throws {
        var s = try branchyAtReview()
        guard case .run(let request) = try s.beginSubmit(now: 10) else {
            Issue.record("did not run the action")
            return
        }
        #expect(s.state == .submitting)
        #expect(!s.canGoBack && !s.canContinue)
        #expect(request.submission.submittedAt == 10)
        #expect(request.context.stateDirectory.isEmpty)
        try s.finishSubmit(receipt: SubmitReceipt(["reference": "A-1", "message": "See you soon."]), now: 11)
        #expect(s.state == .submitted)
        #expect(s.currentStepID == "complete")
        #expect(s.announcement == "See you soon.")
        #expect(s.record.receipt?["reference"] == .string("A-1"))
        let view = s.currentStep()
        #expect(view.kind == .complete)
        #expect(view.title == "Submitted")
        #expect(view.body == "See you soon.")
        #expect((s.stepIndex, s.stepCount) == (4, 4))
        #expect(s.path.allSatisfy { $0.status == .done })
        #expect(throws: SessionError.self) { try s.back(now: 12) }
        #expect(throws: SessionError.self) { try s.goTo("kind", now: 12) }
        #expect(throws: SessionError.self) { try s.setAnswers(["email": .text("x@y.example")], now: 12) }
        #expect(throws: SessionError(.invalidState, "the session is already submitted")) { try s.cancelSubmit(now: 12) }
    }

    @Test func submittingTwice() throws {
        var s = try branchyAtReview()
        guard case .run = try s.beginSubmit(now: 1) else {
            Issue.record("did not run")
            return
        }
        #expect(throws: SessionError(.invalidState, "a submit is already running")) { _ = try s.beginSubmit(now: 2) }
        #expect(throws: SessionError.self) { try s.setAnswers([:], now: 2) }
        try s.finishSubmit(receipt: SubmitReceipt(), now: 3)
        guard case .alreadySubmitted = try s.beginSubmit(now: 4) else {
            Issue.record("submitted a second time")
            return
        }
        #expect(s.state == .submitted)
        if case .noChange = try s.continueStep(now: 5) {} else { Issue.record("Continue changed a settled session") }
    }

    @Test func continueOnTheLastStepTwice() throws {
        var s = try Fixture.session(Fixture.example("onboarding"))
        try s.set(["plan": .text("team")])
        try s.next()
        try s.set(["reminderDays": .list(["mon", "thu"])])
        try s.next()
        #expect(s.currentStepID == "terms")
        #expect(s.continueLabel == "Start using it")
        try s.set(["acceptTerms": .bool(true)])
        guard case .submit(let completion, .run(let request)) = try s.continueStep(now: 7) else {
            Issue.record("the last Continue did not submit")
            return
        }
        #expect(completion?.step == "terms")
        #expect(request.action == "flowd.spool")
        #expect(request.submission.answers == ["plan": .text("team"), "reminderDays": .list(["mon", "thu"]), "acceptTerms": .bool(true)])
        if case .noChange = try s.continueStep(now: 8) {} else { Issue.record("a second Continue did something") }
        #expect(s.state == .submitting)
        try s.finishSubmit(receipt: SubmitReceipt(), now: 9)
        if case .noChange = try s.continueStep(now: 10) {} else { Issue.record("Continue after submit did something") }
        #expect(s.state == .submitted)
    }

    @Test func failureKeepsAnswersAndSubmitCanBeRetried() throws {
        var s = try branchyAtReview()
        guard case .run(let first) = try s.beginSubmit(now: 1) else { return }
        try s.failSubmit(.other, now: 2)
        #expect(s.state == .failed)
        #expect(s.lastError == "Couldn't send this. Try again.")
        #expect(s.announcement == "Couldn't send this. Try again.")
        #expect(s.answersOnPath(includeSecure: false)["companyName"] == .text("ACME"))
        guard case .run(let second) = try s.beginSubmit(now: 3) else {
            Issue.record("retry did not run")
            return
        }
        #expect(second.submission.id == first.submission.id)
        #expect(s.lastError == nil)
        try s.failSubmit(.localized("The server is full. Try tomorrow."), now: 4)
        #expect(s.lastError == "The server is full. Try tomorrow.")
        _ = try s.beginSubmit(now: 5)
        try s.failSubmit(.timedOut, now: 6)
        #expect(s.lastError == "Sending took too long. Try again.")
        _ = try s.beginSubmit(now: 7)
        try s.finishSubmit(receipt: SubmitReceipt(), now: 8)
        #expect(s.state == .submitted)
        #expect(s.announcement == "Submitted")
    }

    @Test func failureMessagesAreLocalized() throws {
        var s = try branchyAtReview(locale: "pt-BR")
        _ = try s.beginSubmit(now: 1)
        try s.failSubmit(.other, now: 2)
        #expect(s.lastError == "Não foi possível enviar. Tente novamente.")
    }

    @Test func cancelReturnsToRestQuietly() throws {
        var s = try branchyAtReview()
        try s.cancelSubmit(now: 1)  // nothing in flight: no-op
        #expect(s.state == .review)
        _ = try s.beginSubmit(now: 2)
        try s.cancelSubmit(now: 3)
        #expect(s.state == .review)
        #expect(s.lastError == nil)
        #expect(s.currentStepID == "review")
        // The action's late answer is refused.
        #expect(throws: SessionError(.invalidState, "no submit is running")) {
            try s.finishSubmit(receipt: SubmitReceipt(), now: 4)
        }
        #expect(throws: SessionError.self) { try s.failSubmit(.other, now: 4) }
        // Failed, then edited: back to editing without the error.
        _ = try s.beginSubmit(now: 5)
        try s.failSubmit(.other, now: 6)
        try s.goTo("contact", now: 7)
        #expect(s.state == .editing)
        #expect(s.lastError == nil)
    }

    @Test func aFlowWithoutAnActionSettlesAsSubmitted() throws {
        let flow = try Fixture.flow(Fixture.wrap(#"{"id": "only", "title": "Only", "fields": [{"id": "x", "type": "text", "label": "X"}]}"#))
        var s = try Fixture.session(flow)
        #expect(s.continueLabel == "Finish")
        guard case .submit(_, .settledWithoutAction) = try s.continueStep(now: 1) else {
            Issue.record("did not settle")
            return
        }
        #expect(s.state == .submitted)
        #expect(s.currentStepID == "complete")
    }

    @Test func interruptedSubmitBecomesFailed() throws {
        var s = try branchyAtReview()
        s.markInterrupted(now: 1)
        #expect(s.state == .review)  // nothing was running
        _ = try s.beginSubmit(now: 2)
        s.markInterrupted(now: 3)
        #expect(s.state == .failed)
        #expect(s.lastError == "Sending was interrupted. Try again.")
    }
}
