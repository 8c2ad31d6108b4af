import FlowKit
import Testing

@testable import FlowEngine

/// Answer files: answers for every step, driving a session without a person.
@Suite struct AnswerFileTests {
    func consultation() throws -> FlowSession {
        try Fixture.session(Fixture.example("consultation"), options: ["day": weekdayOptions, "time": slotOptions])
    }

    static let contact: [String: AnswerValue] = [
        "day": .text("2025-06-16"), "time": .text("09:30"), "name": .text("Ada"), "email": .text("ada@example.org"),
    ]

    func stepIDs(_ s: FlowSession) -> [String] { s.route().map { s.flow.steps[$0].id } }

    @Test("the answers choose the branch: a website goes by the pages step, an app does not")
    func branches() throws {
        var web = try consultation()
        let webAnswers = Self.contact.merging(["service": .text("website"), "pageCount": .integer(12)]) { a, _ in a }
        guard case .ready = try web.run(answers: webAnswers, now: 5) else {
            Issue.record("expected to reach Review")
            return
        }
        #expect(web.currentStepID == "review" && web.state == .review)
        #expect(stepIDs(web) == ["service", "pages", "when", "contact"])
        #expect(web.answersOnPath(includeSecure: false)["estimate"] == .integer(1440))
        #expect(web.review().canSubmit)

        var app = try consultation()
        let appAnswers = Self.contact.merging(["service": .text("app"), "pageCount": .integer(12)]) { a, _ in a }
        guard case .ready = try app.run(answers: appAnswers, now: 5) else {
            Issue.record("expected to reach Review")
            return
        }
        #expect(stepIDs(app) == ["service", "when", "contact"])
        #expect(app.record.answers["pageCount"] == nil, "a step the path does not reach is not answered")
        #expect(app.record.visited == ["service", "when", "contact"])
    }

    @Test("it stops at the first step that does not validate, with that step's errors; the session can go on from there")
    func stopsAtAnInvalidStep() throws {
        var s = try consultation()
        var answers = Self.contact.merging(["service": .text("website"), "pageCount": .integer(900)]) { a, _ in a }
        answers["email"] = .text("not an address")
        guard case .stopped(let step, let errors) = try s.run(answers: answers, now: 5) else {
            Issue.record("expected to stop")
            return
        }
        #expect(step == "pages")
        #expect(errors == ["pageCount": "Enter a number of 500 or less."])
        #expect(s.currentStepID == "pages" && s.state == .editing)
        // Mended, the same file goes on from there and stops at the next problem.
        answers["pageCount"] = .integer(12)
        guard case .stopped(let next, let nextErrors) = try s.run(answers: answers, now: 6) else {
            Issue.record("expected to stop at the contact step")
            return
        }
        #expect(next == "contact" && nextErrors == ["email": "Enter a valid email address, like name@example.com."])
        try s.set(["email": .text("ada@example.org")])
        try s.next()
        #expect(s.currentStepID == "review")
    }

    @Test("a field the flow does not have, or a value of the wrong type, is refused with its name, before anything changes")
    func refusals() throws {
        var s = try consultation()
        #expect(throws: SessionError(.invalidArgs, "\"pageCont\" is not a field of flow \"consultation\" (did you mean \"pageCount\"?)")) {
            try s.run(answers: ["service": .text("website"), "pageCont": .integer(3)], now: 5)
        }
        #expect(throws: SessionError(.invalidArgs, "\"pageCount\" is a number field and takes a number")) {
            try s.run(answers: ["service": .text("website"), "pageCount": .text("twelve")], now: 5)
        }
        #expect(throws: SessionError(.invalidArgs, "\"shop\" is not an option of \"service\"")) {
            try s.run(answers: ["service": .text("shop")], now: 5)
        }
        #expect(s.currentStepID == "service" && s.record.answers.isEmpty && s.record.revision == 0)
    }

    @Test("it never submits: a flow without Review stops on its last step, finished, and Submit sends")
    func neverSubmits() throws {
        var s = try Fixture.session(Fixture.example("survey"))
        let answers: [String: AnswerValue] = [
            "satisfaction": .text("satisfied"), "features": .list(["calendar"]), "heardFrom": .text("friend"),
            "name": .text("Ada"),
        ]
        guard case .ready = try s.run(answers: answers, now: 5) else {
            Issue.record("expected to be ready")
            return
        }
        #expect(s.currentStepID == "source" && s.state == .editing)
        #expect(s.continueLabel == "Send answers")
        guard case .run(let request) = try s.beginSubmit(now: 6) else {
            Issue.record("Submit did not send")
            return
        }
        #expect(request.submission.answers["name"] == .text("Ada"))
        try s.finishSubmit(receipt: SubmitReceipt(), now: 7)
        #expect(s.currentStep().body == "Thank you, Ada!", "the survey thanks the person by name")
    }

    @Test("what GetAnswers gives (computed values included) drives a new session to the same answers")
    func roundTrip() throws {
        var first = try consultation()
        let answers = Self.contact.merging(["service": .text("website"), "pageCount": .integer(12), "phone": .text("+49 30 1234")]) { a, _ in a }
        _ = try first.run(answers: answers, now: 5)
        let written = first.answersOnPath(includeSecure: false)
        #expect(written["estimate"] == .integer(1440))
        var second = try consultation()
        guard case .ready = try second.run(answers: written, now: 5) else {
            Issue.record("the written answers did not drive a session")
            return
        }
        #expect(second.answersOnPath(includeSecure: false) == written)
    }

    @Test("plugin validators run on the way: a refused value stops the run there")
    func pluginChecks() async throws {
        var s = try Fixture.session(Fixture.example("registration"))
        let plugins = FakeValidator()
        let answers: [String: AnswerValue] = ["username": .text("taken"), "email": .text("ada@example.org")]
        guard case .stopped(let step, let errors) = try await s.run(answers: answers, now: 5, validating: plugins) else {
            Issue.record("expected to stop")
            return
        }
        #expect(step == s.flow.steps[0].id)
        #expect(errors["username"] == "That name is taken.")
        #expect(await plugins.fieldCalls.contains("flowd.username-available:taken"))
    }
}
