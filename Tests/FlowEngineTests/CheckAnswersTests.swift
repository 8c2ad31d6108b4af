import FlowKit
import Testing

@testable import FlowEngine

/// `checkAnswers`: what `setAnswers` would reply, with the session untouched.
@Suite struct CheckAnswersTests {
    /// Every case is checked against a copy that really sets the answers.
    func expectSameAsSetAnswers(
        _ session: FlowSession, _ answers: [String: AnswerValue], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let before = session.record
        var setter = session
        let set: Result<SetAnswersResult, SessionError>
        do { set = .success(try setter.setAnswers(answers, now: 99)) } catch { set = .failure(error) }
        let check: Result<AnswerCheck, SessionError>
        do { check = .success(try session.checkAnswers(answers, now: 99)) } catch { check = .failure(error) }
        switch (set, check) {
        case (.success(let s), .success(let c)):
            #expect(c.errors == s.errors, sourceLocation: sourceLocation)
            #expect(c.checks.map(\.description) == s.checks.map(\.description), sourceLocation: sourceLocation)
            #expect(c.checks.map(\.context.answers) == s.checks.map(\.context.answers), sourceLocation: sourceLocation)
        case (.failure(let s), .failure(let c)):
            #expect(c == s, sourceLocation: sourceLocation)
        default:
            Issue.record("setAnswers gave \(set), checkAnswers \(check)", sourceLocation: sourceLocation)
        }
        #expect(session.record == before, "the record changed", sourceLocation: sourceLocation)
    }

    @Test("the same errors and refusals as SetAnswers, and the session untouched")
    func sameAsSetAnswers() throws {
        var s = try Fixture.session(Fixture.example("registration"))
        try expectSameAsSetAnswers(s, ["username": .text("No")])
        try expectSameAsSetAnswers(s, ["username": .text("ada"), "email": .text("not an address")])
        try expectSameAsSetAnswers(s, ["email": .text("")])
        try expectSameAsSetAnswers(s, [:])
        // Refusals: a field of another step, a wrong type, an unknown key.
        try expectSameAsSetAnswers(s, ["password": .text("x")])
        try expectSameAsSetAnswers(s, ["email": .integer(3)])
        try expectSameAsSetAnswers(s, ["nope": .text("x")])
        // Errors already shown stay in the reply, as in SetAnswers.
        _ = try s.setAnswers(["email": .text("bad")], now: 1)
        try expectSameAsSetAnswers(s, ["username": .text("ok_name")])
        // A step with a cross-field rule and a secure value.
        _ = s.applyPluginResults(try s.setAnswers(["username": .text("ada"), "email": .text("a@b.example")], now: 2).checks
            .map { PluginCheckResult(check: $0, outcome: .accepted) })
        try s.next()
        try expectSameAsSetAnswers(s, ["password": .text("correct horse"), "confirmPassword": .text("correct hors")])
        try expectSameAsSetAnswers(s, ["confirmPassword": .text("x")])
        #expect(!s.holdsSecureAnswers, "a checked password is not kept")
        // Settled or submitting: refused as SetAnswers is.
        var r = try branchyAtReview()
        _ = try r.beginSubmit(now: 1)
        try expectSameAsSetAnswers(r, ["email": .text("a@b.example")])
        try r.finishSubmit(receipt: SubmitReceipt(), now: 2)
        try expectSameAsSetAnswers(r, ["email": .text("a@b.example")])
    }

    @Test("nothing about the session changes: not the record, the revision, the time, the state or the finished steps")
    func untouched() throws {
        var s = try branchyFailedOnReview()
        let before = s.record
        #expect(throws: SessionError(.invalidArgs, "\"email\" is not a field of the current step (review)")) {
            _ = try s.checkAnswers(["email": .text("")], now: 3)
        }
        #expect(try s.checkAnswers([:], now: 3).errors.isEmpty)
        #expect(s.record == before, "still failed, the error kept")
        try s.goTo("contact", now: 4)
        let atContact = s.record
        let cleared = try s.checkAnswers(["email": .text("")], now: 5)
        #expect(cleared.errors == ["email": "This field is required."])
        #expect(s.record == atContact)
        #expect(s.record.revision == atContact.revision && s.record.updatedAt == 4)
        #expect(s.review().groups.allSatisfy { $0.finished })
        #expect(before.state == .failed && s.state == .editing)
    }

    @Test("plugin checks: the same requests; their results give the final errors without touching the session")
    func pluginChecks() async throws {
        var s = try Fixture.session(Fixture.example("registration"))
        let before = s.record
        let check = try s.checkAnswers(["username": .text("taken")], now: 1)
        #expect(check.checks.map(\.validator) == ["flowd.username-available"])
        #expect(check.checks.first?.fieldID == "username")
        #expect(check.checks.first?.context.answers["username"] == .text("taken"))
        let errors = check.errors(applying: check.checks.map { PluginCheckResult(check: $0, outcome: .rejected("That name is taken.")) })
        #expect(errors == ["username": "That name is taken."])
        #expect(s.currentErrors().isEmpty)
        #expect(s.record == before)
        // In one call, with a validator.
        let fake = FakeValidator()
        #expect(try await s.checkAnswers(["username": .text("taken")], now: 2, validating: fake) == ["username": "That name is taken."])
        #expect(try await s.checkAnswers(["username": .text("boom")], now: 3, validating: fake) == ["username": "Couldn't check this value."])
        #expect(try await s.checkAnswers(["username": .text("No")], now: 4, validating: fake) == ["username": "Enter at least 3 characters."])
        #expect(await fake.fieldCalls == ["flowd.username-available:taken", "flowd.username-available:boom"])
        #expect(s.record == before)
        // The same as SetAnswers with the same validator.
        let other = FakeValidator()
        #expect(try await s.setAnswers(["username": .text("taken")], now: 5, validating: other) == ["username": "That name is taken."])
    }
}
