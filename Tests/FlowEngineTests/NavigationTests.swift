import FlowKit
import Testing

@testable import FlowEngine

/// A flow that branches on the first answer, with Review and a submit action.
let branchyJSON = #"""
{"format": 1, "id": "branchy", "title": "Branchy",
 "steps": [
  {"id": "kind", "title": "Kind", "fields": [{"id": "kind", "type": "choice", "label": "Kind", "required": true,
     "options": [{"id": "person", "label": "Person"}, {"id": "company", "label": "Company"}]}],
   "next": [{"if": {"field": "kind", "equals": "company"}, "goto": "company"}, {"goto": "person"}]},
  {"id": "company", "title": "Company", "fields": [{"id": "companyName", "type": "text", "label": "Company name", "required": true}],
   "next": "contact"},
  {"id": "person", "title": "Person", "fields": [{"id": "fullName", "type": "text", "label": "Full name", "required": true}]},
  {"id": "contact", "title": "Contact", "fields": [
     {"id": "email", "type": "email", "label": "Email", "required": true},
     {"id": "phone", "type": "text", "label": "Phone"},
     {"id": "newsletter", "type": "toggle", "label": "Newsletter"}]}
 ],
 "review": {"note": "We reply within a day."},
 "submit": {"action": "test.submit", "options": {"queue": "b"}, "timeoutSeconds": 5}}
"""#

func branchy() throws -> FlowSession {
    try Fixture.session(Fixture.flow(branchyJSON))
}

/// Walks branchy to Review along the company branch, in `locale`.
func branchyAtReview(locale: String = "en") throws -> FlowSession {
    var s = try Fixture.session(Fixture.flow(branchyJSON), locale: locale)
    try s.set(["kind": .text("company")])
    try s.next()
    try s.set(["companyName": .text("ACME")])
    try s.next()
    try s.set(["email": .text("a@acme.example")])
    try s.next()
    #expect(s.currentStepID == "review")
    return s
}

/// Branchy on Review after a submit that failed with `failure`.
func branchyFailedOnReview(_ failure: SubmitFailure = .other) throws -> FlowSession {
    var s = try branchyAtReview()
    _ = try s.beginSubmit(now: 1)
    try s.failSubmit(failure, now: 2)
    #expect(s.state == .failed)
    return s
}

@Suite struct ProgressTests {
    @Test func stepNofMFollowsThePredictedPath() throws {
        var s = try Fixture.session(Fixture.example("survey"))
        #expect((s.stepIndex, s.stepCount) == (1, 4))  // intro, satisfaction, features, source
        #expect(s.announcement == "Step 1 of 4, Thanks for taking part")
        try s.next()
        #expect((s.stepIndex, s.stepCount) == (2, 4))
        // Choosing "dissatisfied" adds the follow-up step: M changes.
        try s.set(["satisfaction": .text("dissatisfied")])
        #expect((s.stepIndex, s.stepCount) == (2, 5))
        try s.set(["satisfaction": .text("satisfied")])
        #expect(s.stepCount == 4)
        try s.set(["satisfaction": .text("very-dissatisfied")])
        try s.next()
        #expect(s.currentStepID == "improve")
        #expect((s.stepIndex, s.stepCount) == (3, 5))
        #expect(s.currentStep().announcement == "Step 3 of 5, What went wrong")
    }

    @Test func reviewCountsAsAStep() throws {
        var s = try branchy()
        #expect(s.stepCount == 4)
        #expect(s.path.map(\.id) == ["kind", "person", "contact", "review"])
        #expect(s.path.map(\.status) == [.current, .upcoming, .upcoming, .upcoming])
        s = try branchyAtReview()
        #expect((s.stepIndex, s.stepCount) == (4, 4))
        #expect(s.announcement == "Step 4 of 4, Review")
        #expect(s.path.map(\.id) == ["kind", "company", "contact", "review"])
        #expect(s.path.map(\.status) == [.done, .done, .done, .current])
    }

    @Test func announcementsAreLocalized() throws {
        var s = try Fixture.session(Fixture.example("consultation"), locale: "de", options: ["day": weekdayOptions, "time": slotOptions])
        #expect(s.announcement == "Schritt 1 von 4, Leistung")
        try s.set(["service": .text("app")])
        try s.next()
        #expect(s.announcement == "Schritt 2 von 4, Tag und Uhrzeit")
        #expect(s.currentStep().continueLabel == "Weiter")
        #expect(s.currentStep().backLabel == "Zurück")
    }
}

@Suite struct GatingTests {
    @Test func continueIsRefusedUntilTheStepIsValid() throws {
        var s = try branchy()
        #expect(!s.canContinue)
        guard case .stayed(let errors) = try s.continueStep(now: 1) else {
            Issue.record("moved from an invalid step")
            return
        }
        #expect(errors == ["kind": "Choose an option."])
        #expect(s.currentStepID == "kind")
        try s.set(["kind": .text("person")])
        #expect(s.canContinue)
        try s.next()
        #expect(s.currentStepID == "person")
    }

    @Test func goToOnlyReachesVisitedStepsOrReview() throws {
        var s = try branchy()
        #expect(throws: SessionError(.invalidState, "step \"person\" has not been visited yet")) { try s.goTo("person", now: 1) }
        #expect(throws: SessionError(.invalidState, "step \"company\" is not on the current path")) { try s.goTo("company", now: 1) }
        #expect(throws: SessionError.self) { try s.goTo("review", now: 1) }
        #expect((try? s.goTo("nope", now: 1)) == nil)
        do {
            try s.goTo("nope", now: 1)
        } catch {
            #expect(error.kind == .notFound)
        }
        do {
            try s.goTo("complete", now: 1)
        } catch {
            #expect(error.kind == .notFound)
        }
    }

    @Test func goToForwardOnlyOverFinishedSteps() throws {
        var s = try branchyAtReview()
        try s.goTo("kind", now: 1)
        try s.goTo("contact", now: 2)  // forward over finished steps
        #expect(s.currentStepID == "contact")
        try s.goTo("company", now: 3)
        try s.set(["companyName": .text("")])
        #expect(throws: SessionError.self) { try s.goTo("contact", now: 4) }
        #expect(s.currentStepID == "company")
    }

    @Test("GoTo review after an Edit that left a step unfinished: Review marks it, Submit leads there")
    func reviewOpensWithAnUnfinishedStep() throws {
        var s = try branchyAtReview()
        try s.goTo("company", now: 1)
        try s.set(["companyName": .text("")])  // a required answer cleared
        try s.goTo("review", now: 2)
        #expect(s.currentStepID == "review")
        #expect(s.state == .review)
        #expect(!s.returningToReview)
        let review = s.review()
        #expect(review.groups.map(\.status) == ["", "Not finished", ""])
        #expect(!review.canSubmit)
        #expect(s.announcement == "Step 4 of 4, Review")
        guard case .redirected(let step) = try s.beginSubmit(now: 3) else {
            Issue.record("Submit did not lead to the unfinished step")
            return
        }
        #expect(step == "company")
        #expect(s.currentStepID == "company")
        #expect(s.returningToReview)
        #expect(s.currentErrors() == ["companyName": "This field is required."])
        try s.set(["companyName": .text("ACME")])
        try s.next()
        #expect(s.currentStepID == "review")
    }

    @Test("Review stays closed while a step on the path was never visited")
    func reviewNeedsEveryStepVisited() throws {
        var s = try branchy()
        try s.set(["kind": .text("company")])
        try s.next()
        #expect(throws: SessionError(.invalidState, "step \"contact\" has not been visited yet; Review opens once every step on the path has been")) {
            try s.goTo("review", now: 2)
        }
        #expect(s.currentStepID == "company")
        // An Edit from Review that opens a branch never seen: Review waits for it.
        var r = try branchyAtReview()
        try r.goTo("kind", now: 1)
        try r.set(["kind": .text("person")])
        #expect(throws: SessionError.self) { try r.goTo("review", now: 2) }
        let noReview = try Fixture.session(Fixture.flow(Fixture.wrap(#"{"id": "a", "title": "A", "kind": "content"}"#)))
        var copy = noReview
        #expect(throws: SessionError(.notFound, "flow \"t\" has no review")) { try copy.goTo("review", now: 1) }
    }
}

@Suite struct BackTests {
    @Test func backFollowsThePathTakenAfterABranch() throws {
        var s = try branchy()
        #expect(!s.canGoBack)
        #expect(throws: SessionError(.invalidState, "\"kind\" is the first step; there is no step before it")) {
            try s.back(now: 1)
        }
        try s.set(["kind": .text("company")])
        try s.next()
        try s.set(["companyName": .text("ACME")])
        try s.next()
        #expect(s.currentStepID == "contact")
        try s.back(now: 3)
        // Not "person", which comes right before "contact" in the file.
        #expect(s.currentStepID == "company")
        #expect(s.currentStep().fields.first?.value == .text("ACME"))
        try s.back(now: 4)
        #expect(s.currentStepID == "kind")
        #expect(!s.canGoBack)
    }

    @Test func backFromReviewGoesToTheLastStep() throws {
        var s = try branchyAtReview()
        #expect(s.canGoBack)
        try s.back(now: 1)
        #expect(s.currentStepID == "contact")
        #expect(s.state == .editing)
        #expect(!s.returningToReview)
    }
}

@Suite struct BranchTests {
    @Test func firstMatchingRuleWinsAndTheDefaultCatchesTheRest() throws {
        var s = try branchy()
        try s.set(["kind": .text("person")])
        try s.next()
        #expect(s.currentStepID == "person")
        try s.back(now: 3)
        try s.set(["kind": .text("company")])
        try s.next()
        #expect(s.currentStepID == "company")
    }

    @Test func answersFromAnAbandonedBranchAreKeptButLeftOut() throws {
        var s = try branchy()
        try s.set(["kind": .text("person")])
        try s.next()
        try s.set(["fullName": .text("Ada Lovelace")])
        try s.next()
        try s.set(["email": .text("ada@example.org")])
        try s.back(now: 3)
        try s.back(now: 4)
        // Switch branch: the person's name leaves the path.
        try s.set(["kind": .text("company")])
        try s.next()
        try s.set(["companyName": .text("Analytical Engines")])
        try s.next()
        let answers = s.answersOnPath(includeSecure: false)
        #expect(answers["fullName"] == nil)
        #expect(answers["companyName"] == .text("Analytical Engines"))
        #expect(answers["email"] == .text("ada@example.org"))
        #expect(answers["newsletter"] == .bool(false))
        try s.next()
        #expect(s.review().groups.map(\.step) == ["kind", "company", "contact"])
        guard case .run(let request) = try s.beginSubmit(now: 9) else {
            Issue.record("did not submit")
            return
        }
        #expect(request.submission.answers["fullName"] == nil)
        #expect(request.context.answers["fullName"] == nil)
        #expect(request.action == "test.submit")
        #expect(request.options["queue"] == .string("b"))
        #expect(request.timeoutSeconds == 5)
        try s.cancelSubmit(now: 10)

        // Back on the person branch, the kept answer returns; that step was
        // finished before, so the Edit goes straight back to Review.
        try s.goTo("kind", now: 11)
        try s.set(["kind": .text("person")])
        try s.next()
        #expect(s.currentStepID == "review")
        #expect(s.review().groups.map(\.step) == ["kind", "person", "contact"])
        #expect(s.review().groups[1].answers.first?.display == "Ada Lovelace")
        #expect(s.answersOnPath(includeSecure: false)["fullName"] == .text("Ada Lovelace"))
        #expect(s.answersOnPath(includeSecure: false)["companyName"] == nil)
    }

    @Test func anEditThatOpensANewBranchLeadsThroughIt() throws {
        var s = try branchyAtReview()
        try s.goTo("kind", now: 1)
        try s.set(["kind": .text("person")])
        #expect(s.continueLabel == "Continue")
        try s.next()
        #expect(s.currentStepID == "person")
        #expect(s.returningToReview)
        #expect(s.continueLabel == "Back to review")
        try s.set(["fullName": .text("Grace Hopper")])
        try s.next()
        #expect(s.currentStepID == "review")
        #expect(s.path.map(\.id) == ["kind", "person", "contact", "review"])
    }

    @Test func contentStepsContinueWithoutFields() throws {
        var s = try Fixture.session(Fixture.example("survey"))
        let view = s.currentStep()
        #expect(view.kind == .content)
        #expect(view.fields.isEmpty)
        #expect(view.icon == "dialog-information")
        #expect(view.body.hasPrefix("Your answers help us"))
        #expect(s.canContinue)
        let completion = try s.next()
        #expect(completion?.step == "intro")
        #expect(completion?.answers.isEmpty == true)
    }
}
